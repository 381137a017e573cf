-- Two INSERTs in one statement set, reading the same topic.
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

CREATE TABLE big (
  id INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("big") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

CREATE TABLE small (
  id INT
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("small") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

EXECUTE STATEMENT SET BEGIN
INSERT INTO big SELECT id FROM src WHERE amount >= 10;
INSERT INTO small SELECT id FROM src WHERE amount < 10;
END;
