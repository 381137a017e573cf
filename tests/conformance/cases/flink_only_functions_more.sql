-- Flink functions Spark has no function for: IS_ALPHA, IS_DIGIT, IS_DECIMAL (any script's digits, Java's number syntax), INET_ATON / INET_NTOA, JSON_QUOTE / JSON_UNQUOTE (escapes, non-ASCII, values that are no JSON string), ELEMENT, RAND_INTEGER's range; NULL inputs. Characters beyond U+FFFF go to a sink of their own that writes none of them as they are: Flink's json format writes such a character as two escapes (\ud835\udc00), kafka-sql as UTF-8.
CREATE TABLE src (
  s STRING,
  ip STRING,
  n BIGINT,
  arr ARRAY<INT>
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
  alpha BOOLEAN,
  digits BOOLEAN,
  num BOOLEAN,
  quoted STRING,
  unquoted STRING,
  ip STRING,
  ip_number BIGINT,
  ip_text STRING,
  sole INT,
  in_range BOOLEAN
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE beyond_bmp (
  ip STRING,
  alpha BOOLEAN,
  digits BOOLEAN,
  num BOOLEAN,
  quoted STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("beyond_bmp") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO beyond_bmp SELECT ip, IS_ALPHA(s), IS_DIGIT(s), IS_DECIMAL(s), JSON_QUOTE(s) FROM src WHERE ip LIKE '11.%';

INSERT INTO dst SELECT
  s,
  IS_ALPHA(s),
  IS_DIGIT(s),
  IS_DECIMAL(s),
  JSON_QUOTE(s),
  JSON_UNQUOTE(s),
  ip,
  INET_ATON(ip),
  INET_NTOA(n),
  ELEMENT(arr),
  RAND_INTEGER(10) BETWEEN 0 AND 9 AND RAND_INTEGER(7, 3) BETWEEN 0 AND 2
FROM src
WHERE ip IS NULL OR ip NOT LIKE '11.%';
