// allocate_intervals: the offset allocator behind buffer assignment.
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <set>

#include "core/sched/buffer_assignment.h"

namespace sl::sched {
namespace {

int64_t align_up(int64_t value, int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

// Free gaps below `top`, findable by offset (to merge neighbours) and by size
// (best fit). Memory above `top` is free; a gap never touches `top`.
class Arena {
 public:
  int64_t allocate(int64_t size) {
    auto fit = by_size_.lower_bound({size, INT64_MIN});
    if (fit != by_size_.end()) {
      auto [gap_size, offset] = *fit;
      erase_gap(offset, gap_size);
      if (gap_size > size) insert_gap(offset + size, gap_size - size);
      return offset;
    }
    int64_t offset = top_;
    top_ += size;
    high_water_ = std::max(high_water_, top_);
    return offset;
  }

  void release(int64_t offset, int64_t size) {
    auto next = by_offset_.lower_bound(offset);
    if (next != by_offset_.end() && next->first == offset + size) {
      size += next->second;
      erase_gap(next->first, next->second);
    }
    auto prev = by_offset_.lower_bound(offset);
    if (prev != by_offset_.begin()) {
      --prev;
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        erase_gap(prev->first, prev->second);
      }
    }
    if (offset + size == top_) {
      top_ = offset;
    } else {
      insert_gap(offset, size);
    }
  }

  int64_t high_water() const { return high_water_; }

 private:
  void insert_gap(int64_t offset, int64_t size) {
    by_offset_.emplace(offset, size);
    by_size_.emplace(size, offset);
  }
  void erase_gap(int64_t offset, int64_t size) {
    by_offset_.erase(offset);
    by_size_.erase({size, offset});
  }

  std::map<int64_t, int64_t> by_offset_;
  std::set<std::pair<int64_t, int64_t>> by_size_;
  int64_t top_ = 0;
  int64_t high_water_ = 0;
};

int64_t peak_live_bytes_sorted(const std::vector<LiveInterval>& intervals) {
  std::vector<std::pair<int64_t, int64_t>> deltas;  // (position, +size / -size)
  deltas.reserve(intervals.size() * 2);
  for (const LiveInterval& interval : intervals) {
    if (interval.size <= 0) continue;
    deltas.emplace_back(interval.start, interval.size);
    deltas.emplace_back(interval.end + 1, -interval.size);
  }
  std::sort(deltas.begin(), deltas.end());  // frees before allocations at one position
  int64_t live = 0;
  int64_t peak = 0;
  for (const auto& [position, delta] : deltas) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

int64_t peak_live_bytes(const std::vector<LiveInterval>& intervals) {
  // Positions are thunk indices, dense over a range about as long as the
  // list: summing the changes per position in one array replaces a sort of
  // 2n events (a sixth of lowering a large program). The peak is taken after
  // all changes at a position, which equals the frees-first order of the sort.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const LiveInterval& interval : intervals) {
    if (interval.size <= 0) continue;
    lo = std::min({lo, interval.start, interval.end + 1});
    hi = std::max({hi, interval.start, interval.end + 1});
  }
  if (lo > hi) return 0;
  int64_t span = 0;
  if (__builtin_sub_overflow(hi, lo, &span) || static_cast<uint64_t>(span) > 4 * intervals.size() + 1024) {
    return peak_live_bytes_sorted(intervals);
  }
  std::vector<int64_t> change(static_cast<size_t>(span) + 1, 0);
  for (const LiveInterval& interval : intervals) {
    if (interval.size <= 0) continue;
    change[static_cast<size_t>(interval.start - lo)] += interval.size;
    change[static_cast<size_t>(interval.end + 1 - lo)] -= interval.size;
  }
  int64_t live = 0;
  int64_t peak = 0;
  for (int64_t delta : change) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace

IntervalAllocation allocate_intervals(const std::vector<LiveInterval>& intervals, int64_t alignment) {
  IntervalAllocation out;
  out.offsets.assign(intervals.size(), -1);
  std::vector<size_t> order(intervals.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) {
                     // Larger first among values born together: a GEMM's workspace takes the
                     // place the previous workspace just left.
                     if (intervals[a].start != intervals[b].start) return intervals[a].start < intervals[b].start;
                     return intervals[a].size > intervals[b].size;
                   });

  using Active = std::pair<int64_t, size_t>;  // (end, interval)
  std::priority_queue<Active, std::vector<Active>, std::greater<>> active;
  Arena arena;
  for (size_t i : order) {
    const LiveInterval& interval = intervals[i];
    if (interval.size <= 0) continue;
    while (!active.empty() && active.top().first < interval.start) {
      size_t done = active.top().second;
      active.pop();
      arena.release(out.offsets[done], align_up(intervals[done].size, alignment));
    }
    out.offsets[i] = arena.allocate(align_up(interval.size, alignment));
    active.emplace(interval.end, i);
  }
  out.arena_bytes = arena.high_water();
  out.peak_bytes = peak_live_bytes(intervals);
  return out;
}

}  // namespace sl::sched
