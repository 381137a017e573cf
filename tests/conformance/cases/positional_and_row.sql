-- Positional INSERT without aliases, nested ROW field access, SIMILAR TO.
CREATE TABLE src (
  v STRING,
  info ROW<name STRING, age INT>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  v STRING,
  n INT,
  name STRING,
  age INT,
  sim BOOLEAN
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT v, TRY_CAST(v AS INT), info.name, src.info.age, v SIMILAR TO '[0-9]+' FROM src;
