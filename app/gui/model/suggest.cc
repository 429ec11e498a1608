#include "app/gui/model/suggest.h"

#include <fmt/format.h>

#include "app/common/kernel_times.h"
#include "app/gui/model/services.h"
#include "core/exec/backend.h"
#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"
#include "core/sched/stream_assignment.h"
#include "sim/device_model.h"
#include "sim/suggest/search.h"
#include "sim/suggest/sim_evaluator.h"

namespace sl::gui {

Result<SuggestOutcome> run_suggest(const SuggestRequest& request, JobProgress& progress) {
  progress.phase = JobProgress::kParsing;
  SL_ASSIGN_OR_RETURN(hlo::Module module, hlo::parse_program(request.program_text, request.program_name + ".hlo"));
  SL_RETURN_IF_ERROR(hlo::verify_status(module));
  SL_ASSIGN_OR_RETURN(sim::DeviceModel model, sim::load_device_model(request.device_model));
  SL_ASSIGN_OR_RETURN(sim::SearchSpace space, sim::build_space(module, {}));

  progress.phase = JobProgress::kRunning;
  sim::SearchOptions options;
  options.budget = request.budget;
  options.top = request.top;
  options.seed = request.seed;
  options.progress = [&progress](int64_t done, int64_t total) {
    progress.done = done;
    progress.total = total;
  };
  sim::SimEvaluatorOptions evaluator_options{.replicas = request.replicas, .partitions = request.partitions};
  if (request.kernel_times_run > 0) {
    SL_ASSIGN_OR_RETURN(evaluator_options.measured,
                        app::measured_kernel_times(request.db_path, std::to_string(request.kernel_times_run), nullptr,
                                                   nullptr, &module));
  }
  const sim::Evaluator evaluate = sim::make_sim_evaluator(module, model, std::move(evaluator_options));
  SL_ASSIGN_OR_RETURN(sim::SearchResult result, sim::search(space, evaluate, options));

  SuggestOutcome out;
  out.source_run = request.source_run;
  out.device_model = request.device_model;
  out.original_makespan_ns = result.original_makespan_ns;
  out.exhaustive = result.exhaustive;
  out.space_size = result.space_size;
  out.simulations = result.simulations;
  for (const sim::Candidate& c : result.candidates) {
    out.candidates.push_back({c.overrides, c.assignment.comm_sms, c.makespan_ns});
  }
  for (const std::string& name : request.saved_overrides) {
    for (const hlo::Computation& computation : module.computations) {
      const int at = computation.find(name);
      if (at < 0) continue;
      out.program_streams[name] =
          sched::program_stream(module, computation.instructions[static_cast<size_t>(at)]).value_or(sched::kMainStream);
      break;
    }
  }
  progress.phase = JobProgress::kDone;
  return out;
}

std::string suggestion_flags(const Suggestion& suggestion) {
  std::vector<std::string> words;
  for (const auto& [name, stream] : suggestion.overrides) {
    words.push_back(fmt::format("--stream {}={}", name, sim::stream_spelling(stream)));
  }
  if (suggestion.comm_sms != exec::kDefaultCommSms) words.push_back(fmt::format("--comm-sms {}", suggestion.comm_sms));
  return words.empty() ? "(the same streams, renumbered)" : fmt::format("{}", fmt::join(words, " "));
}

}  // namespace sl::gui
