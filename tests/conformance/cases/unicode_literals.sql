-- Unicode string literals: U&'\0041' escapes, a surrogate pair (one character), the escape character doubled, UESCAPE, a signed four-character escape, a quote inside.
CREATE TABLE src (
  id INT,
  s STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("src") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json'
);

CREATE TABLE dst (
  id INT,
  accented STRING,
  control_length INT,
  escaped STRING,
  emoji_length INT,
  signed STRING,
  quoted STRING,
  split_at STRING
) WITH (
  'connector' = 'kafka',
  'topic' = '{{ var("dst") }}',
  'properties.bootstrap.servers' = '{{ var("brokers") }}',
  'format' = 'json'
);

INSERT INTO dst
SELECT
  id,
  CONCAT(s, U&'\0041\00e9'),
  CHAR_LENGTH(CONCAT(s, U&'\0001')),
  CONCAT(U&'!0041!!' UESCAPE '!', s, U&'\\'),
  CHAR_LENGTH(U&'\D83D\DE00'),
  U&'a\+01F600b',
  u&'\0041''s',
  SPLIT_INDEX(s, U&'\002C', 1)
FROM src;
