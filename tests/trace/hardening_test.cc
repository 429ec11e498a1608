// Hostile data reaching the trace library (README.md, "What streamlens promises"): damaged
// stored counts and sequence numbers, extreme timestamps, URIs as paths,
// interrupted runs. Each test reproduces a defect found by probing.

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/trace/export.h"
#include "core/trace/store/nsys_import.h"
#include "core/trace/store/timeline_sort.h"
#include "core/trace/store/trace_store.h"
#include "tests/trace/compact_check.h"
#include "tests/trace/sql_test_util.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::ScratchDir;
using testing::synthetic_trace;

using testing::run_sql;

int64_t save(const std::string& path, const Trace& trace, const std::string& config = "{}") {
  auto store = TraceStore::open(path);
  EXPECT_TRUE(store.is_ok()) << store.status().message();
  RunInfo info;
  info.backend = "sim";
  info.config_json = config;
  auto id = (*store)->save_run(info, "HloModule m", {}, trace);
  EXPECT_TRUE(id.is_ok()) << id.status().message();
  return id.is_ok() ? *id : 0;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// Loads run 1 in a child process limited to 1 GiB of address space: a load
// that sizes anything from the damaged numbers dies there.
void expect_loads_in_bounded_memory(const std::string& path, size_t expected_events) {
  if (kAsan) GTEST_SKIP() << "ASan reserves more address space than the limit";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    rlimit limit{size_t{1} << 30, size_t{1} << 30};
    setrlimit(RLIMIT_AS, &limit);
    auto store = TraceStore::open(path, TraceStore::Mode::kReadOnly);
    if (!store) _exit(2);
    auto trace = (*store)->load_trace(1);
    if (!trace) _exit(3);
    if (trace->events.size() != expected_events) _exit(4);
    auto compact = (*store)->load_compact(1);
    if (!compact) _exit(5);
    _exit(compact->events.size() == expected_events ? 0 : 6);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(StoreHardening, AnInflatedEventCountSizesNothing) {
  ScratchDir dir;
  std::string path = dir.file("count.db");
  save(path, synthetic_trace(100));
  run_sql(path, "UPDATE runs SET event_count = 1000000000000000");
  expect_loads_in_bounded_memory(path, 100);
}

TEST(StoreHardening, ASequenceNumberNear2To32SizesNothing) {
  ScratchDir dir;
  std::string path = dir.file("seq.db");
  save(path, synthetic_trace(3));
  // A version 1 row with a huge seq, and a dependency naming it.
  run_sql(path,
          "INSERT INTO events (run_id, seq, device, stream, stream_kind, kind, name_id, instruction_id, start_ns, "
          "end_ns, bytes, flops, correlation, iteration) SELECT 1, 4294967000, 0, 0, 0, 0, id, id, 5, 9, 0, 0, 0, 0 "
          "FROM strings LIMIT 1; INSERT INTO dependencies (run_id, from_seq, to_seq) VALUES (1, 0, 4294967000)");
  expect_loads_in_bounded_memory(path, 4);
  auto store = TraceStore::open(path, TraceStore::Mode::kReadOnly);
  ASSERT_TRUE(store.is_ok());
  auto trace = (*store)->load_trace(1);
  ASSERT_TRUE(trace.is_ok()) << trace.status().message();
  ASSERT_EQ(trace->dependencies.size(), 1u);
  EXPECT_EQ(trace->events[trace->dependencies[0].to].start_ns, 5);
  testing::expect_compact_matches(**store, 1);
}

// Damage both read paths count alike: a chunk that does not decode, a
// string the database lacks, an edge to an event that is not stored.
TEST(StoreHardening, CompactLoadCountsDamageAsLoadTraceDoes) {
  ScratchDir dir;
  std::string path = dir.file("damaged.db");
  Trace t = synthetic_trace(6000);
  for (uint32_t i = 0; i + 5 < t.events.size(); i += 5) t.dependencies.push_back({i, i + 5});
  save(path, t);
  run_sql(path,
          "UPDATE event_chunks SET data = substr(data, 1, 40) WHERE rowid = (SELECT MIN(rowid) FROM event_chunks);"
          "DELETE FROM strings WHERE value = 'copy';"
          "INSERT INTO dependencies (run_id, from_seq, to_seq) VALUES (1, 1, 99999999)");
  auto store = TraceStore::open(path, TraceStore::Mode::kReadOnly);
  ASSERT_TRUE(store.is_ok());
  auto compact = (*store)->load_compact(1);
  ASSERT_TRUE(compact.is_ok()) << compact.status().message();
  std::vector<std::string> names;
  for (const Counter& c : compact->counters) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"store_corrupt_chunk", "store_missing_string",
                                             "store_dangling_dependency"}));
  EXPECT_LT(compact->events.size(), t.events.size());
  testing::expect_compact_matches(**store, 1);
  auto missing = (*store)->load_event_extras(1, 0, 0, 99999999);
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
}

TEST(StoreHardening, SeqIndexFindsSparseAndDenseSeqs) {
  store::SeqIndex dense({2, 0, 1});
  EXPECT_EQ(dense.find(0), 1u);
  EXPECT_EQ(dense.find(2), 0u);
  EXPECT_EQ(dense.find(3), store::SeqIndex::kNone);
  EXPECT_EQ(dense.find(-1), store::SeqIndex::kNone);
  store::SeqIndex sparse({7, 4294967000, -5});
  EXPECT_EQ(sparse.find(4294967000), 1u);
  EXPECT_EQ(sparse.find(-5), 2u);
  EXPECT_EQ(sparse.find(7), 0u);
  EXPECT_EQ(sparse.find(8), store::SeqIndex::kNone);
  // A compact trace's 32-bit seqs, with one event that has none.
  store::SeqIndex narrow(std::vector<uint32_t>{2, EventColumns::kNoSeq, 0}, EventColumns::kNoSeq);
  EXPECT_EQ(narrow.find(0), 2u);
  EXPECT_EQ(narrow.find(2), 0u);
  EXPECT_EQ(narrow.find(1), store::SeqIndex::kNone);
  EXPECT_EQ(narrow.find(EventColumns::kNoSeq), store::SeqIndex::kNone);
  store::SeqIndex narrow_sparse(std::vector<uint32_t>{4294967000u, 3}, EventColumns::kNoSeq);
  EXPECT_EQ(narrow_sparse.find(4294967000), 0u);
  EXPECT_EQ(narrow_sparse.find(3), 1u);
  EXPECT_EQ(narrow_sparse.find(4), store::SeqIndex::kNone);
}

TEST(StoreHardening, SortTimelineOrdersByTrackStartThenSeq) {
  Trace t;
  testing::add_event(t, 1, 0, EventKind::kGemm, "a", "a", 10, 20);
  testing::add_event(t, 0, 2, EventKind::kGemm, "b", "b", 50, 60);
  testing::add_event(t, 0, 2, EventKind::kGemm, "c", "c", 30, 40);
  testing::add_event(t, 0, 2, EventKind::kGemm, "d", "d", 30, 45);
  std::vector<int64_t> seqs = {0, 1, 3, 2};
  store::sort_timeline(&t.events, &seqs);
  EXPECT_EQ(seqs, (std::vector<int64_t>{2, 3, 1, 0}));
  EXPECT_EQ(t.name_of(t.events[0]), "d");
  EXPECT_EQ(t.name_of(t.events[3]), "a");
  std::vector<int64_t> sorted = seqs;
  store::sort_timeline(&t.events, &sorted);  // already in order: unchanged
  EXPECT_EQ(sorted, seqs);
}

TEST(StoreHardening, UrisAndSpecialNamesAreUsageErrors) {
  ScratchDir dir;
  for (const std::string& name : {std::string(), std::string(":memory:"), "file:" + dir.file("x.db")}) {
    auto store = TraceStore::open(name);
    ASSERT_FALSE(store.is_ok()) << name;
    EXPECT_EQ(store.status().code(), ErrorCode::kUsage) << name;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.db")));
}

TEST(StoreHardening, ARunningRunWhoseProcessIsGoneIsInterrupted) {
  ScratchDir dir;
  std::string path = dir.file("dead.db");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  auto store = TraceStore::open(path);
  ASSERT_TRUE(store.is_ok());
  RunInfo dead, alive, elsewhere;
  dead.config_json = nlohmann::json{{"pid", child}, {"host", host}}.dump();
  alive.config_json = nlohmann::json{{"pid", getpid()}, {"host", host}}.dump();
  elsewhere.config_json = nlohmann::json{{"pid", child}, {"host", std::string(host) + "-other"}}.dump();
  int64_t a = *(*store)->begin_run(dead, "", {});
  int64_t b = *(*store)->begin_run(alive, "", {});
  int64_t c = *(*store)->begin_run(elsewhere, "", {});
  EXPECT_EQ((*store)->run_info(a)->status, RunStatus::kInterrupted);
  EXPECT_EQ((*store)->run_info(b)->status, RunStatus::kRunning);
  EXPECT_EQ((*store)->run_info(c)->status, RunStatus::kRunning);
  ASSERT_TRUE((*store)->finish_run(b, RunStatus::kInterrupted, 0, {}).is_ok());
  EXPECT_EQ((*store)->run_info(b)->status, RunStatus::kInterrupted);
}

TEST(TraceHardening, ExtremeTimestampsSaturate) {
  Trace t;
  testing::add_event(t, 0, 0, EventKind::kGemm, "a", "a", INT64_MIN, INT64_MAX);
  testing::add_event(t, 0, 0, EventKind::kGemm, "b", "b", INT64_MAX - 1, INT64_MAX);
  EXPECT_EQ(t.events[0].duration_ns(), INT64_MAX);
  EXPECT_EQ(t.makespan_ns(), INT64_MAX);
  t.normalize_time();
  EXPECT_EQ(t.events[0].start_ns, 0);
  EXPECT_EQ(t.events[1].start_ns, INT64_MAX);
  EXPECT_EQ(saturating_sub(INT64_MIN, 1), INT64_MIN);
  std::string json = chrome_trace_json(RunInfo{}, t);
  EXPECT_FALSE(nlohmann::json::parse(json, nullptr, false).is_discarded());
}

TEST(TraceHardening, ExportedJsonReplacesInvalidUtf8) {
  Trace t;
  testing::add_event(t, 0, 0, EventKind::kGemm, "bad\xff", "i\xfe", 0, 10);
  RunInfo info;
  info.name = "\xc3";
  ScratchDir dir;
  ASSERT_TRUE(export_run(info, t, ExportFormat::kChrome, dir.file("t.json")).is_ok());
  auto j = nlohmann::json::parse(testing::read_bytes(dir.file("t.json")), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["otherData"]["name"], "\xEF\xBF\xBD");
  EXPECT_EQ(testing::read_bytes(dir.file("t.json")), chrome_trace_json(info, t));  // streamed == in memory
}

TEST(NsysHardening, NegativeAndExtremeTimestampsAreDroppedNotOverflowed) {
  ScratchDir dir;
  std::string path = dir.file("x.sqlite");
  run_sql(path,
          "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
          "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, streamId INT, "
          "correlationId INT, demangledName INT, shortName INT);"
          "INSERT INTO StringIds VALUES (1, 'k');"
          "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (-9223372036854775807, 5, 0, 7, 1, 1, 1),"
          "(9223372036854775000, 9223372036854775807, 0, 7, 2, 1, 1), (10, 20, 0, 7, 3, 1, 1);");
  auto run = import_nsys_sqlite(path);
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  ASSERT_EQ(run->trace.events.size(), 2u);
  for (const Event& e : run->trace.events) EXPECT_GE(e.duration_ns(), 0);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(import_nsys_sqlite(dir.file(".")).is_ok());
  EXPECT_EQ(import_nsys_sqlite(dir.file(".")).status().code(), ErrorCode::kInvalidInput);
}

}  // namespace
}  // namespace sl::trace
