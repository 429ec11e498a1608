-- streamlens trace store, schema version 2 (docs/store.md).
-- Compiled into the binary as kSchemaSql (core/CMakeLists.txt, schema_sql.cc.in).
-- Version 2 stores events packed in event_chunks (event_chunk.cc) rather than
-- one row each: a million events insert in well under a second. Opening a
-- version 1 file for writing adds event_chunks; its runs stay readable.
-- Enumerations are stored as integers:
--   stream_kind: 0 compute, 1 communication
--   kind: 0 gemm, 1 collective, 2 elementwise, 3 copy, 4 memset, 5 wait, 6 other

CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS programs (
  id   INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  text TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE
);

CREATE TABLE IF NOT EXISTS runs (
  id           INTEGER PRIMARY KEY,
  program_id   INTEGER REFERENCES programs(id),
  name         TEXT NOT NULL DEFAULT '',
  backend      TEXT NOT NULL,
  device_model TEXT NOT NULL DEFAULT '',
  num_devices  INTEGER NOT NULL DEFAULT 1,
  status       TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed')),
  makespan_ns  INTEGER NOT NULL DEFAULT 0,
  config_json  TEXT NOT NULL DEFAULT '{}',
  created_at   TEXT NOT NULL,
  event_count  INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS stream_assignments (
  run_id        INTEGER NOT NULL REFERENCES runs(id),
  position      INTEGER NOT NULL,
  instruction   TEXT NOT NULL,
  stream        INTEGER NOT NULL,
  overridden    INTEGER NOT NULL,
  async_capable INTEGER NOT NULL,
  PRIMARY KEY (run_id, position)
) WITHOUT ROWID;

-- Names interned once per database; events refer to them by id.
CREATE TABLE IF NOT EXISTS strings (
  id    INTEGER PRIMARY KEY,
  value TEXT NOT NULL UNIQUE
);

-- seq is the event's position in the order the run appended it; dependencies
-- refer to it. One row per chunk of up to 2048 events of one track (device,
-- stream) from one append, sorted by (start_ns, seq) inside the chunk; the
-- index returns chunks in timeline order, so loading a run is one range scan.
CREATE TABLE IF NOT EXISTS event_chunks (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL,
  device      INTEGER NOT NULL,
  stream      INTEGER NOT NULL,
  start_ns    INTEGER NOT NULL,  -- first start in the chunk
  end_ns      INTEGER NOT NULL,  -- latest end in the chunk
  first_seq   INTEGER NOT NULL,  -- smallest seq in the chunk
  last_seq    INTEGER NOT NULL,  -- largest seq in the chunk
  event_count INTEGER NOT NULL,
  data        BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS event_chunks_timeline ON event_chunks (run_id, device, stream, start_ns, first_seq);

-- Schema version 1 kept one row per event here. Read for runs recorded then,
-- never written now.
CREATE TABLE IF NOT EXISTS events (
  run_id         INTEGER NOT NULL,
  seq            INTEGER NOT NULL,
  device         INTEGER NOT NULL,
  stream         INTEGER NOT NULL,
  stream_kind    INTEGER NOT NULL,
  kind           INTEGER NOT NULL,
  name_id        INTEGER NOT NULL,
  instruction_id INTEGER NOT NULL,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  bytes          INTEGER NOT NULL,
  flops          INTEGER NOT NULL,
  correlation    INTEGER NOT NULL,
  iteration      INTEGER NOT NULL,
  PRIMARY KEY (run_id, device, stream, start_ns, seq)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS dependencies (
  run_id   INTEGER NOT NULL,
  from_seq INTEGER NOT NULL,
  to_seq   INTEGER NOT NULL,
  PRIMARY KEY (run_id, from_seq, to_seq)
) WITHOUT ROWID;

-- Odd or dropped records, by name (STYLE item 5).
CREATE TABLE IF NOT EXISTS counters (
  run_id      INTEGER NOT NULL,
  name        TEXT NOT NULL,
  value       INTEGER NOT NULL,
  description TEXT NOT NULL,
  PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
