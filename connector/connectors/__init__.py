"""Connectors, one package each, found through the registry in this package."""
