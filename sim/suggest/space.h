#pragma once
// The space `streamlens suggest` searches (docs/cli.md): the stream of
// each movable instruction (GEMMs, fusions, custom calls, async-wrapped work,
// collectives) and the SMs GEMMs beside a collective leave to NCCL
// (`--comm-sms`, one value for the whole run). Only streams change: lowering
// turns every choice into the waits that keep each dependency.
//
// Renumbering the extra compute streams (or the communication streams)
// gives the same schedule, so assignments are canonical: extra streams are
// numbered by first use in dimension order (1, 2, ... and comm, comm+1, ...).

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/hlo/module.h"
#include "core/sched/streams.h"

namespace sl::sim {

enum class MoveKind {
  kCompute,           // any compute stream 0..compute_streams-1
  kAsyncCollective,   // one of the communication streams
  kSyncCollective,    // stream 0 (in place, synchronous) or a communication stream
};

struct Dimension {
  std::string instruction;
  MoveKind kind = MoveKind::kCompute;
  int original_stream = sched::kMainStream;  // where the program puts it
};

struct SpaceOptions {
  int compute_streams = 0;  // streams 0..N-1; 0: max(3, highest the program uses + 1)
  int comm_streams = 0;     // 0: 2 when two or more collectives can move, else 1
  // --comm-sms values to try; the first is the original's. Empty: the
  // default (32) first, then 0, 16, 24 and 48 when a collective and a GEMM
  // can meet, else the default alone.
  std::vector<int> comm_sms;
};

struct SearchSpace {
  std::vector<Dimension> dimensions;
  int compute_streams = 1;
  int comm_streams = 1;
  std::vector<int> comm_sms;  // [0]: the original's
};

// A point of the space: a stream per dimension and a --comm-sms value.
struct Assignment {
  std::vector<int> streams;
  int comm_sms = 0;
  auto operator<=>(const Assignment&) const = default;
};

// Movable instructions of the entry computation and of the bodies it calls
// or loops over (instructions inside async-called computations and fusions
// follow their caller). An instruction whose name another one shadows
// (names the `--stream` override would resolve elsewhere) is left out.
Result<SearchSpace> build_space(const hlo::Module& module, const SpaceOptions& options);

// The program's own assignment.
Assignment original_assignment(const SearchSpace& space);

// Streams a dimension may take, in ascending order.
std::vector<int> stream_options(const SearchSpace& space, const Dimension& dimension);

// Extra streams renumbered by first use (see above).
Assignment canonical(const SearchSpace& space, const Assignment& assignment);

// Number of canonical assignments, saturating at UINT64_MAX.
uint64_t space_size(const SearchSpace& space);

// Every canonical assignment, in a fixed order; stops after `limit`.
std::vector<Assignment> enumerate(const SearchSpace& space, uint64_t limit);

// The overrides (`--stream NAME=N`) that turn the program into `assignment`:
// one per dimension whose stream differs from the program's own.
sched::StreamOverrides overrides_for(const SearchSpace& space, const Assignment& assignment);

// "3", or "comm" for the first communication stream (as `--stream` spells it).
std::string stream_spelling(int stream);

}  // namespace sl::sim
