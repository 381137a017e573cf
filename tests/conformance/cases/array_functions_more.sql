-- More array functions over arrays with NULL elements, empty and NULL arrays: ARRAY_SLICE (inclusive 1-based offsets, 0 as the start, negative from the end, out of range), ARRAY_REMOVE of NULL, ARRAY_APPEND / ARRAY_PREPEND to a NULL array, ARRAY_CONTAINS with NULL elements, ARRAY_SORT with NULLs, descending and NULLs first or last.
CREATE TABLE src (
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
  arr ARRAY<INT>,
  slice_2_3 ARRAY<INT>,
  slice_end ARRAY<INT>,
  slice_zero ARRAY<INT>,
  slice_from_3 ARRAY<INT>,
  slice_backwards ARRAY<INT>,
  slice_before_start ARRAY<INT>,
  removed_null ARRAY<INT>,
  removed_one ARRAY<INT>,
  appended ARRAY<INT>,
  prepended ARRAY<INT>,
  has_two BOOLEAN,
  has_null BOOLEAN,
  sorted ARRAY<INT>,
  sorted_desc ARRAY<INT>,
  sorted_desc_nulls_first ARRAY<INT>,
  sorted_nulls_last ARRAY<INT>
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst SELECT
  arr,
  ARRAY_SLICE(arr, 2, 3),
  ARRAY_SLICE(arr, -2, -1),
  ARRAY_SLICE(arr, 0, 2),
  ARRAY_SLICE(arr, 3),
  ARRAY_SLICE(arr, 3, 2),
  ARRAY_SLICE(arr, -10, 2),
  ARRAY_REMOVE(arr, CAST(NULL AS INT)),
  ARRAY_REMOVE(arr, 1),
  ARRAY_APPEND(arr, 9),
  ARRAY_PREPEND(arr, 0),
  ARRAY_CONTAINS(arr, 2),
  ARRAY_CONTAINS(arr, CAST(NULL AS INT)),
  ARRAY_SORT(arr),
  ARRAY_SORT(arr, FALSE),
  ARRAY_SORT(arr, FALSE, TRUE),
  ARRAY_SORT(arr, TRUE, FALSE)
FROM src;
