-- An interval LEFT JOIN on watermarked time columns: unmatched rows are NULL-padded once the watermark passes.
CREATE TABLE a (
  id INT,
  a STRING,
  t TIMESTAMP(3),
  WATERMARK FOR t AS t - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("a") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE b (
  id INT,
  b STRING,
  t TIMESTAMP(3),
  WATERMARK FOR t AS t - INTERVAL '5' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("b") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  id INT,
  a STRING,
  b STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT a.id, a.a, b.b FROM a LEFT JOIN b ON a.id = b.id AND b.t BETWEEN a.t AND a.t + INTERVAL '1' HOUR;
