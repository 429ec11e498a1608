#pragma once
// Events as the store keeps them since schema version 2: one row of
// event_chunks per chunk of up to kChunkEvents events of one track (device,
// stream) from one append, in timeline order, packed here as varints of
// deltas (about 15 bytes an event instead of a 45-byte SQLite row with its
// index entry). A chunk is written once, inside the append's transaction.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/trace/trace.h"

namespace sl::trace::store {

constexpr size_t kChunkEvents = 2048;

// One event to encode, with the database's string ids and its sequence number.
struct ChunkInput {
  const Event* event = nullptr;
  int64_t seq = 0;
  int64_t name_id = 0;
  int64_t instruction_id = 0;
};

// Appends the encoding of `events` (all of one track) to *out.
void encode_chunk(const ChunkInput* events, size_t count, std::string* out);

// Appends the `count` events of one chunk to *events and their sequence
// numbers to *seqs. Event::name / instruction hold the database's string ids
// (a chunk naming an id beyond 32 bits counts as malformed). A truncated or
// malformed chunk leaves both vectors unchanged and returns false.
bool decode_chunk(std::string_view data, int32_t device, int32_t stream, int64_t count, std::vector<Event>* events,
                  std::vector<int64_t>* seqs);

}  // namespace sl::trace::store
