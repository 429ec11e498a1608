#include "app/gui/layout/compare.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <tuple>

namespace sl::gui {
namespace {

using Key = std::tuple<int32_t, std::string, int32_t>;  // device, instruction (or name), occurrence

// The same numbering as core/trace/compare.cc: occurrences in (start, end,
// stream, index) order per (device, key).
std::map<Key, uint32_t> keyed(const trace::Trace& t) {
  const auto& ev = t.events;
  std::vector<uint32_t> order(ev.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return std::tie(ev[x].start_ns, ev[x].end_ns, ev[x].stream, x) <
           std::tie(ev[y].start_ns, ev[y].end_ns, ev[y].stream, y);
  });
  std::map<std::pair<int32_t, std::string>, int32_t> seen;
  std::map<Key, uint32_t> out;
  for (uint32_t i : order) {
    const auto& e = ev[i];
    std::string key = e.instruction != 0 ? t.instruction_of(e) : t.name_of(e);
    int32_t occurrence = seen[{e.device, key}]++;
    out.emplace(Key{e.device, std::move(key), occurrence}, i);
  }
  return out;
}

int64_t lookup(const std::map<Key, uint32_t>& keys, const trace::InstructionDelta& d) {
  auto it = keys.find(Key{d.device, d.instruction, d.occurrence});
  return it == keys.end() ? -1 : static_cast<int64_t>(it->second);
}

}  // namespace

bool delta_changed(const trace::InstructionDelta& d, const CompareOptions& options) {
  if (!d.matched()) return true;
  if (d.stream_a != d.stream_b) return true;
  int64_t threshold =
      std::max<int64_t>(options.min_duration_delta_ns,
                        static_cast<int64_t>(options.min_duration_delta_fraction * static_cast<double>(d.duration_a_ns)));
  return std::llabs(d.duration_delta_ns()) > threshold;
}

Comparison compare_for_view(const trace::RunInfo& base_info, const trace::Trace& base,
                            const trace::RunInfo& current_info, const trace::Trace& current,
                            const CompareOptions& options) {
  Comparison c;
  c.summary = trace::compare_runs(base_info, base, current_info, current);
  c.base_changed.assign(base.events.size(), 0);
  c.current_changed.assign(current.events.size(), 0);
  const auto base_keys = keyed(base);
  const auto current_keys = keyed(current);
  for (const trace::InstructionDelta& d : c.summary.deltas) {
    int64_t a = d.in_a ? lookup(base_keys, d) : -1;
    int64_t b = d.in_b ? lookup(current_keys, d) : -1;
    bool changed = delta_changed(d, options);
    c.base_event.push_back(a);
    c.current_event.push_back(b);
    c.changed.push_back(changed ? 1 : 0);
    if (!changed) continue;
    ++c.changed_count;
    if (a >= 0) c.base_changed[static_cast<size_t>(a)] = 1;
    if (b >= 0) c.current_changed[static_cast<size_t>(b)] = 1;
  }
  return c;
}

}  // namespace sl::gui
