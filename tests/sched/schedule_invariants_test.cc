// Whole-schedule invariants on every sample program, with the program's own
// streams and with every movable instruction scattered over streams:
//   - every wait names an event recorded before it, each event recorded once;
//   - race freedom: two thunks that may run at the same time (neither
//     happens-before the other through stream order and events) never touch
//     overlapping memory unless both only read it;
//   - slices lie inside the arena; collectives of one rendezvous agree.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/sched/sched_test_util.h"

namespace sl::sched {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> sample_programs() {
  std::vector<fs::path> out;
  for (const char* dir : {"samples", "samples/small", "tests/data/hlo"}) {
    fs::path root = fs::path(SL_SOURCE_DIR) / dir;
    if (!fs::is_directory(root)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      if (entry.path().extension() == ".hlo") out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Access {
  BufferSlice slice;
  bool write = false;
};

std::vector<Access> accesses(const Thunk& t) {
  std::vector<Access> out;
  for (const auto& s : t.operands) out.push_back({s, false});
  for (const auto& s : t.results) out.push_back({s, true});
  out.push_back({t.workspace, true});
  return out;
}

// Vector clocks over the streams of one device's thunk sequence.
void check_device(const DeviceProgram& device, const BufferAssignment& buffers, const std::string& label) {
  std::map<int, int> stream_index;
  for (const Thunk& t : device.thunks) stream_index.emplace(t.stream, static_cast<int>(stream_index.size()));
  const size_t streams = stream_index.size();
  std::vector<std::vector<int>> clock(streams, std::vector<int>(streams, 0));
  std::map<int, std::vector<int>> events;

  struct Work {
    size_t index;
    int stream;
    int seq;
    std::vector<int> clock;
  };
  std::vector<Work> work;
  for (size_t i = 0; i < device.thunks.size(); ++i) {
    const Thunk& t = device.thunks[i];
    const int s = stream_index.at(t.stream);
    if (t.kind == ThunkKind::kRecordEvent) {
      EXPECT_EQ(events.count(t.event), 0u) << label << ": event " << t.event << " recorded twice";
      events[t.event] = clock[s];
    } else if (t.kind == ThunkKind::kWaitEvent) {
      auto it = events.find(t.event);
      ASSERT_NE(it, events.end()) << label << ": thunk " << i << " waits for event " << t.event
                                  << " before it is recorded";
      for (size_t k = 0; k < streams; ++k) clock[s][k] = std::max(clock[s][k], it->second[k]);
    } else {
      const int seq = ++clock[s][s];
      work.push_back({i, s, seq, clock[s]});
      for (const Access& a : accesses(t)) {
        if (a.slice.offset >= 0) {
          EXPECT_LE(a.slice.offset + a.slice.size, buffers.arena_bytes) << label;
        }
      }
    }
  }

  for (size_t a = 0; a < work.size(); ++a) {
    for (size_t b = a + 1; b < work.size(); ++b) {
      const Work& x = work[a];
      const Work& y = work[b];
      const bool ordered = y.clock[x.stream] >= x.seq || x.clock[y.stream] >= y.seq;
      if (ordered) continue;
      for (const Access& p : accesses(device.thunks[x.index])) {
        for (const Access& q : accesses(device.thunks[y.index])) {
          if (!p.write && !q.write) continue;
          EXPECT_FALSE(testing::overlaps(p.slice, q.slice))
              << label << ": concurrent thunks " << x.index << " (" << device.thunks[x.index].attributed_name
              << ") and " << y.index << " (" << device.thunks[y.index].attributed_name << ") share memory";
        }
      }
    }
  }
}

void check_program(const LoweredProgram& program, const std::string& label) {
  std::map<int64_t, std::vector<int64_t>> rendezvous_group;
  for (const DeviceProgram& device : program.devices) {
    check_device(device, program.buffers, label + " device " + std::to_string(device.device));
    for (const Thunk& t : device.thunks) {
      if (t.kind != ThunkKind::kCollective) continue;
      const auto& c = t.collective;
      ASSERT_GE(c.rank_in_group, 0);
      ASSERT_LT(c.rank_in_group, static_cast<int64_t>(c.group.size()));
      EXPECT_EQ(c.group[static_cast<size_t>(c.rank_in_group)], device.device) << label;
      const std::vector<int64_t> group(c.group.begin(), c.group.end());
      auto [it, inserted] = rendezvous_group.emplace(c.rendezvous_id * 1000003 + c.group.front(), group);
      if (!inserted) {
        EXPECT_EQ(it->second, group) << label << ": rendezvous " << c.rendezvous_id;
      }
    }
  }
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ScheduleInvariants, SamplesWithTheirOwnAndScatteredStreams) {
  const auto programs = sample_programs();
  if (programs.empty()) GTEST_SKIP() << "no sample programs";
  for (const fs::path& path : programs) {
    SCOPED_TRACE(path.string());
    auto parsed = hlo::parse_program(read_file(path), path.string());
    ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
    LowerOptions options;
    options.default_trip_count = 2;
    auto lowered = lower(*parsed, options);
    ASSERT_TRUE(lowered.is_ok()) << lowered.status().message();
    check_program(*lowered, path.filename().string());

    // Scatter every movable instruction over streams 0..2 and the comm stream.
    LowerOptions scattered = options;
    int k = 0;
    for (const auto& entry : lowered->streams) {
      if (!entry.async_capable) continue;
      const int choice = k++ % 4;
      scattered.overrides[entry.instruction] = choice == 3 ? kCommStreamBase : choice;
    }
    auto moved = lower(*parsed, scattered);
    ASSERT_TRUE(moved.is_ok()) << moved.status().message();
    check_program(*moved, path.filename().string() + " (scattered)");
  }
}

}  // namespace
}  // namespace sl::sched
