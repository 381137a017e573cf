-- Deduplication: the first row per key by processing time (ROW_NUMBER() ... = 1).
CREATE TABLE src (
  id INT,
  v STRING,
  pt AS PROCTIME()
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
  v STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT id, v FROM (
  SELECT id, v, ROW_NUMBER() OVER (PARTITION BY id ORDER BY pt ASC) AS rn FROM src
) WHERE rn = 1;
