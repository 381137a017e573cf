"""The quickstart as a notebook runs it: a SparkSession, `connector.install`, then nothing but `spark.sql`.

    kafka-sql broker start
    kafka-sql produce quickstart_orders sql/examples/quickstart_orders.jsonl --partitions 2 --key-field id
    python sql/examples/quickstart_notebook.py [BOOTSTRAP]

Each block below is one notebook cell.
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers run this interpreter
from pyspark.sql import SparkSession

import connector

brokers = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9092"
# Shuffle partitions as many as cores: Spark's default 200 makes a windowed query on 2 cores run 200 state tasks
# per micro-batch (a checkpoint keeps the number it started with).
spark = (
    SparkSession.builder.master("local[2]")
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.sql.shuffle.partitions", "2")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("WARN")
connector.install(spark, variables={"brokers": brokers})

# The pipeline file, as it is: SET, CREATE TABLE and the statement set. Its source is bounded, so the call
# returns when both INSERTs have read everything (the print sinks show their rows meanwhile).
queries = spark.sql(Path(__file__).with_name("quickstart.sql").read_text())
for query in queries:
    rows = connector.records_read(query)  # Spark's numInputRows also counts the end of the bounded input
    print(f"{query.name}: finished, {rows} input rows")

# The pipeline's tables are Spark tables too.
spark.sql("SHOW TABLES").show()
spark.sql("DESCRIBE orders").show()

# A pipeline statement and Spark SQL, one after the other.
spark.sql("CREATE TABLE big_orders WITH ('connector' = 'print') LIKE orders (EXCLUDING OPTIONS)")
spark.sql("DESCRIBE big_orders").show()
spark.sql("SELECT c, COUNT(*) AS n FROM VALUES ('alice'), ('bob'), ('alice') AS t(c) GROUP BY c ORDER BY c").show()
