-- Arrays and maps: CARDINALITY, element access (1-based, NULL past the end), ARRAY and MAP constructors, ARRAY_CONTAINS.
CREATE TABLE src (
  arr ARRAY<INT>,
  m MAP<STRING, INT>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  n INT,
  first_e INT,
  past_end INT,
  m_k INT,
  m_missing INT,
  built ARRAY<STRING>,
  contains_two BOOLEAN
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT CARDINALITY(arr), arr[1], arr[10], m['k'], m['nope'], ARRAY['a', 'b'], ARRAY_CONTAINS(arr, 2) FROM src;
