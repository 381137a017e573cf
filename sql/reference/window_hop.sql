-- Window TVF HOP: 10-minute windows sliding every 5 minutes (slide before size).
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
  total_price DECIMAL(10, 2)
) WITH ('connector' = 'print');

INSERT INTO bid_totals
SELECT window_start, window_end, SUM(price) AS total_price
FROM TABLE(HOP(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;
