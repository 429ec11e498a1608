#pragma once
// `streamlens suggest --verify cuda`: the original and every candidate run
// on the GPU in one process, alternating (forward, then backward, so that a
// drift in clocks or temperature falls on all alike), each run stored.

#include <cstdint>
#include <string>
#include <vector>

#include "app/cli/cmd_suggest.h"
#include "core/common/status.h"
#include "core/exec/backend.h"
#include "core/hlo/module.h"
#include "core/sched/streams.h"
#include "core/trace/store/trace_store.h"

namespace sl::cli {

struct Variant {
  std::string label;                 // "original", "candidate 1", ...
  sched::StreamOverrides overrides;  // on top of the program
  int comm_sms = 0;
  int64_t predicted_ns = 0;
};

struct Measurement {
  std::vector<int64_t> makespans_ns;  // per repeat: the run's median iteration
  std::vector<int64_t> run_ids;
  int64_t median_ns() const;
  int64_t min_ns() const;
  int64_t max_ns() const;
};

// One Measurement per variant, in order. Fails on the first run that fails
// (that run is stored as failed).
Result<std::vector<Measurement>> verify_variants(exec::Backend& backend, const std::string& backend_name,
                                                 const std::string& device_name, trace::TraceStore& store,
                                                 const hlo::Module& module, const SuggestArgs& args,
                                                 const std::vector<Variant>& variants);

}  // namespace sl::cli
