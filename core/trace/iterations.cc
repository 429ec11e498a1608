#include "core/trace/iterations.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace sl::trace {
namespace {

// A trace with the same strings and counters, no events yet.
Trace empty_like(const Trace& trace) {
  Trace out;
  out.strings = trace.strings;
  out.counters = trace.counters;
  return out;
}

// Keeps the dependencies whose both ends survived, renumbered by `new_index`.
void keep_dependencies(const Trace& from, const std::vector<int64_t>& new_index, Trace& to) {
  for (const Dependency& d : from.dependencies) {
    if (d.from >= new_index.size() || d.to >= new_index.size()) continue;
    int64_t f = new_index[d.from], t = new_index[d.to];
    if (f >= 0 && t >= 0 && f != t) to.dependencies.push_back({static_cast<uint32_t>(f), static_cast<uint32_t>(t)});
  }
}

}  // namespace

std::vector<int32_t> iterations_of(const Trace& trace) {
  std::vector<int32_t> out;
  for (const Event& e : trace.events) {
    if (e.iteration >= 0) out.push_back(e.iteration);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Trace one_iteration(const Trace& trace, int32_t iteration) {
  Trace out = empty_like(trace);
  std::vector<int64_t> new_index(trace.events.size(), -1);
  std::map<int32_t, int64_t> origin;  // per device: its first start in the iteration
  for (const Event& e : trace.events) {
    if (e.iteration != iteration) continue;
    auto [it, inserted] = origin.try_emplace(e.device, e.start_ns);
    if (!inserted) it->second = std::min(it->second, e.start_ns);
  }
  for (size_t i = 0; i < trace.events.size(); ++i) {
    Event e = trace.events[i];
    if (e.iteration != iteration) continue;
    e.start_ns -= origin.at(e.device);
    e.end_ns -= origin.at(e.device);
    new_index[i] = static_cast<int64_t>(out.events.size());
    out.events.push_back(e);
  }
  keep_dependencies(trace, new_index, out);
  return out;
}

std::vector<IterationLength> iteration_lengths(const Trace& trace) {
  std::map<std::pair<int32_t, int32_t>, std::pair<int64_t, int64_t>> span;  // (iteration, device) -> first, last
  for (const Event& e : trace.events) {
    if (e.iteration < 0) continue;  // outside every step (a linked capture's autotuning)
    auto [it, inserted] = span.try_emplace({e.iteration, e.device}, e.start_ns, e.end_ns);
    if (!inserted) {
      it->second.first = std::min(it->second.first, e.start_ns);
      it->second.second = std::max(it->second.second, e.end_ns);
    }
  }
  std::map<int32_t, int64_t> longest;  // iteration -> its longest device span
  for (const auto& [key, s] : span) longest[key.first] = std::max(longest[key.first], s.second - s.first);
  std::vector<IterationLength> out;
  out.reserve(longest.size());
  for (const auto& [iteration, length] : longest) out.push_back({iteration, length});
  std::sort(out.begin(), out.end(), [](const IterationLength& x, const IterationLength& y) {
    return std::tie(x.length_ns, x.iteration) < std::tie(y.length_ns, y.iteration);
  });
  return out;
}

int32_t median_iteration(const Trace& trace) {
  const std::vector<IterationLength> by_length = iteration_lengths(trace);
  if (by_length.empty()) return -1;
  return by_length[(by_length.size() - 1) / 2].iteration;
}

Trace representative_iteration(const Trace& trace) {
  if (iterations_of(trace).size() <= 1) return trace;
  return one_iteration(trace, median_iteration(trace));
}

Trace instruction_spans(const Trace& trace) {
  Trace out = empty_like(trace);
  std::vector<int64_t> new_index(trace.events.size(), -1);
  using LaunchKey = std::tuple<int32_t, uint32_t, int32_t, int64_t>;  // device, instruction, iteration, correlation
  std::map<LaunchKey, int64_t> merged;
  std::vector<int64_t> longest;  // per output event: its longest member's duration
  for (size_t i = 0; i < trace.events.size(); ++i) {
    const Event& e = trace.events[i];
    if (e.instruction != 0 && e.correlation != 0) {
      auto [it, inserted] =
          merged.try_emplace(LaunchKey{e.device, e.instruction, e.iteration, e.correlation}, out.events.size());
      if (!inserted) {
        const size_t at = static_cast<size_t>(it->second);
        Event& m = out.events[at];
        if (e.duration_ns() > longest[at]) {  // a GEMM, not the memset before it
          longest[at] = e.duration_ns();
          m.kind = e.kind;
          m.name = e.name;
        }
        m.start_ns = std::min(m.start_ns, e.start_ns);
        m.end_ns = std::max(m.end_ns, e.end_ns);
        m.bytes = std::max(m.bytes, e.bytes);
        m.flops = std::max(m.flops, e.flops);
        new_index[i] = it->second;
        continue;
      }
    }
    new_index[i] = static_cast<int64_t>(out.events.size());
    out.events.push_back(e);
    longest.push_back(e.duration_ns());
  }
  keep_dependencies(trace, new_index, out);
  return out;
}

}  // namespace sl::trace
