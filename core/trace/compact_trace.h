#pragma once
// A trace for viewers of long runs: the events as columns of what drawing,
// search and statistics need (36 bytes an event instead of Event's 64),
// without bytes, flops and correlation, which a viewer reads from the store
// for the one event it details (TraceStore::load_event_extras).

#include <cstdint>
#include <iterator>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/trace/trace.h"

namespace sl::trace {

// One event of a CompactTrace, by value: Event's fields less bytes, flops and correlation.
struct EventRef {
  int32_t device = 0;
  int32_t stream = 0;
  StreamKind stream_kind = StreamKind::kCompute;
  EventKind kind = EventKind::kOther;
  uint32_t name = 0;
  uint32_t instruction = 0;
  int32_t iteration = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t duration_ns() const { return saturating_sub(end_ns, start_ns); }
};

class EventColumns {
 public:
  static constexpr uint32_t kNoSeq = UINT32_MAX;

  size_t size() const { return start_.size(); }
  bool empty() const { return start_.empty(); }
  inline EventRef operator[](size_t i) const;
  int64_t start_ns(size_t i) const { return start_[i]; }
  int64_t end_ns(size_t i) const { return end_[i]; }
  uint32_t name(size_t i) const { return name_[i]; }
  uint32_t instruction(size_t i) const { return instruction_[i]; }
  EventKind kind(size_t i) const { return static_cast<EventKind>(track_flags_[i] & kKindMask); }
  // The store's sequence number of event i (what its dependencies and
  // load_event_extras name); kNoSeq when it does not fit 32 bits.
  uint32_t seq(size_t i) const { return seq_[i]; }
  const std::vector<uint32_t>& seqs() const { return seq_; }
  static constexpr size_t kMaxTracks = size_t{1} << 24;
  size_t track_count() const { return tracks_.size(); }  // beyond kMaxTracks, track ids wrap

  void reserve(size_t n);
  // At most kMaxTracks tracks (a store's are far fewer: each holds chunks).
  void push_back(const Event& e, int64_t seq);
  // Drops events from position n on (a chunk that failed to decode).
  void truncate(size_t n);
  // Event names and instructions are rewritten when strings are remapped.
  void set_strings(size_t i, uint32_t name, uint32_t instruction) {
    name_[i] = name;
    instruction_[i] = instruction;
  }
  // Puts event order[i] at position i, for every i (order is a permutation).
  void permute(const std::vector<uint32_t>& order);

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = EventRef;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = EventRef;
    iterator(const EventColumns* c, size_t i) : c_(c), i_(i) {}
    EventRef operator*() const { return (*c_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }

   private:
    const EventColumns* c_;
    size_t i_;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size()}; }

 private:
  static constexpr uint32_t kKindMask = 0x0f;
  static constexpr uint32_t kCommunicationBit = 0x10;
  static constexpr int kTrackShift = 8;
  struct TrackKey {
    int32_t device, stream;
  };
  uint32_t track_id(int32_t device, int32_t stream);

  std::vector<TrackKey> tracks_;  // (device, stream) per track id, in order of first appearance
  std::unordered_map<uint64_t, uint32_t> track_ids_;
  uint32_t last_track_ = UINT32_MAX;
  std::vector<int64_t> start_, end_;
  std::vector<uint32_t> name_, instruction_, seq_;
  std::vector<int32_t> iteration_;
  std::vector<uint32_t> track_flags_;  // track id << 8 | communication bit | kind
};

EventRef EventColumns::operator[](size_t i) const {
  const uint32_t tf = track_flags_[i];
  const TrackKey& t = tracks_[tf >> kTrackShift];
  EventRef e;
  e.device = t.device;
  e.stream = t.stream;
  e.stream_kind = (tf & kCommunicationBit) != 0 ? StreamKind::kCommunication : StreamKind::kCompute;
  e.kind = static_cast<EventKind>(tf & kKindMask);
  e.name = name_[i];
  e.instruction = instruction_[i];
  e.iteration = iteration_[i];
  e.start_ns = start_[i];
  e.end_ns = end_[i];
  return e;
}

struct CompactTrace {
  StringTable strings;
  EventColumns events;
  std::vector<Dependency> dependencies;
  std::vector<Counter> counters;

  const std::string& name_of(const EventRef& e) const { return strings.get(e.name); }
  const std::string& instruction_of(const EventRef& e) const { return strings.get(e.instruction); }
  int64_t makespan_ns() const;  // last end - first start; 0 when empty
  void add_counter(std::string_view name, int64_t delta, std::string_view description);
};

// The columns of `trace`, in its order; seq(i) is i (as a store numbers a saved trace's events).
CompactTrace compact_trace(const Trace& trace);

}  // namespace sl::trace
