"""Formats, one module each, found through the registry in this package."""
