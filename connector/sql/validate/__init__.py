"""Semantic checks of a loaded pipeline: columns, types, calls, ROW fields, changes."""
