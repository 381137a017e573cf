-- Top-N over a GROUP BY: the two best-selling items per category by their running SUM, keyed by rank, as a final table in upsert-kafka; an item whose total grows overtakes others (its old total retracted from the ranking), and the two categories with the most orders (a Top-2 without PARTITION BY) by COUNT.
CREATE TABLE sales (
  category STRING,
  item STRING,
  amount INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("sales") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE best_items (
  category STRING,
  rn BIGINT,
  item STRING,
  total INT,
  PRIMARY KEY (category, rn) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("best_items") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE best_category (
  rn BIGINT,
  category STRING,
  orders BIGINT,
  PRIMARY KEY (rn) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{ var("best_category") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'key.format' = 'json',
  'value.format' = 'json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO best_items SELECT category, rn, item, total FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY category ORDER BY total DESC, item) AS rn
  FROM (SELECT category, item, SUM(amount) AS total FROM sales GROUP BY category, item)
) WHERE rn <= 2;
INSERT INTO best_category SELECT rn, category, orders FROM (
  SELECT category, orders, ROW_NUMBER() OVER (ORDER BY orders DESC, category) AS rn
  FROM (SELECT category, COUNT(*) AS orders FROM sales WHERE amount > 0 GROUP BY category)
) WHERE rn <= 2;
END;
