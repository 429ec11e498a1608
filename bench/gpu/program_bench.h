#pragma once
// Runs an HLO program on the cuda backend and reduces its CUPTI trace to
// per-iteration numbers, for gpu_bench's program modes.

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/sched/command_buffer.h"
#include "core/sched/lowering.h"
#include "core/sched/streams.h"

namespace sl::bench {

struct ProgramTiming {
  double median_iteration_ms = 0.0;  // last end - first start of one iteration, median
  double min_iteration_ms = 0.0;
  size_t iterations = 0;
  size_t events = 0;
  double median_gemm_ms = 0.0;       // median GEMM kernel, 0 when none
  double median_collective_ms = 0.0; // median collective kernel, 0 when none
};

// Parses, lowers (with `overrides`) and runs `text` with 3 warm-up and
// `iterations` recorded iterations, random parameters.
Result<ProgramTiming> time_program(const std::string& text, const std::string& name,
                                   const sched::StreamOverrides& overrides, int iterations);

// Wall time of one iteration (ms) with the tracer on or off: the difference
// between a run of `iterations` + 2 iterations and a run of 2, so set-up
// (allocation, communicators, parameter init, the first, tagged iteration)
// cancels out. The median of `repeats` such differences.
struct WallPerIteration {
  double iterations_ms = 0.0;  // the iterations themselves (RunOutput::iterations_wall_ms)
  double run_ms = 0.0;         // the whole run, building the trace afterwards included
};
// `one_graph`: every thunk of each device runs as a node of one CUDA graph,
// each after the previous thunk of its stream (RunOptions::command_buffers),
// the shape of a program XLA put in one command buffer.
Result<WallPerIteration> wall_per_iteration(const std::string& text, bool trace, int iterations, int repeats,
                                            bool one_graph = false);

// One command buffer per device holding every kernel and GEMM thunk, each
// node after the previous node of its stream.
std::vector<std::vector<sched::CommandBuffer>> one_graph_per_device(const sched::LoweredProgram& program);

// Reads a whole file.
Result<std::string> read_text(const std::string& path);

}  // namespace sl::bench
