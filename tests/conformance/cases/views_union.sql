-- A view, UNION ALL of two filters, and a CTE.
CREATE TABLE src (
  id INT,
  amount INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE VIEW big AS SELECT id, amount FROM src WHERE amount >= 10;

CREATE TABLE dst (
  id INT,
  kind STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
WITH small AS (SELECT id, amount FROM src WHERE amount < 10)
SELECT id, 'big' FROM big UNION ALL SELECT id, 'small' FROM small;
