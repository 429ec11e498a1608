// Files that are not ours are refused with kInvalidInput naming the file and
// are left byte-identical (docs/store.md).

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <random>

#include "core/trace/store/trace_store.h"
#include "tests/trace/sql_test_util.h"
#include "tests/trace/trace_test_util.h"

namespace sl::trace {
namespace {

using testing::read_bytes;
using testing::ScratchDir;
using testing::write_bytes;

using testing::run_sql;

// Every mode refuses `path` with kInvalidInput naming it, leaving it unchanged.
void expect_refused(const std::string& path, const std::string& why_fragment) {
  std::string before = read_bytes(path);
  for (auto mode : {TraceStore::Mode::kCreateIfMissing, TraceStore::Mode::kOpenExisting,
                    TraceStore::Mode::kReadOnly}) {
    auto store = TraceStore::open(path, mode);
    ASSERT_FALSE(store.is_ok());
    EXPECT_EQ(store.status().code(), ErrorCode::kInvalidInput);
    EXPECT_NE(store.status().message().find(path), std::string::npos) << store.status().message();
    EXPECT_NE(store.status().message().find(why_fragment), std::string::npos) << store.status().message();
  }
  EXPECT_EQ(before, read_bytes(path));
}

TEST(StoreOpenTest, RandomBytesAreRefused) {
  ScratchDir dir;
  std::string path = dir.file("random.db");
  std::mt19937 rng(7);
  std::string bytes(8192, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  write_bytes(path, bytes);
  expect_refused(path, "not an SQLite database");
}

TEST(StoreOpenTest, TextFileIsRefused) {
  ScratchDir dir;
  std::string path = dir.file("notes.txt");
  write_bytes(path, "HloModule m\nENTRY e { ROOT p = f32[] parameter(0) }\n");
  expect_refused(path, "not an SQLite database");
}

TEST(StoreOpenTest, ForeignSqliteDatabaseIsRefused) {
  ScratchDir dir;
  std::string path = dir.file("other.db");
  run_sql(path, "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'a');");
  expect_refused(path, "customers");
}

TEST(StoreOpenTest, ForeignMetaTableIsRefused) {
  ScratchDir dir;
  std::string path = dir.file("other.db");
  run_sql(path, "CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('application', 'someone');");
  expect_refused(path, "not a streamlens database");
}

TEST(StoreOpenTest, NewerSchemaVersionIsRefused) {
  ScratchDir dir;
  std::string path = dir.file("new.db");
  {
    auto store = TraceStore::open(path);
    ASSERT_TRUE(store.is_ok());
  }
  run_sql(path, "UPDATE meta SET value = '99' WHERE key = 'schema_version'; PRAGMA wal_checkpoint(TRUNCATE);");
  expect_refused(path, "newer streamlens (schema version 99");
}

TEST(StoreOpenTest, DamagedPagesAreRefused) {
  ScratchDir dir;
  std::string path = dir.file("damaged.db");
  {
    auto store = TraceStore::open(path);
    ASSERT_TRUE(store.is_ok());
  }
  run_sql(path, "PRAGMA journal_mode = DELETE;");
  std::string bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 4096u);
  // Keep the 100-byte header, overwrite the rest of page 1 (the schema).
  for (size_t i = 100; i < 4096; ++i) bytes[i] = static_cast<char>(0xA5);
  write_bytes(path, bytes);
  std::string before = read_bytes(path);
  for (auto mode : {TraceStore::Mode::kCreateIfMissing, TraceStore::Mode::kReadOnly}) {
    auto store = TraceStore::open(path, mode);
    ASSERT_FALSE(store.is_ok());
    EXPECT_EQ(store.status().code(), ErrorCode::kInvalidInput) << store.status().message();
    EXPECT_NE(store.status().message().find(path), std::string::npos);
  }
  EXPECT_EQ(before, read_bytes(path));
}

TEST(StoreOpenTest, EmptyFilesBecomeStores) {
  ScratchDir dir;
  std::string empty = dir.file("empty.db");
  write_bytes(empty, "");
  EXPECT_FALSE(TraceStore::open(empty, TraceStore::Mode::kReadOnly).is_ok());
  EXPECT_EQ(read_bytes(empty), "");
  auto store = TraceStore::open(empty);
  ASSERT_TRUE(store.is_ok()) << store.status().message();
  EXPECT_TRUE((*store)->list_runs()->empty());

  std::string blank_sqlite = dir.file("blank.db");
  run_sql(blank_sqlite, "PRAGMA user_version = 0; VACUUM;");
  auto store2 = TraceStore::open(blank_sqlite);
  EXPECT_TRUE(store2.is_ok()) << store2.status().message();
}

}  // namespace
}  // namespace sl::trace
