#pragma once
// Decoding one event chunk (layout in event_chunk.cc), as a template so each
// reader (Event vectors, the columns of a CompactTrace) decodes straight into
// its own form without a per-event call.

#include <cstdint>
#include <string_view>

#include "core/trace/trace.h"

namespace sl::trace::store {
namespace chunk_detail {

constexpr uint8_t kKindMask = 0x0f;
constexpr uint8_t kCommunicationBit = 0x10;

inline int64_t unzigzag(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }
// Deltas wrap instead of overflowing: corrupt data cannot cause UB.
inline int64_t add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

class Reader {
 public:
  explicit Reader(std::string_view data)
      : p_(reinterpret_cast<const uint8_t*>(data.data())), end_(p_ + data.size()) {}
  bool ok() const { return ok_; }
  bool at_end() const { return p_ == end_; }
  uint8_t byte() {
    if (p_ == end_) return fail();
    return *p_++;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return fail();
      uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    return fail();  // more than 10 bytes
  }
  int64_t svarint() { return unzigzag(varint()); }

 private:
  uint8_t fail() {
    ok_ = false;
    p_ = end_;
    return 0;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

}  // namespace chunk_detail

// Each event takes at least 10 bytes: a bogus count cannot make a reader allocate much.
inline bool chunk_count_plausible(std::string_view data, int64_t count) {
  return count >= 0 && static_cast<uint64_t>(count) <= data.size() / 10;
}

// Calls emit(const Event&, int64_t seq) for each of the `count` events of a
// chunk; Event::name / instruction hold the database's string ids. False when
// the chunk is truncated or malformed (or names an id beyond 32 bits); the
// events emitted before that are then the caller's to drop.
template <typename Emit>
bool for_each_chunk_event(std::string_view data, int32_t device, int32_t stream, int64_t count, Emit&& emit) {
  using namespace chunk_detail;
  if (!chunk_count_plausible(data, count)) return false;
  Reader in(data);
  bool ids_fit = true;
  auto string_id = [&](int64_t id) {
    ids_fit = ids_fit && id >= 0 && id <= static_cast<int64_t>(UINT32_MAX);
    return static_cast<uint32_t>(id);
  };
  int64_t seq = 0, start = 0, correlation = 0, iteration = 0;
  Event e;
  e.device = device;
  e.stream = stream;
  for (int64_t i = 0; i < count && in.ok(); ++i) {
    uint8_t flags = in.byte();
    uint8_t kind = flags & kKindMask;
    e.kind = kind <= static_cast<uint8_t>(EventKind::kOther) ? static_cast<EventKind>(kind) : EventKind::kOther;
    e.stream_kind = (flags & kCommunicationBit) != 0 ? StreamKind::kCommunication : StreamKind::kCompute;
    seq = add(seq, in.svarint());
    e.name = string_id(in.svarint());
    e.instruction = string_id(in.svarint());
    start = add(start, in.svarint());
    e.start_ns = start;
    e.end_ns = add(start, in.svarint());
    e.bytes = in.svarint();
    e.flops = in.svarint();
    correlation = add(correlation, in.svarint());
    e.correlation = correlation;
    iteration = add(iteration, in.svarint());
    e.iteration = static_cast<int32_t>(iteration);
    if (in.ok()) emit(static_cast<const Event&>(e), seq);
  }
  return in.ok() && in.at_end() && ids_fit;
}

}  // namespace sl::trace::store
