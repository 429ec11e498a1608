#include "core/trace/store/events_vtab.h"

// Built twice: into sl_trace_store against the linked SQLite, and into the
// loadable extension, where every sqlite3_* call goes through the host's
// sqlite3_api table (a second SQLite copy in one process would corrupt state).
#ifdef SL_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#else
#include <sqlite3.h>
#endif

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <algorithm>
#include <vector>

#include "core/trace/run_info.h"
#include "core/trace/store/event_chunk.h"
#include "core/trace/trace.h"

namespace sl::trace::store {
namespace {

enum Column {
  kRunId, kDevice, kStream, kStreamKind, kKind, kName, kInstruction, kStartNs, kEndNs, kDurNs,
  kBytes, kFlops, kCorrelation, kIteration, kStep,
};

constexpr const char* kDeclaration =
    "CREATE TABLE x(run_id INTEGER, device INTEGER, stream INTEGER, stream_kind TEXT, kind TEXT, name TEXT, "
    "instruction TEXT, start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, bytes INTEGER, flops INTEGER, "
    "correlation INTEGER, iteration INTEGER, step INTEGER)";

// idxNum bits: which equality constraints xFilter receives, in this order.
constexpr int kByRun = 1;
constexpr int kByDevice = 2;

struct EventsTable {
  sqlite3_vtab base{};  // first: SQLite casts between the two
  sqlite3* db = nullptr;
  std::string schema;   // where the store's tables live ("main")
};

// One scan: the chunks (then the schema-1 rows) matching the constraints.
struct EventsCursor {
  sqlite3_vtab_cursor base{};
  EventsTable* table = nullptr;
  sqlite3_stmt* chunks = nullptr;
  sqlite3_stmt* legacy = nullptr;   // schema-1 rows; null when there is no such table
  sqlite3_stmt* lookup = nullptr;   // strings by id
  sqlite3_stmt* run_config = nullptr;  // a run's config_json by id
  bool in_legacy = false;
  bool eof = true;
  int64_t run_id = 0;
  std::vector<Event> events;        // the current chunk
  std::vector<int64_t> seqs;
  size_t pos = 0;
  Event legacy_event;
  int64_t rowid = 0;
  // Interned names by id, filled as rows need them (ids are dense from 0).
  std::vector<std::string> strings;
  std::vector<uint8_t> string_state;  // 0 not looked up, 1 found, 2 missing
  std::string uncached;               // the last name with an id beyond the cache
  // Whether run `linked_run` was linked to its XLA module (its iteration is then the step).
  int64_t linked_run = -1;
  bool linked = false;
};

// Ids beyond this are looked up every time rather than cached in a vector.
constexpr uint32_t kMaxCachedStringId = 1u << 22;

void finalize(sqlite3_stmt** stmt) {
  sqlite3_finalize(*stmt);
  *stmt = nullptr;
}

int set_error(sqlite3_vtab* vtab, int rc, const std::string& message) {
  sqlite3_free(vtab->zErrMsg);
  vtab->zErrMsg = sqlite3_mprintf("%s", message.c_str());
  return rc;
}

int db_error(EventsCursor* c, int rc) {
  return set_error(&c->table->base, rc, std::string("streamlens events: ") + sqlite3_errmsg(c->table->db));
}

bool valid_schema_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char ch : name) {
    if (!(ch == '_' || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) return false;
  }
  return true;
}

bool table_exists(sqlite3* db, const std::string& schema, const char* name) {
  std::string sql = "SELECT 1 FROM \"" + schema + "\".sqlite_master WHERE type = 'table' AND name = ?1";
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) return false;
  sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
  bool found = sqlite3_step(stmt) == SQLITE_ROW;
  sqlite3_finalize(stmt);
  return found;
}

int connect(sqlite3* db, void*, int argc, const char* const* argv, sqlite3_vtab** out, char** error) {
  // argv: module, database of the virtual table, its name, then our arguments.
  std::string schema = argc > 3 ? argv[3] : "main";
  if (!valid_schema_name(schema)) {
    *error = sqlite3_mprintf("streamlens_events: '%s' is not a schema name", schema.c_str());
    return SQLITE_ERROR;
  }
  int rc = sqlite3_declare_vtab(db, kDeclaration);
  if (rc != SQLITE_OK) return rc;
  auto* table = new EventsTable;
  table->db = db;
  table->schema = std::move(schema);
  *out = &table->base;
  return SQLITE_OK;
}

int disconnect(sqlite3_vtab* vtab) {
  delete reinterpret_cast<EventsTable*>(vtab);
  return SQLITE_OK;
}

int best_index(sqlite3_vtab*, sqlite3_index_info* info) {
  int run = -1, device = -1;
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (!c.usable || c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (c.iColumn == kRunId) run = i;
    if (c.iColumn == kDevice) device = i;
  }
  int next = 1;
  info->idxNum = 0;
  double cost = 1e6;
  if (run >= 0) {
    info->aConstraintUsage[run].argvIndex = next++;
    info->aConstraintUsage[run].omit = 1;
    info->idxNum |= kByRun;
    cost /= 100;
  }
  if (device >= 0 && run >= 0) {  // the index leads with run_id: device alone would scan anyway
    info->aConstraintUsage[device].argvIndex = next++;
    info->aConstraintUsage[device].omit = 1;
    info->idxNum |= kByDevice;
    cost /= 4;
  }
  info->estimatedCost = cost;
  info->estimatedRows = static_cast<sqlite3_int64>(cost);
  return SQLITE_OK;
}

int open_cursor(sqlite3_vtab* vtab, sqlite3_vtab_cursor** out) {
  auto* c = new EventsCursor;
  c->table = reinterpret_cast<EventsTable*>(vtab);
  *out = &c->base;
  return SQLITE_OK;
}

int close_cursor(sqlite3_vtab_cursor* base) {
  auto* c = reinterpret_cast<EventsCursor*>(base);
  finalize(&c->chunks);
  finalize(&c->legacy);
  finalize(&c->lookup);
  finalize(&c->run_config);
  delete c;
  return SQLITE_OK;
}

// Loads the next chunk with events; false at the end of the chunks or on error (*rc).
bool load_chunk(EventsCursor* c, int* rc) {
  while (true) {
    int step = sqlite3_step(c->chunks);
    if (step == SQLITE_DONE) return false;
    if (step != SQLITE_ROW) {
      *rc = db_error(c, step);
      return false;
    }
    c->events.clear();
    c->seqs.clear();
    c->pos = 0;
    c->run_id = sqlite3_column_int64(c->chunks, 0);
    const void* blob = sqlite3_column_blob(c->chunks, 4);
    std::string_view data(static_cast<const char*>(blob), static_cast<size_t>(sqlite3_column_bytes(c->chunks, 4)));
    int64_t count = sqlite3_column_int64(c->chunks, 3);
    if (count < 0 || count > static_cast<int64_t>(kChunkEvents) * 64 ||
        !decode_chunk(data, sqlite3_column_int(c->chunks, 1), sqlite3_column_int(c->chunks, 2), count, &c->events,
                      &c->seqs)) {
      *rc = set_error(&c->table->base, SQLITE_CORRUPT,
                      "streamlens events: a malformed event chunk in run " + std::to_string(c->run_id));
      return false;
    }
    if (!c->events.empty()) return true;
  }
}

// The next schema-1 row into legacy_event; false at the end or on error (*rc).
bool load_legacy(EventsCursor* c, int* rc) {
  int step = sqlite3_step(c->legacy);
  if (step == SQLITE_DONE) return false;
  if (step != SQLITE_ROW) {
    *rc = db_error(c, step);
    return false;
  }
  sqlite3_stmt* s = c->legacy;
  Event& e = c->legacy_event;
  c->run_id = sqlite3_column_int64(s, 0);
  e.device = sqlite3_column_int(s, 1);
  e.stream = sqlite3_column_int(s, 2);
  e.stream_kind = sqlite3_column_int(s, 3) == 1 ? StreamKind::kCommunication : StreamKind::kCompute;
  int kind = sqlite3_column_int(s, 4);
  e.kind = kind >= 0 && kind <= static_cast<int>(EventKind::kOther) ? static_cast<EventKind>(kind) : EventKind::kOther;
  e.name = static_cast<uint32_t>(sqlite3_column_int64(s, 5));
  e.instruction = static_cast<uint32_t>(sqlite3_column_int64(s, 6));
  e.start_ns = sqlite3_column_int64(s, 7);
  e.end_ns = sqlite3_column_int64(s, 8);
  e.bytes = sqlite3_column_int64(s, 9);
  e.flops = sqlite3_column_int64(s, 10);
  e.correlation = sqlite3_column_int64(s, 11);
  e.iteration = sqlite3_column_int(s, 12);
  return true;
}

// Moves to the next row: within the chunk, then the next chunk, then the schema-1 rows.
int advance(EventsCursor* c) {
  int rc = SQLITE_OK;
  if (!c->in_legacy) {
    if (++c->pos < c->events.size()) return SQLITE_OK;
    if (load_chunk(c, &rc)) return SQLITE_OK;
    if (rc != SQLITE_OK) return rc;
    c->in_legacy = true;
    if (!c->legacy) {
      c->eof = true;
      return SQLITE_OK;
    }
  }
  if (!load_legacy(c, &rc)) c->eof = true;
  return rc;
}

int prepare(EventsCursor* c, const std::string& sql, sqlite3_stmt** out) {
  int rc = sqlite3_prepare_v2(c->table->db, sql.c_str(), -1, out, nullptr);
  return rc == SQLITE_OK ? rc : db_error(c, rc);
}

void bind_constraints(sqlite3_stmt* stmt, int argc, sqlite3_value** argv) {
  for (int i = 0; i < argc; ++i) sqlite3_bind_value(stmt, i + 1, argv[i]);
}

int filter(sqlite3_vtab_cursor* base, int idx_num, const char*, int argc, sqlite3_value** argv) {
  auto* c = reinterpret_cast<EventsCursor*>(base);
  const std::string& schema = c->table->schema;
  finalize(&c->chunks);
  finalize(&c->legacy);
  c->events.clear();
  c->pos = 0;
  c->in_legacy = false;
  c->eof = false;
  c->rowid = 0;
  c->strings.clear();  // the store may have interned more since the last scan
  c->string_state.clear();
  if (!table_exists(c->table->db, schema, "event_chunks")) {
    return set_error(&c->table->base, SQLITE_ERROR,
                     "streamlens events: schema '" + schema + "' holds no streamlens store (no event_chunks table)");
  }
  std::string where;
  if (idx_num & kByRun) where += " WHERE run_id = ?1";
  if (idx_num & kByDevice) where += " AND device = ?2";
  int rc = prepare(c, "SELECT run_id, device, stream, event_count, data FROM \"" + schema + "\".event_chunks" + where +
                          " ORDER BY run_id, device, stream, start_ns, first_seq",
                   &c->chunks);
  if (rc != SQLITE_OK) return rc;
  bind_constraints(c->chunks, argc, argv);
  if (table_exists(c->table->db, schema, "events")) {
    rc = prepare(c, "SELECT run_id, device, stream, stream_kind, kind, name_id, instruction_id, start_ns, end_ns, "
                    "bytes, flops, correlation, iteration FROM \"" + schema + "\".events" + where,
                 &c->legacy);
    if (rc != SQLITE_OK) return rc;
    bind_constraints(c->legacy, argc, argv);
  }
  if (!c->lookup) {
    rc = prepare(c, "SELECT value FROM \"" + schema + "\".strings WHERE id = ?1", &c->lookup);
    if (rc != SQLITE_OK) return rc;
  }
  if (!c->run_config) {
    rc = prepare(c, "SELECT config_json FROM \"" + schema + "\".runs WHERE id = ?1", &c->run_config);
    if (rc != SQLITE_OK) return rc;
  }
  c->linked_run = -1;
  rc = SQLITE_OK;
  if (load_chunk(c, &rc)) return SQLITE_OK;
  if (rc != SQLITE_OK) return rc;
  c->in_legacy = true;
  if (!c->legacy || !load_legacy(c, &rc)) c->eof = true;
  return rc;
}

int next(sqlite3_vtab_cursor* base) {
  auto* c = reinterpret_cast<EventsCursor*>(base);
  ++c->rowid;
  return advance(c);
}

int eof(sqlite3_vtab_cursor* base) { return reinterpret_cast<EventsCursor*>(base)->eof ? 1 : 0; }

const Event& current(const EventsCursor* c) { return c->in_legacy ? c->legacy_event : c->events[c->pos]; }

// Interned names, looked up once per scan; null when the id is not in `strings`.
const std::string* string_of(EventsCursor* c, uint32_t id) {
  const bool cached = id < kMaxCachedStringId;
  if (cached && id < c->string_state.size() && c->string_state[id] != 0) {
    return c->string_state[id] == 1 ? &c->strings[id] : nullptr;
  }
  sqlite3_reset(c->lookup);
  sqlite3_bind_int64(c->lookup, 1, id);
  const bool found = sqlite3_step(c->lookup) == SQLITE_ROW;
  const auto* text = found ? reinterpret_cast<const char*>(sqlite3_column_text(c->lookup, 0)) : nullptr;
  std::string value(text ? text : "", text ? static_cast<size_t>(sqlite3_column_bytes(c->lookup, 0)) : 0);
  if (!cached) {
    c->uncached = std::move(value);  // valid until the next lookup; the column copies it
    return found ? &c->uncached : nullptr;
  }
  if (id >= c->string_state.size()) {
    c->string_state.resize(id + 1, 0);
    c->strings.resize(id + 1);
  }
  c->string_state[id] = found ? 1 : 2;
  c->strings[id] = std::move(value);
  return found ? &c->strings[id] : nullptr;
}

// Whether the cursor's current run is linked to its XLA module: `streamlens
// link` (or capture --xla-dump) records the module in the run's config and
// rewrites each event's iteration to its step, -1 outside the steps.
bool current_run_linked(EventsCursor* c) {
  if (c->linked_run == c->run_id) return c->linked;
  c->linked_run = c->run_id;
  c->linked = false;
  sqlite3_reset(c->run_config);
  sqlite3_bind_int64(c->run_config, 1, c->run_id);
  if (sqlite3_step(c->run_config) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(c->run_config, 0));
    c->linked = text != nullptr && config_is_linked(text);
  }
  return c->linked;
}

void result_string(sqlite3_context* ctx, const std::string* s) {
  if (s) {
    sqlite3_result_text(ctx, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
  } else {
    sqlite3_result_null(ctx);
  }
}

int column(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int col) {
  auto* c = reinterpret_cast<EventsCursor*>(base);
  const Event& e = current(c);
  switch (col) {
    case kRunId: sqlite3_result_int64(ctx, c->run_id); break;
    case kDevice: sqlite3_result_int64(ctx, e.device); break;
    case kStream: sqlite3_result_int64(ctx, e.stream); break;
    case kStreamKind: sqlite3_result_text(ctx, sched::stream_kind_name(e.stream_kind), -1, SQLITE_STATIC); break;
    case kKind: sqlite3_result_text(ctx, event_kind_name(e.kind), -1, SQLITE_STATIC); break;
    case kName: result_string(ctx, string_of(c, e.name)); break;
    case kInstruction: {  // no instruction (id 0, or the empty string's id): NULL
      const std::string* s = e.instruction == 0 ? nullptr : string_of(c, e.instruction);
      result_string(ctx, s && !s->empty() ? s : nullptr);
      break;
    }
    case kStartNs: sqlite3_result_int64(ctx, e.start_ns); break;
    case kEndNs: sqlite3_result_int64(ctx, e.end_ns); break;
    case kDurNs:  // wraps like the store's own arithmetic: corrupt times cannot cause UB
      sqlite3_result_int64(ctx, static_cast<int64_t>(static_cast<uint64_t>(e.end_ns) -
                                                     static_cast<uint64_t>(e.start_ns)));
      break;
    case kBytes: sqlite3_result_int64(ctx, e.bytes); break;
    case kFlops: sqlite3_result_int64(ctx, e.flops); break;
    case kCorrelation: sqlite3_result_int64(ctx, e.correlation); break;
    case kIteration: sqlite3_result_int64(ctx, e.iteration); break;
    case kStep:  // NULL outside the steps and in runs never linked
      if (e.iteration >= 0 && current_run_linked(c)) {
        sqlite3_result_int64(ctx, e.iteration);
      } else {
        sqlite3_result_null(ctx);
      }
      break;
    default: sqlite3_result_null(ctx); break;
  }
  return SQLITE_OK;
}

int rowid(sqlite3_vtab_cursor* base, sqlite3_int64* out) {
  *out = reinterpret_cast<EventsCursor*>(base)->rowid;
  return SQLITE_OK;
}

sqlite3_module make_module() {
  sqlite3_module m;
  std::memset(&m, 0, sizeof m);
  m.iVersion = 1;
  m.xCreate = connect;
  m.xConnect = connect;
  m.xBestIndex = best_index;
  m.xDisconnect = disconnect;
  m.xDestroy = disconnect;
  m.xOpen = open_cursor;
  m.xClose = close_cursor;
  m.xFilter = filter;
  m.xNext = next;
  m.xEof = eof;
  m.xColumn = column;
  m.xRowid = rowid;
  return m;
}

const sqlite3_module kModule = make_module();

}  // namespace

int register_events_table(sqlite3* db, char** error) {
  int rc = sqlite3_create_module_v2(db, "streamlens_events", &kModule, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    if (error) *error = sqlite3_mprintf("cannot register streamlens_events: %s", sqlite3_errmsg(db));
    return rc;
  }
  return sqlite3_exec(db, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.events USING streamlens_events(main)", nullptr,
                      nullptr, error);
}

}  // namespace sl::trace::store
