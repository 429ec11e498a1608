#include "core/trace/store/event_chunk.h"

#include <cstdint>

namespace sl::trace::store {
namespace {

// Layout of one event (after a flags byte: kind in bits 0-3, communication
// stream in bit 4), all LEB128 varints, signed ones zigzag-coded:
//   seq - previous seq, name id, instruction id, start - previous start,
//   end - start, bytes, flops, correlation - previous, iteration - previous.
// "previous" starts at 0 in every chunk, so chunks decode independently.
constexpr uint8_t kKindMask = 0x0f;
constexpr uint8_t kCommunicationBit = 0x10;

uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t unzigzag(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }
// Deltas wrap instead of overflowing: any int64 round-trips, and corrupt data cannot cause UB.
int64_t sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
int64_t add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }

void put_varint(uint64_t v, std::string* out) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>(static_cast<uint8_t>(v) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
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

}  // namespace

void encode_chunk(const ChunkInput* events, size_t count, std::string* out) {
  out->reserve(out->size() + count * 16);
  int64_t seq = 0, start = 0, correlation = 0, iteration = 0;
  for (size_t i = 0; i < count; ++i) {
    const Event& e = *events[i].event;
    uint8_t flags = static_cast<uint8_t>(static_cast<uint8_t>(e.kind) & kKindMask);
    if (e.stream_kind == StreamKind::kCommunication) flags |= kCommunicationBit;
    out->push_back(static_cast<char>(flags));
    put_varint(zigzag(sub(events[i].seq, seq)), out);
    put_varint(zigzag(events[i].name_id), out);
    put_varint(zigzag(events[i].instruction_id), out);
    put_varint(zigzag(sub(e.start_ns, start)), out);
    put_varint(zigzag(sub(e.end_ns, e.start_ns)), out);
    put_varint(zigzag(e.bytes), out);
    put_varint(zigzag(e.flops), out);
    put_varint(zigzag(sub(e.correlation, correlation)), out);
    put_varint(zigzag(sub(e.iteration, iteration)), out);
    seq = events[i].seq;
    start = e.start_ns;
    correlation = e.correlation;
    iteration = e.iteration;
  }
}

bool decode_chunk(std::string_view data, int32_t device, int32_t stream, int64_t count, std::vector<Event>* events,
                  std::vector<int64_t>* seqs) {
  const size_t before = events->size();
  // Each event takes at least 10 bytes: a bogus count cannot make us allocate much.
  if (count < 0 || static_cast<uint64_t>(count) > data.size() / 10) return false;
  if (events->capacity() < before + static_cast<size_t>(count)) events->reserve(before + static_cast<size_t>(count));
  if (seqs->capacity() < before + static_cast<size_t>(count)) seqs->reserve(before + static_cast<size_t>(count));
  Reader in(data);
  bool ids_fit = true;
  auto string_id = [&](int64_t id) {
    ids_fit = ids_fit && id >= 0 && id <= static_cast<int64_t>(UINT32_MAX);
    return static_cast<uint32_t>(id);
  };
  int64_t seq = 0, start = 0, correlation = 0, iteration = 0;
  for (int64_t i = 0; i < count && in.ok(); ++i) {
    Event& e = events->emplace_back();
    e.device = device;
    e.stream = stream;
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
    seqs->push_back(seq);
  }
  if (in.ok() && in.at_end() && ids_fit) return true;
  events->resize(before);
  seqs->resize(before);
  return false;
}

}  // namespace sl::trace::store
