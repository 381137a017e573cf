"""The catalog model of one pipeline file: tables, views, functions and inserts, loaded from statements."""
