// libFuzzer target: the store's reader on tampered data. A small run is
// saved once; each input then overwrites its stored counts, one chunk's
// bytes and sequence numbers (the first 24 bytes choose the values, the rest
// is the chunk), and the run is read back: it must load or be refused, and
// never size anything from the damaged numbers. decode_chunk also sees the
// raw input.

#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "core/trace/store/event_chunk.h"
#include "core/trace/store/trace_store.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

const std::string& template_db() {
  static const std::string path = [] {
    std::string p = "/tmp/sl-store-fuzz-template-" + std::to_string(getpid()) + ".db";
    unlink(p.c_str());
    auto store = sl::trace::TraceStore::open(p);
    if (!store) std::abort();
    sl::trace::Trace t;
    for (int i = 0; i < 40; ++i) {
      sl::trace::Event e;
      e.device = i % 2;
      e.stream = i % 3;
      e.name = t.strings.intern("k" + std::to_string(i % 5));
      e.instruction = e.name;
      e.start_ns = i * 100;
      e.end_ns = i * 100 + 50;
      t.events.push_back(e);
    }
    t.dependencies.push_back({0, 39});
    if (!(*store)->save_run(sl::trace::RunInfo{}, "HloModule m", {}, t)) std::abort();
    return p;
  }();
  return path;
}

int64_t read64(const uint8_t* p) {
  int64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<sl::trace::Event> events;
  std::vector<int64_t> seqs;
  (void)sl::trace::store::decode_chunk({reinterpret_cast<const char*>(data), size}, 0, 0,
                                       static_cast<int64_t>(size / 10), &events, &seqs);
  if (size < 24) return 0;

  const std::string path = "/tmp/sl-store-fuzz-" + std::to_string(getpid()) + ".db";
  {
    std::ifstream in(template_db(), std::ios::binary);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << in.rdbuf();
  }
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) std::abort();
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "UPDATE runs SET event_count = ?1", -1, &stmt, nullptr);
  sqlite3_bind_int64(stmt, 1, read64(data));
  sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  sqlite3_prepare_v2(db, "UPDATE event_chunks SET event_count = ?1, data = ?2 WHERE rowid = "
                         "(SELECT MIN(rowid) FROM event_chunks)",
                     -1, &stmt, nullptr);
  sqlite3_bind_int64(stmt, 1, read64(data + 8));
  sqlite3_bind_blob(stmt, 2, data + 24, static_cast<int>(size - 24), SQLITE_STATIC);
  sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  sqlite3_prepare_v2(db, "UPDATE dependencies SET to_seq = ?1", -1, &stmt, nullptr);
  sqlite3_bind_int64(stmt, 1, read64(data + 16));
  sqlite3_step(stmt);
  sqlite3_finalize(stmt);
  sqlite3_close(db);

  auto store = sl::trace::TraceStore::open(path, sl::trace::TraceStore::Mode::kReadOnly);
  if (store) {
    auto runs = (*store)->list_runs();
    if (!runs) sl::fuzz::check_error(runs.status());
    auto trace = (*store)->load_trace(1);
    if (!trace) {
      sl::fuzz::check_error(trace.status());
    } else {
      for (const sl::trace::Dependency& d : trace->dependencies) {
        if (d.from >= trace->events.size() || d.to >= trace->events.size()) std::abort();
      }
    }
  } else {
    sl::fuzz::check_error(store.status());
  }
  unlink(path.c_str());
  return 0;
}
