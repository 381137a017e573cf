-- Deduplication that updates its key's row, into upsert-kafka: the last row per key by processing time (ORDER BY proctime DESC), and the first and the last row per key by event time (ORDER BY rowtime ASC / DESC), as Flink's final tables.
CREATE TABLE src (
  id INT,
  v STRING,
  ts TIMESTAMP(3),
  pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '1' HOUR
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE latest (id INT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("latest") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE earliest_event (id INT, v STRING, ts TIMESTAMP(3), PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("earliest_event") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE latest_event (id INT, v STRING, ts TIMESTAMP(3), PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("latest_event") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO latest SELECT id, v FROM (
  SELECT id, v, ROW_NUMBER() OVER (PARTITION BY id ORDER BY pt DESC) AS rn FROM src
) WHERE rn = 1;
INSERT INTO earliest_event SELECT id, v, ts FROM (
  SELECT id, v, ts, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts ASC) AS rn FROM src
) WHERE rn = 1;
INSERT INTO latest_event SELECT id, v, ts FROM (
  SELECT id, v, ts, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts DESC) AS rn FROM src
) WHERE rn = 1;
END;
