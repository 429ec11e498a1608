#pragma once
// The GUI's "Suggest" (docs/cli.md): the simulator searches stream
// assignments for the open run's program on a worker thread; "apply" reruns
// with one of them on the simulator and opens the comparison.

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/sched/streams.h"

namespace sl::gui {

struct JobProgress;

struct SuggestRequest {
  int64_t source_run = 0;
  std::string program_text;
  std::string program_name;
  std::string device_model = "h200";
  int64_t replicas = 0;   // 0: the module's
  int64_t partitions = 0;
  int64_t budget = 2000;  // simulations of the local search
  int top = 5;
  uint64_t seed = 0;
  // Instructions the source run overrode: applying a suggestion puts those
  // it does not move back where the program puts them.
  std::vector<std::string> saved_overrides;
  // Costed by this linked capture's kernel times (in `db_path`), as
  // `streamlens suggest --kernel-times`; 0: by the device model alone.
  std::string db_path;
  int64_t kernel_times_run = 0;
};

struct Suggestion {
  sched::StreamOverrides overrides;  // on top of the program as written
  int comm_sms = 0;
  int64_t makespan_ns = 0;            // predicted
};

struct SuggestOutcome {
  int64_t source_run = 0;
  std::string device_model;
  int64_t original_makespan_ns = 0;
  std::vector<Suggestion> candidates;  // best first
  bool exhaustive = false;
  uint64_t space_size = 0;
  int64_t simulations = 0;
  sched::StreamOverrides program_streams;  // saved_overrides -> the program's own stream
};

// Parse, build the space, search; progress.done/total count simulations.
Result<SuggestOutcome> run_suggest(const SuggestRequest& request, JobProgress& progress);

// "--stream a=1 --comm-sms 16" for a list row.
std::string suggestion_flags(const Suggestion& suggestion);

}  // namespace sl::gui
