-- The datagen connector: generated rows, here 100 per second, bounded at 1000.
CREATE TABLE generated (
  id BIGINT,
  score INT,
  name STRING
) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '100',
  'number-of-rows' = '1000',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '1000',
  'fields.score.min' = '0',
  'fields.score.max' = '100',
  'fields.name.length' = '8'
);

CREATE TABLE sink (id BIGINT, score INT) WITH ('connector' = 'blackhole');

INSERT INTO sink SELECT id, score FROM generated WHERE score > 50;
