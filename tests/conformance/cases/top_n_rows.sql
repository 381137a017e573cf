-- Top-N keyed by rank: the three cheapest items per shop (NULL prices first, ties by name), and a global Top-2 without PARTITION BY (ties in arrival order), as final upsert-kafka tables.
CREATE TABLE src (
  shop STRING,
  item STRING,
  price DECIMAL(10, 2)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE cheapest (
  shop STRING,
  rownum BIGINT,
  item STRING,
  price DECIMAL(10, 2),
  PRIMARY KEY (shop, rownum) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("cheapest") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE dearest (
  pos BIGINT,
  shop STRING,
  item STRING,
  price DECIMAL(10, 2),
  PRIMARY KEY (pos) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("dearest") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO cheapest SELECT shop, rownum, item, price FROM (
  SELECT shop, item, price, ROW_NUMBER() OVER (PARTITION BY shop ORDER BY price ASC, item ASC) AS rownum
  FROM src WHERE item <> 'ignored'
) WHERE rownum <= 3;
INSERT INTO dearest SELECT pos, shop, item, price FROM (
  SELECT *, ROW_NUMBER() OVER (ORDER BY price DESC) AS pos FROM src
) WHERE pos < 3;
END;
