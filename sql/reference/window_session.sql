-- Window TVF SESSION: a session per item closes after a 5-minute gap.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  item STRING,
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'bids',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);

CREATE TABLE bid_totals (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  item STRING,
  total_price DECIMAL(10, 2)
) WITH ('connector' = 'print');

INSERT INTO bid_totals
SELECT window_start, window_end, item, SUM(price) AS total_price
FROM TABLE(SESSION(TABLE bids PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))
GROUP BY window_start, window_end, item;
