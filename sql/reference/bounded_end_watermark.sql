-- The end of a bounded scan: as Flink emits a final watermark when bounded input ends, the watermark of a
-- bounded table with a WATERMARK moves to the end of time in its last micro-batch, and every open window fires
-- ('scan.bounded.end-watermark', default 'true'). With 'false' the windows the data has not closed stay open.
CREATE TABLE bids (
  bidtime TIMESTAMP(3),
  price DECIMAL(10, 2),
  WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = 'bids',
  'properties.bootstrap.servers' = '{{ var("brokers", "127.0.0.1:9092") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE bids_left_open WITH ('scan.bounded.end-watermark' = 'false') LIKE bids;

CREATE TABLE totals (window_start TIMESTAMP(3), window_end TIMESTAMP(3), total_price DECIMAL(10, 2))
  WITH ('connector' = 'print');

INSERT INTO totals
SELECT window_start, window_end, SUM(price)
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;

INSERT INTO totals
SELECT window_start, window_end, SUM(price)
FROM TABLE(TUMBLE(TABLE bids_left_open, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
GROUP BY window_start, window_end;
