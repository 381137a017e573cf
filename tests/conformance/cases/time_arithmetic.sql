-- Time arithmetic: TIMESTAMPADD, TIMESTAMPDIFF, DATE + INTERVAL, DATE_FORMAT patterns, DAYOFWEEK, DAYOFYEAR, QUARTER, WEEK.
CREATE TABLE src (
  ts TIMESTAMP(3),
  t2 TIMESTAMP(3),
  dt DATE
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  plus_days TIMESTAMP(3),
  diff_min INT,
  diff_day INT,
  next_month DATE,
  fmt STRING,
  dow BIGINT,
  doy BIGINT,
  q BIGINT,
  wk BIGINT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT TIMESTAMPADD(DAY, 3, ts), TIMESTAMPDIFF(MINUTE, ts, t2), TIMESTAMPDIFF(DAY, ts, t2),
  dt + INTERVAL '1' MONTH, DATE_FORMAT(ts, 'yyyy/MM/dd EEE HH:mm:ss.SSS'), DAYOFWEEK(dt), DAYOFYEAR(dt), QUARTER(dt), WEEK(dt) FROM src;
