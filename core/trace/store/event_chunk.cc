#include "core/trace/store/event_chunk.h"

#include <cstdint>

#include "core/trace/store/chunk_decoder.h"

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
// Deltas wrap instead of overflowing: any int64 round-trips, and corrupt data cannot cause UB.
int64_t sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }

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
  if (!chunk_count_plausible(data, count)) return false;
  if (events->capacity() < before + static_cast<size_t>(count)) events->reserve(before + static_cast<size_t>(count));
  if (seqs->capacity() < before + static_cast<size_t>(count)) seqs->reserve(before + static_cast<size_t>(count));
  const bool ok = for_each_chunk_event(data, device, stream, count, [&](const Event& e, int64_t seq) {
    events->push_back(e);
    seqs->push_back(seq);
  });
  if (ok) return true;
  events->resize(before);
  seqs->resize(before);
  return false;
}

}  // namespace sl::trace::store
