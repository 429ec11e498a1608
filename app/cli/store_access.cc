#include "app/cli/store_access.h"

#include <sys/stat.h>

#include <cstdio>

#include "app/cli/terminal.h"

namespace sl::cli {

Result<std::unique_ptr<trace::TraceStore>> open_store_for_writing(const std::string& db) {
  struct stat st {};
  const bool was_empty = ::stat(db.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
  auto store = trace::TraceStore::open(db);
  if (store && was_empty) {
    print_text(stderr, "streamlens: note: " + db + " was an empty (0-byte) file; it is now a streamlens database\n");
  }
  return store;
}

}  // namespace sl::cli
