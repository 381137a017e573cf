-- ROW fields at any depth: by column (info.addr.city), by table or alias (src.info..., s.info.addr.geo.lat), quoted names, a table and its ROW column of one name, in SELECT and WHERE.
CREATE TABLE src (
  id BIGINT,
  info ROW<name STRING, addr ROW<city STRING, zip STRING, geo ROW<lat DOUBLE, `level` INT>>>,
  sub_json ROW<sub_json ROW<sub_name STRING>>,
  `user` ROW<`name` STRING, `dateTime` TIMESTAMP(3)>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE addr (
  id BIGINT,
  addr ROW<city STRING, zip STRING>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("addr") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  id BIGINT, name STRING, city STRING, zip STRING, lat DOUBLE, lvl INT, sub_name STRING, user_name STRING, seen TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE addresses (id BIGINT, city STRING, zip STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("addresses") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT s.id, info.name, info.addr.city, s.info.addr.zip, s.info.addr.geo.lat, info.addr.geo.`level`,
  sub_json.sub_json.sub_name, `user`.`name`, s.`user`.`dateTime`
FROM src AS s
WHERE info.addr.geo.`level` > 0 OR s.info.addr.city IS NULL;

INSERT INTO addresses
SELECT id, addr.city, addr.addr.zip FROM addr WHERE addr.city <> 'Bergen';
