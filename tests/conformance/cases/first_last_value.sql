-- FIRST_VALUE and LAST_VALUE in a GROUP BY skip NULLs (the first and last value that is not NULL), into upsert-kafka; a group of NULLs only has NULL.
CREATE TABLE src (
  k STRING,
  v INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  k STRING,
  first_v INT,
  last_v INT,
  PRIMARY KEY (k) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

INSERT INTO dst SELECT k, FIRST_VALUE(v), LAST_VALUE(v) FROM src GROUP BY k;
