-- streamlens trace store, schema version 1 (DESIGN section 6).
-- Mirrored byte for byte by kSchemaSql in schema.cc (a test checks it).
-- Enumerations are stored as integers to keep a million events small:
--   events.stream_kind: 0 compute, 1 communication
--   events.kind: 0 gemm, 1 collective, 2 elementwise, 3 copy, 4 memset, 5 wait, 6 other
-- The view events_readable spells them out for people using the sqlite3 shell.

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
-- refer to it. The primary key is the (run_id, device, stream, start_ns) index:
-- the table is stored in timeline order, so loading a run is one range scan.
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

CREATE VIEW IF NOT EXISTS events_readable AS
SELECT e.run_id, e.seq, e.device, e.stream,
       CASE e.stream_kind WHEN 0 THEN 'compute' ELSE 'communication' END AS stream_kind,
       CASE e.kind WHEN 0 THEN 'gemm' WHEN 1 THEN 'collective' WHEN 2 THEN 'elementwise'
                   WHEN 3 THEN 'copy' WHEN 4 THEN 'memset' WHEN 5 THEN 'wait' ELSE 'other' END AS kind,
       n.value AS name, i.value AS instruction, e.start_ns, e.end_ns,
       e.end_ns - e.start_ns AS duration_ns, e.bytes, e.flops, e.correlation, e.iteration
FROM events e
JOIN strings n ON n.id = e.name_id
JOIN strings i ON i.id = e.instruction_id;
