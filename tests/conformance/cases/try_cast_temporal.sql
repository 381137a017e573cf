-- TRY_CAST, TO_TIMESTAMP and TO_DATE of date and time text: NULL instead of a failure, fractions kept.
CREATE TABLE src (
  s STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  s STRING,
  as_ts TIMESTAMP(3),
  as_date DATE,
  to_ts TIMESTAMP(3),
  to_date DATE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT s, TRY_CAST(s AS TIMESTAMP(3)), TRY_CAST(s AS DATE), TO_TIMESTAMP(s), TO_DATE(s) FROM src;
