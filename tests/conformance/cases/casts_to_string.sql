-- Values cast to STRING, in Flink's text forms.
CREATE TABLE src (
  flag BOOLEAN,
  ts TIMESTAMP(3),
  ts0 TIMESTAMP(0),
  dc DECIMAL(10, 2),
  d DOUBLE,
  f FLOAT,
  dt DATE,
  n BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  flag_s STRING,
  ts_s STRING,
  ts0_s STRING,
  dec_s STRING,
  d_s STRING,
  f_s STRING,
  dt_s STRING,
  n_s STRING,
  concat_s STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT CAST(flag AS STRING), CAST(ts AS STRING), CAST(ts0 AS STRING), CAST(dc AS STRING),
  CAST(d AS STRING), CAST(f AS STRING), CAST(dt AS STRING), CAST(n AS STRING), 'n=' || CAST(n AS STRING) FROM src;
