// Round trips through the SQLite store, concurrent reading while a writer
// appends, and read-only mode.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <numeric>
#include <thread>
#include <tuple>

#include "core/trace/store/schema.h"
#include "core/trace/store/trace_store.h"
#include "tests/trace/compact_check.h"
#include "tests/trace/sql_test_util.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::add_event;
using testing::expect_compact_matches;
using testing::read_bytes;
using testing::ScratchDir;
using testing::synthetic_trace;

std::unique_ptr<TraceStore> open_store(const std::string& path,
                                       TraceStore::Mode mode = TraceStore::Mode::kCreateIfMissing) {
  auto store = TraceStore::open(path, mode);
  EXPECT_TRUE(store.is_ok()) << store.status().message();
  return store ? std::move(store).value() : nullptr;
}

RunInfo sample_info() {
  RunInfo info;
  info.name = "baseline";
  info.program_name = "two_gemms";
  info.backend = "sim";
  info.device_model = "h200";
  info.num_devices = 2;
  info.config_json = R"({"init":"ramp"})";
  return info;
}

// Event identity independent of string ids, for comparing traces.
auto event_tuple(const Trace& t, const Event& e) {
  return std::make_tuple(e.device, e.stream, static_cast<int>(e.stream_kind), static_cast<int>(e.kind), t.name_of(e),
                         t.instruction_of(e), e.start_ns, e.end_ns, e.bytes, e.flops, e.correlation, e.iteration);
}

TEST(SchemaTest, EmbeddedSchemaMirrorsSchemaSql) {
  std::string file = read_bytes(std::string(SL_SOURCE_DIR) + "/core/trace/store/schema.sql");
  ASSERT_FALSE(file.empty());
  EXPECT_EQ(file, std::string(store::kSchemaSql));
}

TEST(StoreTest, RoundTripKeepsEveryFieldEdgeCounterAndAssignment) {
  ScratchDir dir;
  Trace trace = synthetic_trace(5000);
  for (uint32_t i = 0; i + 7 < trace.events.size(); i += 7) trace.dependencies.push_back({i, i + 7});
  trace.add_counter("kernels_without_instruction", 3, "kernels no instruction claimed");
  std::vector<sched::StreamAssignmentEntry> streams = {{"g0", 0, false, true}, {"ag", 100, true, true},
                                                       {"add", 0, false, false}};
  int64_t run_id = 0;
  {
    auto store = open_store(dir.file("t.db"));
    ASSERT_TRUE(store);
    auto id = store->save_run(sample_info(), "HloModule two_gemms\n...", streams, trace);
    ASSERT_TRUE(id.is_ok()) << id.status().message();
    run_id = *id;
  }
  auto store = open_store(dir.file("t.db"), TraceStore::Mode::kReadOnly);
  ASSERT_TRUE(store);
  auto info = store->run_info(run_id);
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->status, RunStatus::kComplete);
  EXPECT_EQ(info->name, "baseline");
  EXPECT_EQ(info->program_name, "two_gemms");
  EXPECT_EQ(info->backend, "sim");
  EXPECT_EQ(info->device_model, "h200");
  EXPECT_EQ(info->num_devices, 2);
  EXPECT_EQ(info->config_json, R"({"init":"ramp"})");
  EXPECT_EQ(info->event_count, 5000);
  EXPECT_EQ(info->makespan_ns, trace.makespan_ns());
  EXPECT_FALSE(info->created_at.empty());

  auto loaded = store->load_trace(run_id);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  ASSERT_EQ(loaded->events.size(), trace.events.size());
  // Loaded in timeline order (device, stream, start); same events otherwise.
  std::vector<uint32_t> order(trace.events.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Event& x = trace.events[a];
    const Event& y = trace.events[b];
    return std::tie(x.device, x.stream, x.start_ns) < std::tie(y.device, y.stream, y.start_ns);
  });
  std::vector<uint32_t> position(order.size());
  for (uint32_t k = 0; k < order.size(); ++k) {
    position[order[k]] = k;
    ASSERT_EQ(event_tuple(*loaded, loaded->events[k]), event_tuple(trace, trace.events[order[k]])) << k;
  }
  ASSERT_EQ(loaded->dependencies.size(), trace.dependencies.size());
  std::vector<std::pair<uint32_t, uint32_t>> want, got;
  for (const Dependency& d : trace.dependencies) want.emplace_back(position[d.from], position[d.to]);
  for (const Dependency& d : loaded->dependencies) got.emplace_back(d.from, d.to);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(want, got);
  ASSERT_EQ(loaded->counters.size(), 1u);
  EXPECT_EQ(loaded->counters[0].name, "kernels_without_instruction");
  EXPECT_EQ(loaded->counters[0].value, 3);
  expect_compact_matches(*store, run_id);

  auto text = store->program_text(run_id);
  ASSERT_TRUE(text.is_ok());
  EXPECT_EQ(*text, "HloModule two_gemms\n...");
  auto assignment = store->stream_assignment(run_id);
  ASSERT_TRUE(assignment.is_ok());
  ASSERT_EQ(assignment->size(), 3u);
  EXPECT_EQ((*assignment)[1].instruction, "ag");
  EXPECT_EQ((*assignment)[1].stream, 100);
  EXPECT_TRUE((*assignment)[1].overridden);
  EXPECT_FALSE((*assignment)[2].async_capable);
}

TEST(StoreTest, ManyRunsShareProgramsAndStringsAndListInOrder) {
  ScratchDir dir;
  auto store = open_store(dir.file("t.db"));
  ASSERT_TRUE(store);
  Trace a;
  add_event(a, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 100);
  Trace b;
  add_event(b, 0, 1, EventKind::kGemm, "gemm", "g0", 10, 60);
  add_event(b, 0, 0, EventKind::kElementwise, "add", "a1", 0, 5);
  auto id1 = store->save_run(sample_info(), "program text", {}, a);
  auto id2 = store->save_run(sample_info(), "program text", {}, b);
  ASSERT_TRUE(id1.is_ok() && id2.is_ok());
  auto runs = store->list_runs();
  ASSERT_TRUE(runs.is_ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].id, *id1);
  EXPECT_EQ((*runs)[1].id, *id2);
  EXPECT_EQ((*runs)[0].program_id, (*runs)[1].program_id);  // deduplicated by hash
  // The same text under another name (two captures imported without their
  // modules: no text, each named after its file) is another program.
  RunInfo other = sample_info();
  other.program_name = "other.jsonl";
  RunInfo first = sample_info();
  first.program_name = "first.jsonl";
  auto id3 = store->save_run(first, "", {}, a);
  auto id4 = store->save_run(other, "", {}, a);
  auto id5 = store->save_run(first, "", {}, b);
  ASSERT_TRUE(id3.is_ok() && id4.is_ok() && id5.is_ok());
  EXPECT_EQ(store->run_info(*id3)->program_name, "first.jsonl");
  EXPECT_EQ(store->run_info(*id4)->program_name, "other.jsonl");
  EXPECT_EQ(store->run_info(*id5)->program_id, store->run_info(*id3)->program_id);
  EXPECT_NE(store->run_info(*id4)->program_id, store->run_info(*id3)->program_id);
  EXPECT_EQ((*runs)[1].event_count, 2);
  auto lb = store->load_trace(*id2);
  ASSERT_TRUE(lb.is_ok());
  ASSERT_EQ(lb->events.size(), 2u);
  EXPECT_EQ(lb->name_of(lb->events[0]), "add");   // stream 0 before stream 1
  EXPECT_EQ(lb->name_of(lb->events[1]), "gemm");
  EXPECT_EQ(store->run_info(999).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store->load_trace(999).status().code(), ErrorCode::kNotFound);
}

TEST(StoreTest, BatchesAppendAcrossCallsAndDependenciesUseRunWideIndices) {
  ScratchDir dir;
  auto store = open_store(dir.file("t.db"));
  ASSERT_TRUE(store);
  auto run = store->begin_run(sample_info(), "", {});
  ASSERT_TRUE(run.is_ok());
  Trace batch1;
  add_event(batch1, 0, 0, EventKind::kGemm, "g", "g0", 0, 100);
  Trace batch2;
  add_event(batch2, 0, 100, EventKind::kCollective, "ag", "ag0", 150, 300);
  ASSERT_TRUE(store->append(*run, batch1, 0, 1).is_ok());
  ASSERT_TRUE(store->append(*run, batch2, 0, 1).is_ok());
  ASSERT_TRUE(store->append_dependencies(*run, {{0, 1}}).is_ok());
  EXPECT_FALSE(store->append_dependencies(*run, {{0, 5}}).is_ok());  // event 5 does not exist yet
  EXPECT_FALSE(store->append(*run, batch2, 1, 1).is_ok());           // outside the batch
  auto info = store->run_info(*run);
  EXPECT_EQ(info->status, RunStatus::kRunning);
  EXPECT_EQ(info->event_count, 2);
  ASSERT_TRUE(store->finish_run(*run, RunStatus::kFailed, 300, {}).is_ok());
  EXPECT_EQ(store->run_info(*run)->status, RunStatus::kFailed);
  EXPECT_FALSE(store->append(*run, batch2, 0, 1).is_ok());  // finished runs take no events
  auto loaded = store->load_trace(*run);
  ASSERT_TRUE(loaded.is_ok());
  ASSERT_EQ(loaded->dependencies.size(), 1u);
  EXPECT_EQ(loaded->name_of(loaded->events[loaded->dependencies[0].from]), "g");
  EXPECT_EQ(loaded->name_of(loaded->events[loaded->dependencies[0].to]), "ag");
}

TEST(StoreTest, ReadOnlyModeNeverWrites) {
  ScratchDir dir;
  std::string path = dir.file("t.db");
  {
    auto store = open_store(path);
    Trace t = synthetic_trace(10);
    ASSERT_TRUE(store->save_run(sample_info(), "p", {}, t).is_ok());
  }
  std::string before = read_bytes(path);
  {
    auto store = open_store(path, TraceStore::Mode::kReadOnly);
    ASSERT_TRUE(store);
    EXPECT_TRUE(store->load_trace(1).is_ok());
    EXPECT_FALSE(store->begin_run(sample_info(), "", {}).is_ok());
    EXPECT_FALSE(store->finish_run(1, RunStatus::kFailed, 0, {}).is_ok());
  }
  EXPECT_EQ(before, read_bytes(path));
  // Nor leaves SQLite's WAL files beside it (a read-only connection could
  // not remove them: every `streamlens runs` used to leave two).
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
  EXPECT_EQ(TraceStore::open(dir.file("missing.db"), TraceStore::Mode::kReadOnly).status().code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(TraceStore::open(dir.file("missing.db"), TraceStore::Mode::kOpenExisting).status().code(),
            ErrorCode::kNotFound);
}

TEST(StoreTest, ReaderSeesWholeBatchesWhileWriterAppends) {
  ScratchDir dir;
  std::string path = dir.file("t.db");
  auto writer = open_store(path);
  ASSERT_TRUE(writer);
  auto run = writer->begin_run(sample_info(), "", {});
  ASSERT_TRUE(run.is_ok());
  constexpr size_t kBatch = 500;
  constexpr int kBatches = 40;
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::string reader_error;
  std::thread reader([&] {
    auto store = TraceStore::open(path, TraceStore::Mode::kReadOnly);
    if (!store) {
      reader_error = store.status().message();
      return;
    }
    size_t last = 0;
    while (!done.load() || reads.load() < 3) {
      auto t = (*store)->load_trace(*run);
      if (!t) {
        reader_error = t.status().message();
        return;
      }
      size_t n = t->events.size();
      if (n % kBatch != 0 || n < last) {
        reader_error = "saw " + std::to_string(n) + " events after " + std::to_string(last);
        return;
      }
      last = n;
      ++reads;
    }
  });
  Trace batch = synthetic_trace(kBatch);
  for (int b = 0; b < kBatches; ++b) {
    for (Event& e : batch.events) e.start_ns += 1000000, e.end_ns += 1000000;
    ASSERT_TRUE(writer->append(*run, batch, 0, kBatch).is_ok());
  }
  done = true;
  reader.join();
  EXPECT_EQ(reader_error, "");
  EXPECT_GE(reads.load(), 3);
  EXPECT_EQ(writer->load_trace(*run)->events.size(), kBatch * kBatches);
}

using testing::run_sql;

TEST(StoreTest, AppendsOverlappingInTimeLoadInTimelineOrder) {
  ScratchDir dir;
  auto store = open_store(dir.file("t.db"));
  ASSERT_TRUE(store);
  auto run = store->begin_run(sample_info(), "", {});
  ASSERT_TRUE(run.is_ok());
  Trace late;
  add_event(late, 0, 0, EventKind::kGemm, "late", "i1", 500, 600);
  add_event(late, 0, 0, EventKind::kGemm, "later", "i2", 700, 800);
  Trace early;
  add_event(early, 0, 0, EventKind::kGemm, "early", "i3", 100, 200);
  add_event(early, 1, 0, EventKind::kGemm, "other device", "i4", 0, 50);
  add_event(early, 0, 0, EventKind::kGemm, "tie", "i5", 500, 550);
  ASSERT_TRUE(store->append(*run, late, 0, 2).is_ok());
  ASSERT_TRUE(store->append(*run, early, 0, 3).is_ok());
  ASSERT_TRUE(store->append_dependencies(*run, {{2, 1}}).is_ok());
  auto t = store->load_trace(*run);
  ASSERT_TRUE(t.is_ok());
  std::vector<std::string> names;
  for (const Event& e : t->events) names.push_back(t->name_of(e));
  // Same start: the earlier append (smaller seq) first.
  EXPECT_EQ(names, (std::vector<std::string>{"early", "late", "tie", "later", "other device"}));
  ASSERT_EQ(t->dependencies.size(), 1u);
  EXPECT_EQ(t->name_of(t->events[t->dependencies[0].from]), "early");
  EXPECT_EQ(t->name_of(t->events[t->dependencies[0].to]), "later");
  expect_compact_matches(*store, *run);
}

// Schema version 1 kept one `events` row per event. Such files open read-only
// untouched, and opening them for writing adds event_chunks (version 2).
TEST(StoreTest, SchemaVersion1FilesStayReadableAndUpgradeWhenWritten) {
  ScratchDir dir;
  std::string path = dir.file("v1.db");
  int64_t run = 0;
  {
    auto store = open_store(path);
    ASSERT_TRUE(store);
    auto id = store->begin_run(sample_info(), "", {});
    ASSERT_TRUE(id.is_ok());
    run = *id;
  }
  std::string sql = "DROP TABLE event_chunks; UPDATE meta SET value = '1' WHERE key = 'schema_version';"
                    "INSERT INTO strings (id, value) VALUES (901, 'k_b'), (902, 'i_b'), (903, 'k_a'), (904, 'i_a');"
                    "INSERT INTO events VALUES (" + std::to_string(run) + ", 0, 0, 0, 0, 0, 901, 902, 300, 400, 8, 9, 10, 0),"
                    "(" + std::to_string(run) + ", 1, 0, 0, 0, 0, 903, 904, 100, 200, 1, 2, 3, 1);"
                    "UPDATE runs SET event_count = 2; PRAGMA wal_checkpoint(TRUNCATE);";
  run_sql(path, sql.c_str());
  std::string before = read_bytes(path);
  {
    auto store = open_store(path, TraceStore::Mode::kReadOnly);
    ASSERT_TRUE(store);
    auto t = store->load_trace(run);
    ASSERT_TRUE(t.is_ok()) << t.status().message();
    ASSERT_EQ(t->events.size(), 2u);
    EXPECT_EQ(t->name_of(t->events[0]), "k_a");
    EXPECT_EQ(t->instruction_of(t->events[0]), "i_a");
    EXPECT_EQ(t->events[0].iteration, 1);
    EXPECT_EQ(t->name_of(t->events[1]), "k_b");
    EXPECT_EQ(t->events[1].correlation, 10);
    expect_compact_matches(*store, run);
  }
  EXPECT_EQ(before, read_bytes(path));

  auto store = open_store(path);
  ASSERT_TRUE(store);
  Trace more;
  add_event(more, 0, 0, EventKind::kGemm, "k_c", "i_c", 250, 260);
  ASSERT_TRUE(store->append(run, more, 0, 1).is_ok());  // continues after the version 1 rows
  ASSERT_TRUE(store->append_dependencies(run, {{1, 2}}).is_ok());
  auto t = store->load_trace(run);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  std::vector<std::string> names;
  for (const Event& e : t->events) names.push_back(t->name_of(e));
  EXPECT_EQ(names, (std::vector<std::string>{"k_a", "k_c", "k_b"}));
  ASSERT_EQ(t->dependencies.size(), 1u);
  EXPECT_EQ(t->dependencies[0].from, 0u);
  EXPECT_EQ(t->dependencies[0].to, 1u);
  expect_compact_matches(*store, run);  // version 1 rows and chunks together
  store.reset();
  run_sql(path, "PRAGMA wal_checkpoint(TRUNCATE);");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))),
            std::to_string(store::kSchemaVersion));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

}  // namespace
}  // namespace sl::trace
