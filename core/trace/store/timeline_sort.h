#pragma once
// Pure helpers of the store's read path, unit-tested on their own: putting
// loaded events in timeline order, and finding an event by its sequence number.

#include <cstdint>
#include <utility>
#include <vector>

#include "core/trace/trace.h"

namespace sl::trace::store {

// Puts events in timeline order, (device, stream, start, seq), moving `seqs`
// along (same length as *events). Chunks come back in that order unless a
// track's appends overlap in time (or version 1 rows follow chunks); only then
// is anything sorted.
void sort_timeline(std::vector<Event>* events, std::vector<int64_t>* seqs);

// Sequence number -> event index. Memory stays proportional to the number of
// events whatever the numbers are: a damaged file with a seq near 2^32 must
// not make a three-event run allocate gigabytes.
class SeqIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  explicit SeqIndex(const std::vector<int64_t>& seqs);
  // 32-bit seqs (a CompactTrace's); `absent` marks an event without one.
  SeqIndex(const std::vector<uint32_t>& seqs, uint32_t absent);
  uint32_t find(int64_t seq) const;  // kNone when no event has it

 private:
  std::vector<uint32_t> dense_;                       // when the seqs are small
  std::vector<std::pair<int64_t, uint32_t>> sorted_;  // otherwise, sorted by seq
};

}  // namespace sl::trace::store
