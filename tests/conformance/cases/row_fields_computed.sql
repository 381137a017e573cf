-- ROW fields in computed columns and the watermark, views named like the ROW columns they read (as Nexmark's), a window TVF over a view's column.
CREATE TABLE events (
  event_type INT,
  person ROW<id BIGINT, name STRING, `dateTime` TIMESTAMP(3)>,
  bid ROW<auction BIGINT, price BIGINT, `dateTime` TIMESTAMP(3)>,
  `dateTime` AS CASE WHEN event_type = 0 THEN person.`dateTime` ELSE bid.`dateTime` END,
  doubled AS bid.price * 2,
  WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("events") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE people (id BIGINT, name STRING, `dateTime` TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("people") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE bid_windows (auction BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), bids BIGINT, top BIGINT, top2 BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("bid_windows") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE VIEW person AS SELECT person.id, person.name, `dateTime` FROM events WHERE event_type = 0;

CREATE VIEW bid AS SELECT bid.auction, bid.price, `dateTime`, doubled FROM events WHERE event_type = 2;

INSERT INTO people SELECT id, name, `dateTime` FROM person;

INSERT INTO bid_windows
SELECT auction, window_start, window_end, COUNT(*), MAX(price), MAX(doubled)
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;
