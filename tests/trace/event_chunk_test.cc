// The packed event format of schema version 2 (core/trace/store/event_chunk):
// every field round-trips, including extreme values, and damaged chunks are
// rejected without leaving partial events behind.

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "core/trace/store/event_chunk.h"

namespace sl::trace::store {
namespace {

Event make_event(int64_t i) {
  Event e;
  e.device = 3;
  e.stream = i % 2 == 0 ? 1 : 100;
  e.stream_kind = i % 2 == 0 ? StreamKind::kCompute : StreamKind::kCommunication;
  e.kind = static_cast<EventKind>(i % 7);
  e.name = static_cast<uint32_t>(i * 13);
  e.instruction = static_cast<uint32_t>(i * 7);
  e.start_ns = 1000 * i - (i % 3) * 5000;  // not monotonic
  e.end_ns = e.start_ns + 10 + i;
  e.bytes = i * 4096;
  e.flops = -i;
  e.correlation = 100 - i;
  e.iteration = static_cast<int32_t>(i / 4);
  return e;
}

TEST(EventChunkTest, RoundTripsEveryField) {
  std::vector<Event> events;
  for (int64_t i = 0; i < 50; ++i) events.push_back(make_event(i));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  Event extreme = make_event(1);
  extreme.start_ns = kMin;
  extreme.end_ns = kMax;
  extreme.bytes = kMax;
  extreme.flops = kMin;
  extreme.correlation = kMin;
  extreme.iteration = std::numeric_limits<int32_t>::min();
  extreme.name = UINT32_MAX;
  events.push_back(extreme);

  std::vector<ChunkInput> in;
  for (size_t i = 0; i < events.size(); ++i) {
    in.push_back({&events[i], static_cast<int64_t>(i * 3) - 7, events[i].name, events[i].instruction});
  }
  std::string data;
  encode_chunk(in.data(), in.size(), &data);

  std::vector<Event> out;
  std::vector<int64_t> seqs;
  ASSERT_TRUE(decode_chunk(data, 3, 0, static_cast<int64_t>(in.size()), &out, &seqs));
  ASSERT_EQ(out.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& a = events[i];
    const Event& b = out[i];
    EXPECT_EQ(b.device, 3);
    EXPECT_EQ(b.stream, 0);  // the chunk's stream, as given to decode_chunk
    EXPECT_EQ(a.stream_kind, b.stream_kind) << i;
    EXPECT_EQ(a.kind, b.kind) << i;
    EXPECT_EQ(a.name, b.name) << i;
    EXPECT_EQ(a.instruction, b.instruction) << i;
    EXPECT_EQ(a.start_ns, b.start_ns) << i;
    EXPECT_EQ(a.end_ns, b.end_ns) << i;
    EXPECT_EQ(a.bytes, b.bytes) << i;
    EXPECT_EQ(a.flops, b.flops) << i;
    EXPECT_EQ(a.correlation, b.correlation) << i;
    EXPECT_EQ(a.iteration, b.iteration) << i;
    EXPECT_EQ(seqs[i], static_cast<int64_t>(i * 3) - 7);
  }
}

TEST(EventChunkTest, DamagedChunksAreRejectedWithoutPartialEvents) {
  std::vector<Event> events;
  for (int64_t i = 0; i < 10; ++i) events.push_back(make_event(i));
  std::vector<ChunkInput> in;
  for (size_t i = 0; i < events.size(); ++i) in.push_back({&events[i], static_cast<int64_t>(i), 1, 2});
  std::string data;
  encode_chunk(in.data(), in.size(), &data);

  std::vector<Event> out(1);
  std::vector<int64_t> seqs(1);
  EXPECT_FALSE(decode_chunk(data.substr(0, data.size() - 1), 0, 0, 10, &out, &seqs));   // truncated
  EXPECT_FALSE(decode_chunk(data + '\x01', 0, 0, 10, &out, &seqs));                      // trailing bytes
  EXPECT_FALSE(decode_chunk(data, 0, 0, 9, &out, &seqs));                                // wrong count
  EXPECT_FALSE(decode_chunk(data, 0, 0, 1 << 30, &out, &seqs));                          // absurd count
  EXPECT_FALSE(decode_chunk(std::string(40, '\xff'), 0, 0, 2, &out, &seqs));             // endless varints
  std::vector<ChunkInput> big_id = {{&events[0], 0, int64_t{1} << 40, 0}};
  std::string big;
  encode_chunk(big_id.data(), 1, &big);
  EXPECT_FALSE(decode_chunk(big, 0, 0, 1, &out, &seqs));                                 // id beyond 32 bits
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(seqs.size(), 1u);
  EXPECT_TRUE(decode_chunk(data, 0, 0, 10, &out, &seqs));
  EXPECT_EQ(out.size(), 11u);
}

}  // namespace
}  // namespace sl::trace::store
