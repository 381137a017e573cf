-- ROW values built in the query: a field of CAST(ROW(...) AS ROW<...>), of ROW(...) by its EXPR$n name, nested ROW values written to a ROW sink column.
CREATE TABLE src (id BIGINT, name STRING, city STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (id BIGINT, x BIGINT, y STRING, first_field BIGINT, r ROW<a BIGINT, b ROW<c STRING>>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE VIEW v AS
SELECT id, CAST(ROW(id * 10, name) AS ROW<x BIGINT, y STRING>) AS pair, ROW(id, city) AS anon FROM src;

INSERT INTO dst SELECT id, pair.x, pair.y, anon.EXPR$0, ROW(id, ROW(anon.EXPR$1)) FROM v WHERE pair.x > 10;
