// `streamlens query`: SQL over a recorded database, every event through the
// `events` table, CSV and JSON output, and a database no statement can change.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_test_util.h"
#include "tests/common/test_support.h"

namespace sl::cli_test {
namespace {

class QueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("q.db");
    Outcome o = streamlens("run " + sample("two_gemms_one_stream.hlo").string() + " --backend sim --db " + db_, here());
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  std::filesystem::path here() const { return dir_.file("."); }
  Outcome query(const std::string& args) { return streamlens("query --db " + db_ + " " + args, here()); }

  test_support::ScratchDir dir_;
  std::string db_;
};

TEST_F(QueryTest, CountsWhatTheStoreRecorded) {
  Outcome runs = streamlens("runs --json --db " + db_, here());
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  int64_t events = nlohmann::json::parse(runs.out).at(0).at("events").get<int64_t>();
  ASSERT_GT(events, 0);
  Outcome o = query("'select count(*) as n from events'");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "n\n" + std::to_string(events) + "\n");
}

TEST_F(QueryTest, JsonKeepsColumnOrderAndTypes) {
  Outcome o = query("--json \"select name, kind, dur_ns, step from events where run_id = 1 and kind = 'gemm' "
                    "order by start_ns\"");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  nlohmann::ordered_json rows = nlohmann::ordered_json::parse(o.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].begin().key(), "name");
  EXPECT_EQ(rows[0]["kind"], "gemm");
  EXPECT_TRUE(rows[0]["dur_ns"].is_number_integer());
  EXPECT_GT(rows[0]["dur_ns"].get<int64_t>(), 1000000);  // a 1024x24576x24576 GEMM takes over a millisecond
  EXPECT_TRUE(rows[0]["step"].is_null());
}

TEST_F(QueryTest, CsvQuotesFields) {
  Outcome o = query("--csv \"select 'a,b' as x, 'say \\\"hi\\\"' as y\"");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "x,y\n\"a,b\",\"say \"\"hi\"\"\"\n");
}

TEST_F(QueryTest, EmptyResultIsAnEmptyJsonArray) {
  Outcome o = query("--json 'select * from events where run_id = 42'");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out), nlohmann::json::array());
}

TEST_F(QueryTest, NothingCanBeWritten) {
  std::string before = read_file(db_);
  for (const char* sql : {"'delete from runs'", "'drop table runs'", "'pragma query_only = 0'",
                          "\"attach 'other.db' as o\"", "'create table t(x)'"}) {
    Outcome o = query(sql);
    EXPECT_EQ(o.exit_code, 1) << sql;
    EXPECT_NE(o.err.find("not authorized"), std::string::npos) << sql << ": " << o.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.file("other.db")));
  EXPECT_EQ(read_file(db_), before);
  EXPECT_EQ(query("'select count(*) from runs'").out, "count(*)\n1\n");
}

TEST_F(QueryTest, ErrorsHaveTheirExitCodes) {
  EXPECT_EQ(query("'selec 1'").exit_code, 1);
  EXPECT_EQ(query("'select 1; select 2'").exit_code, 2);
  EXPECT_EQ(query("--csv --json 'select 1'").exit_code, 2);
  EXPECT_EQ(streamlens("query --db " + dir_.file("missing.db") + " 'select 1'", here()).exit_code, 1);
  EXPECT_EQ(streamlens("query --db :memory: 'select 1'", here()).exit_code, 2);
}

}  // namespace
}  // namespace sl::cli_test
