"""Flink-style option declarations (ConfigOption, connector and format factories), validation and docs."""
