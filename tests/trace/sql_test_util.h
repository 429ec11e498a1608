#pragma once
// Raw SQL on a store file, under the store's feet: how the tests damage,
// age or hand-edit a database.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

namespace sl::trace::testing {

inline void run_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

}  // namespace sl::trace::testing
