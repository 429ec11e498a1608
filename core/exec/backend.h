#pragma once
// One interface for every backend (DESIGN section 4): cpu, sim, cuda.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/exec/literal.h"
#include "core/sched/lowering.h"
#include "core/trace/trace.h"

namespace sl::exec {

enum class InitMode { kRamp, kRandom };

struct RunOptions {
  InitMode init = InitMode::kRamp;
  uint64_t seed = 0;
  int warmup = 0;
  int iterations = 1;
  std::string device_model = "h200";   // sim: name or path of a device file
  bool allow_tf32 = false;             // cuda: f32 GEMMs may use TF32
  bool collect_results = false;        // fill RunOutput::results (cpu, cuda)
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
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual Result<RunOutput> run(const sched::LoweredProgram& program, const RunOptions& options) = 0;
};

}  // namespace sl::exec
