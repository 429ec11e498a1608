#include "core/trace/compact_trace.h"

#include <algorithm>
#include <limits>

namespace sl::trace {

void EventColumns::reserve(size_t n) {
  start_.reserve(n);
  end_.reserve(n);
  name_.reserve(n);
  instruction_.reserve(n);
  seq_.reserve(n);
  iteration_.reserve(n);
  track_flags_.reserve(n);
}

uint32_t EventColumns::track_id(int32_t device, int32_t stream) {
  // Events come grouped by track: the last one almost always matches.
  if (last_track_ < tracks_.size() && tracks_[last_track_].device == device && tracks_[last_track_].stream == stream) {
    return last_track_;
  }
  const uint64_t key = static_cast<uint64_t>(static_cast<uint32_t>(device)) << 32 | static_cast<uint32_t>(stream);
  auto [it, inserted] = track_ids_.try_emplace(key, static_cast<uint32_t>(tracks_.size()));
  if (inserted) tracks_.push_back({device, stream});
  return last_track_ = it->second;
}

void EventColumns::push_back(const Event& e, int64_t seq) {
  uint32_t flags = static_cast<uint32_t>(e.kind) & kKindMask;
  if (e.stream_kind == StreamKind::kCommunication) flags |= kCommunicationBit;
  track_flags_.push_back(track_id(e.device, e.stream) << kTrackShift | flags);
  start_.push_back(e.start_ns);
  end_.push_back(e.end_ns);
  name_.push_back(e.name);
  instruction_.push_back(e.instruction);
  iteration_.push_back(e.iteration);
  seq_.push_back(seq >= 0 && seq < static_cast<int64_t>(kNoSeq) ? static_cast<uint32_t>(seq) : kNoSeq);
}

void EventColumns::truncate(size_t n) {
  if (n >= size()) return;
  start_.resize(n);
  end_.resize(n);
  name_.resize(n);
  instruction_.resize(n);
  seq_.resize(n);
  iteration_.resize(n);
  track_flags_.resize(n);
}

namespace {

// Applies `order` to one column through a scratch copy of that column only.
template <typename T>
void permute_column(std::vector<T>& column, const std::vector<uint32_t>& order) {
  std::vector<T> out(column.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = column[order[i]];
  column.swap(out);
}

}  // namespace

void EventColumns::permute(const std::vector<uint32_t>& order) {
  permute_column(start_, order);
  permute_column(end_, order);
  permute_column(name_, order);
  permute_column(instruction_, order);
  permute_column(seq_, order);
  permute_column(iteration_, order);
  permute_column(track_flags_, order);
}

int64_t CompactTrace::makespan_ns() const {
  if (events.empty()) return 0;
  int64_t first = std::numeric_limits<int64_t>::max();
  int64_t last = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < events.size(); ++i) {
    first = std::min(first, events.start_ns(i));
    last = std::max(last, events.end_ns(i));
  }
  return saturating_sub(last, first);
}

void CompactTrace::add_counter(std::string_view name, int64_t delta, std::string_view description) {
  for (Counter& c : counters) {
    if (c.name == name) {
      c.value += delta;
      return;
    }
  }
  counters.push_back({std::string(name), delta, std::string(description)});
}

CompactTrace compact_trace(const Trace& trace) {
  CompactTrace out;
  out.strings = trace.strings;
  out.events.reserve(trace.events.size());
  for (size_t i = 0; i < trace.events.size(); ++i) out.events.push_back(trace.events[i], static_cast<int64_t>(i));
  out.dependencies = trace.dependencies;
  out.counters = trace.counters;
  return out;
}

}  // namespace sl::trace
