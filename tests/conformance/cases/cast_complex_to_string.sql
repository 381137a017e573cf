-- CAST of ARRAY, MAP and ROW columns to STRING: Flink's text ({k=v}, (a, b), NULL, TRUE), nested values, NULL elements, fields and values, a NULL value (maps of one key: a map's order is Flink's hash order).
CREATE TABLE src (
  id INT,
  ints ARRAY<INT>,
  texts ARRAY<STRING>,
  flags ARRAY<BOOLEAN>,
  amounts ARRAY<DECIMAL(5, 2)>,
  m MAP<STRING, INT>,
  nested MAP<STRING, ARRAY<DOUBLE>>,
  r ROW<a INT, b STRING>,
  rows_ ARRAY<ROW<x BOOLEAN, t TIMESTAMP(3)>>,
  deep ROW<inner_ ROW<n BIGINT>, tags ARRAY<STRING>>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  id INT,
  ints STRING,
  texts STRING,
  flags STRING,
  amounts STRING,
  m STRING,
  nested STRING,
  r STRING,
  rows_ STRING,
  deep STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT
  id,
  CAST(ints AS STRING),
  CAST(texts AS STRING),
  CAST(flags AS STRING),
  CAST(amounts AS STRING),
  CAST(m AS STRING),
  CAST(nested AS STRING),
  CAST(r AS STRING),
  CAST(rows_ AS STRING),
  CAST(deep AS STRING)
FROM src;
