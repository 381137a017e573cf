-- Window Top-N over HOP windows ranked on the rows themselves: the 2 biggest orders of each 2-minute window sliding by 1 minute, a NULL amount last (DESC), the rank not selected; another condition filters the ranked rows.
CREATE TABLE src (
  user_id STRING,
  item STRING,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);


CREATE TABLE dst (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  user_id STRING,
  item STRING,
  amount INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT window_start, window_end, user_id, item, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY amount DESC) AS rownum
  FROM TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '2' MINUTE))
) WHERE rownum <= 2 AND item <> 'cap';
