// The `events` virtual table against the store's own reader: every field of
// every event, run_id push-down, schema-1 rows, and malformed chunks.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/trace/store/events_vtab.h"
#include "core/trace/store/trace_store.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::ScratchDir;
using testing::synthetic_trace;

class Connection {
 public:
  explicit Connection(const std::string& path, int flags = SQLITE_OPEN_READONLY) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, flags, nullptr), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(store::register_events_table(db_, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
  }
  ~Connection() { sqlite3_close_v2(db_); }
  sqlite3* get() const { return db_; }

  // Rows of a query as text cells ("NULL" for NULL); *rc receives the final step code.
  std::vector<std::vector<std::string>> rows(const std::string& sql, int* rc = nullptr) const {
    std::vector<std::vector<std::string>> out;
    sqlite3_stmt* s = nullptr;
    int prc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr);
    EXPECT_EQ(prc, SQLITE_OK) << sqlite3_errmsg(db_);
    int step = SQLITE_ERROR;
    while (s && (step = sqlite3_step(s)) == SQLITE_ROW) {
      auto& row = out.emplace_back();
      for (int i = 0; i < sqlite3_column_count(s); ++i) {
        const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
        row.push_back(sqlite3_column_type(s, i) == SQLITE_NULL ? "NULL" : t);
      }
    }
    if (rc) *rc = step;
    else EXPECT_EQ(step, SQLITE_DONE) << sqlite3_errmsg(db_);
    sqlite3_finalize(s);
    return out;
  }
  int64_t count(const std::string& sql) const { return std::stoll(rows(sql).at(0).at(0)); }

 private:
  sqlite3* db_ = nullptr;
};

RunInfo info(const std::string& name) {
  RunInfo i;
  i.name = name;
  i.program_name = "p";
  i.backend = "sim";
  i.device_model = "h200";
  i.num_devices = 2;
  return i;
}

// Saves two runs (5000 and 300 events) and returns their ids.
std::pair<int64_t, int64_t> save_two_runs(const std::string& path, const Trace& a, const Trace& b) {
  auto store = TraceStore::open(path);
  EXPECT_TRUE(store.is_ok()) << store.status().message();
  auto id_a = (*store)->save_run(info("a"), "HloModule a", {}, a);
  auto id_b = (*store)->save_run(info("b"), "HloModule b", {}, b);
  EXPECT_TRUE(id_a.is_ok() && id_b.is_ok());
  return {*id_a, *id_b};
}

TEST(EventsVtabTest, EveryEventWithEveryFieldAsTheStoreLoadsIt) {
  ScratchDir dir;
  const std::string path = dir.file("s.db");
  Trace a = synthetic_trace(5000);
  a.events[3].instruction = 0;  // no instruction: NULL
  Trace b = synthetic_trace(300);
  auto [ra, rb] = save_two_runs(path, a, b);

  auto store = TraceStore::open(path, TraceStore::Mode::kReadOnly);
  ASSERT_TRUE(store.is_ok());
  auto loaded = (*store)->load_trace(ra);
  ASSERT_TRUE(loaded.is_ok());
  using Row = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string, std::string,
                         std::string, std::string, std::string, std::string, std::string, std::string>;
  std::multiset<Row> expected, actual;
  for (const Event& e : loaded->events) {
    std::string instruction = e.instruction ? loaded->instruction_of(e) : "NULL";
    expected.insert({std::to_string(e.device), std::to_string(e.stream), sched::stream_kind_name(e.stream_kind),
                     event_kind_name(e.kind), loaded->name_of(e), instruction, std::to_string(e.start_ns),
                     std::to_string(e.end_ns), std::to_string(e.duration_ns()), std::to_string(e.bytes),
                     std::to_string(e.flops), std::to_string(e.correlation), std::to_string(e.iteration)});
  }
  Connection c(path);
  for (const auto& r : c.rows("select device, stream, stream_kind, kind, name, instruction, start_ns, end_ns, dur_ns, "
                              "bytes, flops, correlation, iteration, step from events where run_id = " +
                              std::to_string(ra))) {
    EXPECT_EQ(r[13], "NULL");  // steps come with linked runs
    actual.insert({r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12]});
  }
  EXPECT_EQ(actual.size(), 5000u);
  std::vector<Row> missing, extra;
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(), std::back_inserter(missing));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(), std::back_inserter(extra));
  EXPECT_TRUE(missing.empty() && extra.empty())
      << missing.size() << " events missing, " << extra.size() << " unexpected; first missing instruction '"
      << (missing.empty() ? "" : std::get<5>(missing[0])) << "', first unexpected '"
      << (extra.empty() ? "" : std::get<5>(extra[0])) << "'";
  EXPECT_EQ(c.count("select count(*) from events"), 5300);
  EXPECT_EQ(c.count("select count(*) from events where run_id = " + std::to_string(rb)), 300);
  EXPECT_EQ(c.count("select count(*) from events where run_id in (" + std::to_string(ra) + "," + std::to_string(rb) +
                    ")"),
            5300);
  EXPECT_EQ(c.count("select count(*) from events where run_id = 999"), 0);
  EXPECT_EQ(c.count("select count(*) from events where run_id = " + std::to_string(rb) + " and device = 1"), 150);
}

TEST(EventsVtabTest, RunIdIsPushedDownToTheChunkIndex) {
  ScratchDir dir;
  const std::string path = dir.file("s.db");
  save_two_runs(path, synthetic_trace(100), synthetic_trace(100));
  Connection c(path);
  auto plan = c.rows("explain query plan select * from events where run_id = 2");
  ASSERT_FALSE(plan.empty());
  EXPECT_NE(plan[0].back().find("VIRTUAL TABLE INDEX 1"), std::string::npos) << plan[0].back();
  auto scan = c.rows("explain query plan select * from events where device = 0");
  EXPECT_NE(scan[0].back().find("VIRTUAL TABLE INDEX 0"), std::string::npos) << scan[0].back();
}

TEST(EventsVtabTest, AggregatesByName) {
  ScratchDir dir;
  const std::string path = dir.file("s.db");
  Trace t;
  testing::add_event(t, 0, 0, EventKind::kGemm, "gemm", "g0", 0, 100, 0, 0);
  testing::add_event(t, 0, 1, EventKind::kGemm, "gemm", "g1", 50, 250, 0, 0);
  testing::add_event(t, 1, 100, EventKind::kCollective, "all-gather", "ag", 10, 40, 64, 0);
  save_two_runs(path, t, Trace{});
  Connection c(path);
  auto rows = c.rows("select name, sum(dur_ns), min(stream_kind) from events group by name order by name");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"all-gather", "30", "communication"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"gemm", "300", "compute"}));
}

TEST(EventsVtabTest, SchemaOneRowsAreIncludedAndTheRealTableStaysReachable) {
  ScratchDir dir;
  const std::string path = dir.file("s.db");
  save_two_runs(path, synthetic_trace(10), Trace{});
  {
    Connection w(path, SQLITE_OPEN_READWRITE);
    ASSERT_EQ(sqlite3_exec(w.get(),
                           "insert into strings (id, value) values (900, 'old_kernel');"
                           "insert into main.events values (7, 0, 1, 2, 0, 2, 900, 0, 10, 25, 8, 9, 11, 0);",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(w.get());
  }
  Connection c(path);
  EXPECT_EQ(c.count("select count(*) from events"), 11);
  EXPECT_EQ(c.count("select count(*) from main.events"), 1);  // the schema-1 table itself
  auto rows = c.rows("select run_id, device, stream, kind, name, instruction, dur_ns from events where run_id = 7");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"7", "1", "2", "elementwise", "old_kernel", "NULL", "15"}));
}

TEST(EventsVtabTest, MalformedChunkIsAnErrorNotACrash) {
  ScratchDir dir;
  const std::string path = dir.file("s.db");
  save_two_runs(path, synthetic_trace(10), Trace{});
  {
    Connection w(path, SQLITE_OPEN_READWRITE);
    ASSERT_EQ(sqlite3_exec(w.get(), "update event_chunks set data = x'ff' where id = (select min(id) from event_chunks)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  Connection c(path);
  int rc = SQLITE_OK;
  c.rows("select count(*) from events", &rc);
  EXPECT_EQ(rc & 0xff, SQLITE_CORRUPT);
  EXPECT_NE(std::string(sqlite3_errmsg(c.get())).find("malformed event chunk"), std::string::npos)
      << sqlite3_errmsg(c.get());
}

TEST(EventsVtabTest, ForeignDatabaseGetsAClearError) {
  ScratchDir dir;
  const std::string path = dir.file("foreign.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "create table t(x)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  Connection c(path);
  int rc = SQLITE_OK;
  c.rows("select * from events", &rc);
  EXPECT_EQ(rc, SQLITE_ERROR);
  EXPECT_NE(std::string(sqlite3_errmsg(c.get())).find("no streamlens store"), std::string::npos);
}

}  // namespace
}  // namespace sl::trace
