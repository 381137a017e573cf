-- REPLACE with an empty search string (the replacement between every character), OVERLAY from past the end, and DATE arithmetic that stays a DATE: TIMESTAMPADD by days and months, FLOOR and CEIL of a DATE to a month, written as text.
CREATE TABLE src (
  s STRING,
  p INT,
  d DATE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  s STRING,
  dashed STRING,
  replaced STRING,
  overlaid STRING,
  overlaid_one STRING,
  next_month STRING,
  next_day STRING,
  month_start STRING,
  month_end STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT
  s,
  REPLACE(s, '', '-'),
  REPLACE(s, 'l', '$1'),
  OVERLAY(s PLACING 'XY' FROM p),
  OVERLAY(s PLACING 'XY' FROM p FOR 1),
  CAST(TIMESTAMPADD(MONTH, 1, d) AS STRING),
  CAST(TIMESTAMPADD(DAY, 1, d) AS STRING),
  CAST(FLOOR(d TO MONTH) AS STRING),
  CAST(CEIL(d TO MONTH) AS STRING)
FROM src;
