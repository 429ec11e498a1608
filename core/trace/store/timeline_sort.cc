#include "core/trace/store/timeline_sort.h"

#include <algorithm>
#include <numeric>

namespace sl::trace::store {

void sort_timeline(std::vector<Event>* events, std::vector<int64_t>* seqs) {
  const size_t n = events->size();
  auto before = [&](size_t a, size_t b) {
    const Event& x = (*events)[a];
    const Event& y = (*events)[b];
    if (x.device != y.device) return x.device < y.device;
    if (x.stream != y.stream) return x.stream < y.stream;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return (*seqs)[a] < (*seqs)[b];
  };
  size_t i = 1;
  while (i < n && !before(i, i - 1)) ++i;
  if (i >= n) return;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), before);
  // Apply the permutation in place, cycle by cycle (no second copy of the events).
  for (size_t start = 0; start < n; ++start) {
    if (order[start] == start) continue;
    Event e = (*events)[start];
    int64_t seq = (*seqs)[start];
    size_t at = start;
    while (order[at] != start) {
      size_t from = order[at];
      (*events)[at] = (*events)[from];
      (*seqs)[at] = (*seqs)[from];
      order[at] = static_cast<uint32_t>(at);
      at = from;
    }
    (*events)[at] = e;
    (*seqs)[at] = seq;
    order[at] = static_cast<uint32_t>(at);
  }
}

SeqIndex::SeqIndex(const std::vector<int64_t>& seqs) {
  const size_t n = seqs.size();
  int64_t max_seq = -1;
  bool dense = n < kNone;
  for (int64_t s : seqs) {
    dense = dense && s >= 0;
    max_seq = std::max(max_seq, s);
  }
  // Seqs we write count 0, 1, 2... per run; a table a few times the event
  // count is still cheap, anything sparser is looked up by binary search.
  const auto dense_limit = static_cast<int64_t>(4 * n + 1024);
  if (dense && max_seq < dense_limit) {
    dense_.assign(static_cast<size_t>(max_seq + 1), kNone);
    for (size_t i = 0; i < n; ++i) dense_[static_cast<size_t>(seqs[i])] = static_cast<uint32_t>(i);
    return;
  }
  sorted_.reserve(n);
  for (size_t i = 0; i < n && i < kNone; ++i) sorted_.emplace_back(seqs[i], static_cast<uint32_t>(i));
  // Stable: of duplicate seqs (only in damaged files) the last one wins, as in the dense table.
  std::stable_sort(sorted_.begin(), sorted_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

SeqIndex::SeqIndex(const std::vector<uint32_t>& seqs, uint32_t absent) {
  const size_t n = seqs.size();
  uint32_t max_seq = 0;
  for (uint32_t s : seqs) {
    if (s != absent) max_seq = std::max(max_seq, s);
  }
  const auto dense_limit = static_cast<uint64_t>(4 * n + 1024);
  if (n < kNone && max_seq < dense_limit) {
    dense_.assign(n == 0 ? 0 : static_cast<size_t>(max_seq) + 1, kNone);
    for (size_t i = 0; i < n; ++i) {
      if (seqs[i] != absent) dense_[seqs[i]] = static_cast<uint32_t>(i);
    }
    return;
  }
  sorted_.reserve(n);
  for (size_t i = 0; i < n && i < kNone; ++i) {
    if (seqs[i] != absent) sorted_.emplace_back(seqs[i], static_cast<uint32_t>(i));
  }
  std::stable_sort(sorted_.begin(), sorted_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

uint32_t SeqIndex::find(int64_t seq) const {
  if (sorted_.empty()) {
    return seq >= 0 && static_cast<uint64_t>(seq) < dense_.size() ? dense_[static_cast<size_t>(seq)] : kNone;
  }
  auto it = std::upper_bound(sorted_.begin(), sorted_.end(), seq,
                             [](int64_t s, const auto& entry) { return s < entry.first; });
  if (it == sorted_.begin() || std::prev(it)->first != seq) return kNone;
  return std::prev(it)->second;
}

}  // namespace sl::trace::store
