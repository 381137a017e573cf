"""Formats, one module each, found through the registry in this package.

Validating a pipeline imports every format module for its declaration (options, rules, codec), and needs no Spark:
a format module imports pyspark inside the functions that build Spark columns and types (names its annotations use
under TYPE_CHECKING), as `connector.formats.payload` does for what the formats share.
"""
