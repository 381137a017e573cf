# Every entry point a user or CI needs. `make quickstart` and `make test` work on a fresh clone:
# they create .venv, install the project with its pinned dependencies, and fetch Kafka through mvn.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
BROKERS ?= 127.0.0.1:9092
# PYSPARK_PYTHON is left to kafka-sql, the test session and the benchmarks: each sets it to the interpreter running
# them (locally through connector.runtime.python_launcher, which spares every Python process Spark starts from
# compiling pyspark out of pyspark.zip).

.PHONY: setup test lint quickstart bench clean conformance-expected postgresql spark-functions flink-reserved flink-functions

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# compat mode puts the checkout on sys.path, so Spark also finds the top-level pyspark_* data source modules
	$(BIN)/pip install -q -e ".[dev]" --config-settings editable_mode=compat
	# An editable install compiles no bytecode; every Python process Spark starts would compile the package again.
	$(BIN)/python -m compileall -q connector pyspark_flink_kafka pyspark_flink_kafka_sink
	touch $@

setup: $(VENV)/.installed

lint: setup
	$(BIN)/ruff check connector tests bench pyspark_flink_kafka pyspark_flink_kafka_sink sql/examples
	$(BIN)/mypy

# The jdbc sink's tests start a real PostgreSQL server from Debian's package (connector/dev/postgres.py).
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
		(apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql)

test: lint postgresql
	$(BIN)/pytest

quickstart: setup
	$(BIN)/kafka-sql broker start --port 9092
	$(BIN)/kafka-sql produce quickstart_orders sql/examples/quickstart_orders.jsonl --bootstrap $(BROKERS) \
		--partitions 2 --key-field id --recreate
	rm -rf .kafka-sql/checkpoints/quickstart
	$(BIN)/kafka-sql run sql/examples/quickstart.sql --var brokers=$(BROKERS) --checkpoint-dir .kafka-sql/checkpoints

# Real Apache Flink's output for every conformance case (tests/conformance/cases/*.flink.json): PyFlink from PyPI in
# its own venv, Flink's Kafka SQL connector from Maven Central, the project's embedded broker. CASES=name ... for some.
# Then the table of cases in docs/conformance.md is written again.
FLINK_VENV := .flink-venv
$(FLINK_VENV)/.installed:
	$(PYTHON) -m venv $(FLINK_VENV)
	$(FLINK_VENV)/bin/pip install -q apache-flink==2.3.0
	touch $@

conformance-expected: setup $(FLINK_VENV)/.installed
	FLINK_PYTHON=$(abspath $(FLINK_VENV)/bin/python) $(BIN)/python tests/conformance/record_flink.py $(CASES)
	$(BIN)/python tests/conformance/table.py --document

# The words Flink's SQL parser reserves (connector/sql/dialect/flink_reserved.txt), asked of the parser of Flink's venv.
flink-reserved: setup $(FLINK_VENV)/.installed
	FLINK_PYTHON=$(abspath $(FLINK_VENV)/bin/python) $(BIN)/python tests/conformance/flink_reserved.py

# The functions Flink's SQL validator resolves (connector/sql/dialect/flink_functions.txt), asked of Flink's venv.
flink-functions: setup $(FLINK_VENV)/.installed
	FLINK_PYTHON=$(abspath $(FLINK_VENV)/bin/python) $(BIN)/python tests/conformance/flink_functions.py

# The Spark built-in functions `validate` knows (connector/sql/validate/spark_functions.txt), after a Spark upgrade.
spark-functions: setup
	$(BIN)/python -m connector.sql.validate.calls

bench: setup $(FLINK_VENV)/.installed
	FLINK_PYTHON=$(abspath $(FLINK_VENV)/bin/python) $(BIN)/python bench/run_all.py

clean:
	-$(BIN)/kafka-sql broker stop
	rm -rf .kafka-sql spark-warehouse
