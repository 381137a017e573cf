"""Jinja2 templating of pipeline files, with every position mapped back to the file as written."""
