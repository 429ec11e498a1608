#pragma once
// Lowering (docs/streams.md): stream assignment, per-device thunk
// sequences with per-start completion events, and buffer assignment.

#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/module.h"
#include "core/sched/buffer_assignment.h"
#include "core/sched/streams.h"
#include "core/sched/thunk.h"

namespace sl::sched {

struct LowerOptions {
  StreamOverrides overrides;
  int64_t replica_count = 0;    // 0: take the module's
  int64_t num_partitions = 0;   // 0: take the module's
  // A while without known_trip_count whose condition gives no constant bound
  // (trip_count.h) runs this many times in sim/cuda. (The cpu backend
  // evaluates the condition instead.)
  int64_t default_trip_count = 1;
  // Trips of such loops, by while instruction, as a measured run ran them
  // (`run --kernel-times`: the capture's median step); before the above.
  std::map<std::string, int64_t> trip_counts;
  // Unrolling cap (README.md, "What streamlens promises"): lowering refuses a trip count, or a
  // flattened program, larger than this many thunks, naming the while's
  // location (`--max-unroll` raises it).
  int64_t max_thunks = kDefaultMaxThunks;
  static constexpr int64_t kDefaultMaxThunks = 1'000'000;
};

// The stream every instruction of the entry (and called) computations runs on,
// after defaults and overrides. Saved with every run.
struct StreamAssignmentEntry {
  std::string instruction;
  int stream = kMainStream;
  bool overridden = false;
  bool async_capable = false;  // may be moved by the user (GUI combo box)
};

struct LoweredProgram {
  const hlo::Module* module = nullptr;  // must outlive this
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  std::vector<DeviceProgram> devices;   // index = global device id
  std::vector<StreamAssignmentEntry> streams;
  BufferAssignment buffers;             // identical on every device
  std::vector<std::string> warnings;
};

Result<LoweredProgram> lower(const hlo::Module& module, const LowerOptions& options);

// `streamlens lower` output: readable thunk listing of one device (or all).
std::string format_lowered(const LoweredProgram& program, int64_t device = -1);

}  // namespace sl::sched
