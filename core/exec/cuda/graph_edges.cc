#include "core/exec/cuda/graph_edges.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>

namespace sl::exec::cuda {
namespace {

// Who last wrote, and who read since, each byte range of the arena: the
// standard last-writer / readers tracking, over ranges split where accesses
// begin and end.
class AccessTracker {
 public:
  // The earlier positions that an access of [begin, end) by `node` must wait for.
  void conflicts(int64_t begin, int64_t end, bool write, std::vector<int>* out) {
    for (auto it = first_overlapping(begin); it != segments_.end() && it->first < end; ++it) {
      if (it->second.writer >= 0) out->push_back(it->second.writer);
      if (write) out->insert(out->end(), it->second.readers.begin(), it->second.readers.end());
    }
  }
  void record(int64_t begin, int64_t end, bool write, int node) {
    split(begin);
    split(end);
    // Every byte of [begin, end) gets a segment (none crosses either end now).
    int64_t at = begin;
    for (auto it = segments_.lower_bound(begin); at < end; ++it) {
      if (it == segments_.end() || it->first > at) {
        const int64_t gap_end = it == segments_.end() ? end : std::min(end, it->first);
        it = segments_.emplace_hint(it, at, Segment{gap_end, -1, {}});
      }
      at = it->second.end;
    }
    for (auto it = segments_.lower_bound(begin); it != segments_.end() && it->first < end; ++it) {
      if (write) {
        it->second.writer = node;
        it->second.readers.clear();
      } else if (it->second.readers.empty() || it->second.readers.back() != node) {
        it->second.readers.push_back(node);
      }
    }
  }

 private:
  struct Segment {
    int64_t end;
    int writer;
    std::vector<int> readers;
  };
  std::map<int64_t, Segment>::iterator first_overlapping(int64_t begin) {
    auto it = segments_.upper_bound(begin);
    if (it != segments_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > begin) return prev;
    }
    return it;
  }
  // A segment boundary at `at`.
  void split(int64_t at) {
    auto it = first_overlapping(at);
    if (it == segments_.end() || it->first >= at || it->second.end <= at) return;
    Segment tail{it->second.end, it->second.writer, it->second.readers};
    it->second.end = at;
    segments_.emplace(at, std::move(tail));
  }
  std::map<int64_t, Segment> segments_;  // begin -> segment, disjoint
};

}  // namespace

GraphEdges graph_edges(const sched::DeviceProgram& program, const sched::CommandBuffer& buffer,
                       const std::function<bool(const sched::Thunk&)>& shared_state) {
  GraphEdges out;
  const size_t n = buffer.thunks.size();
  out.order.resize(n);
  std::iota(out.order.begin(), out.order.end(), 0u);
  std::stable_sort(out.order.begin(), out.order.end(),
                   [&](uint32_t a, uint32_t b) { return buffer.thunks[a] < buffer.thunks[b]; });
  std::vector<int> position(n);
  for (size_t p = 0; p < n; ++p) position[out.order[p]] = static_cast<int>(p);
  out.deps.resize(n);
  AccessTracker memory;
  int last_shared = -1;
  for (size_t p = 0; p < n; ++p) {
    const uint32_t node = out.order[p];
    const sched::Thunk& t = program.thunks[buffer.thunks[node]];
    std::vector<int>& deps = out.deps[p];
    for (int d : buffer.deps[node]) {
      const int from = position[static_cast<size_t>(d)];
      if (from < static_cast<int>(p)) {
        deps.push_back(from);
        ++out.xla_edges;
      } else {
        ++out.dropped_edges;
      }
    }
    const size_t from_xla = deps.size();
    std::vector<int> hazards;
    auto each_access = [&](auto&& f) {
      for (const sched::BufferSlice& s : t.operands) f(s, false);
      for (const sched::BufferSlice& s : t.results) f(s, true);
      f(t.workspace, true);
    };
    each_access([&](const sched::BufferSlice& s, bool write) {
      if (s.offset >= 0 && s.size > 0) memory.conflicts(s.offset, s.offset + s.size, write, &hazards);
    });
    if (shared_state && shared_state(t)) {
      if (last_shared >= 0) hazards.push_back(last_shared);
      last_shared = static_cast<int>(p);
    }
    // Reads first: a node that reads and writes a range ends as its writer.
    each_access([&](const sched::BufferSlice& s, bool write) {
      if (!write && s.offset >= 0 && s.size > 0) memory.record(s.offset, s.offset + s.size, false, static_cast<int>(p));
    });
    each_access([&](const sched::BufferSlice& s, bool write) {
      if (write && s.offset >= 0 && s.size > 0) memory.record(s.offset, s.offset + s.size, true, static_cast<int>(p));
    });
    std::sort(hazards.begin(), hazards.end());
    for (int h : hazards) {
      if (h == static_cast<int>(p)) continue;
      if (std::find(deps.begin(), deps.end(), h) != deps.end()) continue;
      deps.push_back(h);
    }
    out.hazard_edges += static_cast<int64_t>(deps.size() - from_xla);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  }
  return out;
}

}  // namespace sl::exec::cuda
