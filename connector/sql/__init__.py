"""The SQL front end, by layer: `template` (Jinja2 rendering), `dialect` (the Flink sqlglot dialect and the script's
statements), `validate` (semantic checks) and `rewrite` (Flink expressions as Spark SQL); `frontend` runs the first
three for every entry point. The catalog model is `connector.catalog`; query and operator planning `connector.planning`.
"""
