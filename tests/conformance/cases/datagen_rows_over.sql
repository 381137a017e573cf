-- A datagen table bounded by 'number-of-rows' ends with the final watermark: an event-time OVER emits every row.
CREATE TABLE src (
  id BIGINT,
  grp AS id % 3,
  ts AS TO_TIMESTAMP_LTZ(id * 1000, 3),
  WATERMARK FOR ts AS ts
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '50',
  'number-of-rows' = '20',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '1000'
);

CREATE TABLE dst (
  id BIGINT,
  grp BIGINT,
  last_three_sum BIGINT,
  last_three_count BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT id, grp, SUM(id) OVER w, COUNT(*) OVER w
FROM src
WINDOW w AS (PARTITION BY grp ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);
