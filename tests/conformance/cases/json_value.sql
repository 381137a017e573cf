-- JSON_VALUE: scalars only (an object or array is NULL), strict and lax path modes, defaults ON EMPTY / ON ERROR, RETURNING.
CREATE TABLE src (
  j STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  a STRING,
  obj STRING,
  arr STRING,
  missing_lax STRING,
  missing_default STRING,
  n INT,
  nested STRING,
  ex BOOLEAN
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT JSON_VALUE(j, '$.a'), JSON_VALUE(j, '$.o'), JSON_VALUE(j, '$.arr'), JSON_VALUE(j, 'lax $.nope'),
  JSON_VALUE(j, '$.nope' DEFAULT 'dflt' ON EMPTY), JSON_VALUE(j, '$.n' RETURNING INT), JSON_VALUE(j, '$.o.x'),
  JSON_EXISTS(j, '$.a') FROM src;
