-- CROSS JOIN UNNEST of an array column: one row per element.
CREATE TABLE src (
  id INT,
  tags ARRAY<STRING>
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
  tag STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT id, tag FROM src CROSS JOIN UNNEST(tags) AS t(tag);
