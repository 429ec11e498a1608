#pragma once
// One interface for every backend (docs/architecture.md): cpu, sim, cuda.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/exec/literal.h"
#include "core/sched/command_buffer.h"
#include "core/sched/lowering.h"
#include "core/trace/trace.h"

namespace sl::exec {

enum class InitMode { kRamp, kRandom };

// SMs left to NCCL beside a GEMM by default. NCCL 2.28 runs 24 channels (a
// CTA each) on 2 H200s; measured there, a 512 MiB all-gather beside a
// 1024x24576x24576 GEMM took 2.46-2.50 ms per iteration leaving 0 SMs,
// 2.42 (8), 2.34 (16), 2.06-2.09 (24), 1.84-1.85 (32), 2.29 (48), and 2.52
// one after the other (bench/RESULTS.md).
inline constexpr int kDefaultCommSms = 32;

// Seconds a multi-GPU run may go without any device issuing or finishing an
// iteration before its NCCL communicators are aborted (a rank or device is
// hung); torch's NCCL watchdog waits 10 minutes by default too.
inline constexpr int kDefaultNcclTimeoutS = 600;

struct RunOptions {
  InitMode init = InitMode::kRamp;
  uint64_t seed = 0;
  int warmup = 0;
  int iterations = 1;
  std::string device_model = "h200";   // sim: name or path of a device file
  bool allow_tf32 = false;             // cuda: f32 GEMMs may use TF32
  // cuda: f32 GEMMs whose precision is DEFAULT or HIGH use TF32, as XLA runs
  // them (core/sched/dot_precision.h), unless this is set (tests
  // that compare f32 GEMMs with the cpu backend). allow_tf32 overrides it.
  bool exact_f32_gemms = false;
  // SMs a GEMM that may run beside an in-flight collective of its device
  // leaves free for NCCL's kernels (cuda: cuBLASLt SM_COUNT_TARGET; sim: the
  // GEMM's share of the device). 0: GEMMs take every SM.
  int comm_sms = kDefaultCommSms;
  // cuda: see kDefaultNcclTimeoutS; 0 waits forever.
  int nccl_timeout_s = kDefaultNcclTimeoutS;
  bool collect_results = false;        // fill RunOutput::results (cpu, cuda)
  // cuda: per program device (index = device), the command buffers whose
  // nodes run as one CUDA graph each (docs/architecture.md, "Command buffers
  // on the GPU"); empty: every thunk launched on its stream.
  std::vector<std::vector<sched::CommandBuffer>> command_buffers;
  // cpu: a while loop running more iterations fails instead of hanging.
  int64_t cpu_max_while_iterations = 10'000'000;
  // Called now and then with work done / total; may be empty.
  std::function<void(int64_t done, int64_t total)> progress;
};

struct DeviceResults {
  int64_t device = 0;
  int64_t replica = 0;
  int64_t partition = 0;
  std::vector<Literal> outputs;  // the ROOT's tuple leaves in order
};

struct RunOutput {
  trace::Trace trace;
  std::vector<DeviceResults> results;  // when collect_results
  std::string device_description;      // e.g. "NVIDIA H200 x2", "h200 model"
  // Host wall time of the iterations (warm-up included), from the first
  // issue to the devices' completion: what the program itself took, without
  // set-up or building the trace afterwards. Filled by the cuda backend.
  double iterations_wall_ms = 0.0;
  // What a user should know about how the run went, one line each (e.g. a
  // command buffer run as stream launches, and why); the CLI prints them.
  std::vector<std::string> notes;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual Result<RunOutput> run(const sched::LoweredProgram& program, const RunOptions& options) = 0;
};

}  // namespace sl::exec
