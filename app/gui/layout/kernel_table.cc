#include "app/gui/layout/kernel_table.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <queue>
#include <unordered_map>

#include "app/gui/layout/track_index.h"

namespace sl::gui {
namespace {

size_t dominant(const std::array<int64_t, kKinds>& by_kind, size_t fallback) {
  size_t best = fallback;
  for (size_t k = 0; k < kKinds; ++k) {
    if (by_kind[k] > by_kind[best]) best = k;
  }
  return best;
}

template <typename T>
int64_t lower_median(std::vector<T>& values) {
  auto mid = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), mid, values.end());
  return static_cast<int64_t>(*mid);
}

bool in_range(const trace::EventRef& e, int64_t t0, int64_t t1) { return e.start_ns >= t0 && e.start_ns < t1; }

}  // namespace

std::vector<KernelRow> kernel_table(const trace::CompactTrace& trace, int64_t t0, int64_t t1) {
  struct Acc {
    KernelRow row;
    // Kept for the median: 32 bits each unless a duration of this name needs more.
    std::vector<uint32_t> narrow;
    std::vector<int64_t> wide;
    std::array<int64_t, kKinds> by_kind{};
  };
  std::unordered_map<uint32_t, Acc> by_name;
  // Counted first so each name's durations are allocated once at their
  // size (growing them doubled the peak), and their width known.
  for (const trace::EventRef& e : trace.events) {
    if (!in_range(e, t0, t1)) continue;
    Acc& a = by_name[e.name];
    ++a.row.count;
    a.row.max_ns = std::max(a.row.max_ns, e.duration_ns());
  }
  for (auto& [id, a] : by_name) {
    if (a.row.max_ns <= static_cast<int64_t>(UINT32_MAX)) {
      a.narrow.reserve(static_cast<size_t>(a.row.count));
    } else {
      a.wide.reserve(static_cast<size_t>(a.row.count));
    }
    a.row.count = 0;
    a.row.max_ns = 0;
  }
  int64_t all = 0;
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const trace::EventRef& e = trace.events[i];
    if (!in_range(e, t0, t1)) continue;
    Acc& a = by_name.find(e.name)->second;
    const int64_t d = std::max<int64_t>(0, e.duration_ns());
    if (a.row.count == 0) {
      a.row.name = trace.name_of(e);
      a.row.kind = e.kind;
      a.row.min_ns = d;
    }
    ++a.row.count;
    a.row.total_ns = trace::saturating_add(a.row.total_ns, d);
    a.row.min_ns = std::min(a.row.min_ns, d);
    if (a.row.longest_event < 0 || d > a.row.max_ns) {
      a.row.max_ns = d;
      a.row.longest_event = static_cast<int64_t>(i);
    }
    a.by_kind[static_cast<size_t>(e.kind)] += d;
    if (a.wide.capacity() > 0) {
      a.wide.push_back(d);
    } else {
      a.narrow.push_back(static_cast<uint32_t>(d));
    }
    all = trace::saturating_add(all, d);
  }
  std::vector<KernelRow> rows;
  rows.reserve(by_name.size());
  for (auto& [id, a] : by_name) {
    KernelRow r = std::move(a.row);
    r.mean_ns = static_cast<double>(r.total_ns) / static_cast<double>(r.count);
    r.median_ns = a.wide.empty() ? lower_median(a.narrow) : lower_median(a.wide);
    r.share = all > 0 ? static_cast<double>(r.total_ns) / static_cast<double>(all) : 0.0;
    r.kind = static_cast<trace::EventKind>(dominant(a.by_kind, static_cast<size_t>(r.kind)));
    rows.push_back(std::move(r));
  }
  sort_kernel_rows(rows, KernelColumn::kTotal, false);
  return rows;
}

void sort_kernel_rows(std::vector<KernelRow>& rows, KernelColumn column, bool ascending) {
  auto key = [column](const KernelRow& r) -> double {
    switch (column) {
      case KernelColumn::kName: return 0;
      case KernelColumn::kCount: return static_cast<double>(r.count);
      case KernelColumn::kTotal: return static_cast<double>(r.total_ns);
      case KernelColumn::kShare: return r.share;
      case KernelColumn::kMean: return r.mean_ns;
      case KernelColumn::kMedian: return static_cast<double>(r.median_ns);
      case KernelColumn::kMin: return static_cast<double>(r.min_ns);
      case KernelColumn::kMax: return static_cast<double>(r.max_ns);
    }
    return 0;
  };
  std::sort(rows.begin(), rows.end(), [&](const KernelRow& a, const KernelRow& b) {
    if (column != KernelColumn::kName) {
      const double ka = key(a), kb = key(b);
      if (ka != kb) return ascending ? ka < kb : ka > kb;
      return a.name < b.name;  // ties always by name, A first
    }
    return ascending ? a.name < b.name : a.name > b.name;
  });
}

std::vector<uint32_t> longest_events(const trace::CompactTrace& trace, size_t n, int64_t t0, int64_t t1) {
  if (n == 0) return {};
  // Longer first; among equals the earlier start, then the lower index.
  auto longer = [&](uint32_t a, uint32_t b) {
    const trace::EventRef& x = trace.events[a];
    const trace::EventRef& y = trace.events[b];
    if (x.duration_ns() != y.duration_ns()) return x.duration_ns() > y.duration_ns();
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return a < b;
  };
  // A heap of the n best so far whose top is the worst of them: O(N log n).
  std::priority_queue<uint32_t, std::vector<uint32_t>, decltype(longer)> heap(longer);
  for (size_t i = 0; i < trace.events.size(); ++i) {
    if (!in_range(trace.events[i], t0, t1)) continue;
    const auto e = static_cast<uint32_t>(i);
    if (heap.size() < n) {
      heap.push(e);
    } else if (longer(e, heap.top())) {
      heap.pop();
      heap.push(e);
    }
  }
  std::vector<uint32_t> out;
  out.reserve(heap.size());
  while (!heap.empty()) {
    out.push_back(heap.top());
    heap.pop();
  }
  std::reverse(out.begin(), out.end());
  return out;
}

RangeStats range_stats(const trace::CompactTrace& trace, int64_t t0, int64_t t1, size_t longest_n) {
  RangeStats r;
  r.t0 = std::min(t0, t1);
  r.t1 = std::max(t0, t1);
  r.kernels = kernel_table(trace, r.t0, r.t1);
  for (const KernelRow& k : r.kernels) {
    r.events += k.count;
    r.busy_ns = trace::saturating_add(r.busy_ns, k.total_ns);
  }
  r.longest = longest_events(trace, longest_n, r.t0, r.t1);
  return r;
}

std::vector<StepSpan> step_spans(const trace::CompactTrace& trace) {
  std::map<int32_t, StepSpan> steps;
  for (const trace::EventRef& e : trace.events) {
    if (e.iteration < 0) continue;
    auto [it, inserted] = steps.try_emplace(e.iteration, StepSpan{e.iteration, e.start_ns, e.end_ns});
    it->second.start_ns = std::min(it->second.start_ns, e.start_ns);
    it->second.end_ns = std::max(it->second.end_ns, e.end_ns);
  }
  std::vector<StepSpan> out;
  if (steps.size() < 2) return out;
  out.reserve(steps.size());
  for (const auto& [id, s] : steps) out.push_back(s);
  return out;
}

Overview overview(const trace::CompactTrace& trace, int64_t begin_ns, int64_t end_ns, size_t bins) {
  Overview o;
  o.begin_ns = begin_ns;
  o.end_ns = std::max(end_ns, begin_ns + 1);
  if (bins == 0) return o;
  o.bins.resize(bins);
  std::vector<std::array<int64_t, kKinds>> by_kind(bins);
  const double bin_ns = static_cast<double>(o.end_ns - o.begin_ns) / static_cast<double>(bins);
  auto bin_of = [&](int64_t t) {
    const double b = static_cast<double>(t - o.begin_ns) / bin_ns;
    return static_cast<size_t>(std::clamp(b, 0.0, static_cast<double>(bins - 1)));
  };
  for (const trace::EventRef& e : trace.events) {
    const int64_t s = std::max(e.start_ns, o.begin_ns), t = std::min(e.end_ns, o.end_ns);
    if (t <= s) continue;
    // An event spread over the bins it covers, each getting its own part.
    for (size_t b = bin_of(s), last = bin_of(t - 1); b <= last; ++b) {
      const auto lo = std::max(s, o.begin_ns + static_cast<int64_t>(static_cast<double>(b) * bin_ns));
      const auto hi = std::min(t, o.begin_ns + static_cast<int64_t>(static_cast<double>(b + 1) * bin_ns));
      const int64_t part = b == last && b + 1 == bins ? t - lo : std::max<int64_t>(0, hi - lo);
      o.bins[b].busy_ns += part;
      by_kind[b][static_cast<size_t>(e.kind)] += part;
    }
  }
  for (size_t b = 0; b < bins; ++b) {
    o.bins[b].kind = static_cast<trace::EventKind>(dominant(by_kind[b], static_cast<size_t>(trace::EventKind::kOther)));
    o.max_busy_ns = std::max(o.max_busy_ns, o.bins[b].busy_ns);
  }
  return o;
}

}  // namespace sl::gui
