#pragma once
// Helpers the store's read paths share (store_read.cc, store_read_compact.cc).

#include <sys/mman.h>

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "core/trace/store/sqlite_db.h"

namespace sl::trace::store {

// Page faults dominate filling a fresh 70 MB vector on some virtual machines;
// transparent huge pages (where the kernel offers them on request) cut them
// 512-fold. Advice only: failure changes nothing.
inline void advise_huge_pages(void* data, size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  auto begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  auto end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// A database string id as held in Event::name until remapped; ids beyond
// 32 bits (never written by us) become one that no string has.
inline uint32_t string_id(int64_t id) {
  return id >= 0 && id < static_cast<int64_t>(UINT32_MAX) ? static_cast<uint32_t>(id) : UINT32_MAX;
}

// Maps database string ids to the loaded trace's ids. Dense ids (the normal
// case) use a vector; absurdly large ones fall back to a hash map.
class StringIdMap {
 public:
  void note(int64_t db_id) {
    if (db_id >= 0 && db_id < kDenseLimit) {
      if (static_cast<size_t>(db_id) >= dense_.size()) dense_.resize(static_cast<size_t>(db_id) + 1, kUnset);
      if (dense_[static_cast<size_t>(db_id)] == kUnset) {
        dense_[static_cast<size_t>(db_id)] = 0;
        order_.push_back(db_id);
      }
    } else if (sparse_.emplace(db_id, 0).second) {
      order_.push_back(db_id);
    }
  }
  void set(int64_t db_id, uint32_t local) {
    if (db_id >= 0 && db_id < kDenseLimit) dense_[static_cast<size_t>(db_id)] = local;
    else sparse_[db_id] = local;
  }
  uint32_t get(int64_t db_id) const {
    if (db_id >= 0 && db_id < kDenseLimit) return dense_[static_cast<size_t>(db_id)];
    return sparse_.at(db_id);
  }
  const std::vector<int64_t>& order() const { return order_; }

 private:
  static constexpr int64_t kDenseLimit = 1 << 24;
  static constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> dense_;
  std::unordered_map<int64_t, uint32_t> sparse_;
  std::vector<int64_t> order_;
};

// One read transaction for a whole load (events, edges and counters from
// the same snapshot while a writer keeps appending): BEGIN now, COMMIT when
// the load returns, whatever it returns.
class ReadTransaction {
 public:
  explicit ReadTransaction(Database& db) : db_(db) {}
  ~ReadTransaction() {
    if (begun_) db_.exec("COMMIT");
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  Status begin() {
    Status s = db_.exec("BEGIN");
    begun_ = s.is_ok();
    return s;
  }

 private:
  Database& db_;
  bool begun_ = false;
};

}  // namespace sl::trace::store
