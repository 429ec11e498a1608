// libFuzzer target: the Nsight Systems importer. The input is SQL run on a
// fresh database that already has the tables an export has, so mutations
// reach the importer's handling of odd values (NULLs, huge or negative
// timestamps, missing strings, wrong types) instead of dying at the header.

#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/trace/store/nsys_import.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kTables = R"sql(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, smCount INT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT, end INT, deviceId INT, streamId INT, correlationId INT,
  demangledName INT, shortName INT);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INT, end INT, deviceId INT, streamId INT, correlationId INT,
  bytes INT, copyKind INT);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INT, end INT, deviceId INT, streamId INT, correlationId INT,
  bytes INT);
)sql";

std::string scratch_path() {
  static const std::string path = "/tmp/sl-nsys-fuzz-" + std::to_string(getpid()) + ".sqlite";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = scratch_path();
  unlink(path.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) std::abort();
  sqlite3_exec(db, kTables, nullptr, nullptr, nullptr);
  std::string sql(reinterpret_cast<const char*>(data), size);
  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);  // bad SQL just leaves less data
  sqlite3_close(db);
  auto run = sl::trace::import_nsys_sqlite(path);
  if (!run) {
    sl::fuzz::check_error(run.status());
  } else {
    for (const sl::trace::Event& e : run->trace.events) {
      if (e.end_ns < e.start_ns || e.start_ns < 0) std::abort();
    }
  }
  unlink(path.c_str());
  return 0;
}
