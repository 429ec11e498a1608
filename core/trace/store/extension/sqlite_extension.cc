// libstreamlens_sqlite: the `events` virtual table for any SQLite host
// (`.load libstreamlens_sqlite` in the sqlite3 shell, `load_extension` in
// Python). SQLite calls the entry point named after the file,
// sqlite3_streamlenssqlite_init, and falls back to sqlite3_extension_init.

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "core/trace/store/events_vtab.h"

namespace {

int init(sqlite3* db, char** error, const sqlite3_api_routines* api) {
  SQLITE_EXTENSION_INIT2(api);
  return sl::trace::store::register_events_table(db, error);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int sqlite3_extension_init(sqlite3* db, char** error,
                                                                   const sqlite3_api_routines* api) {
  return init(db, error, api);
}

__attribute__((visibility("default"))) int sqlite3_streamlenssqlite_init(sqlite3* db, char** error,
                                                                         const sqlite3_api_routines* api) {
  return init(db, error, api);
}

}  // extern "C"
