// `streamlens suggest`: search stream assignments with the simulator
// (sim/suggest), print the best with the flags that reproduce them, and
// optionally measure them on the GPU (suggest_verify.h).

#include <algorithm>
#include <charconv>
#include <optional>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli/cmd_suggest.h"
#include "app/cli/exit_codes.h"
#include "app/common/kernel_times.h"
#include "app/cli/program_loader.h"
#include "app/cli/progress.h"
#include "app/cli/suggest_verify.h"
#include "app/common/backend_factory.h"
#include "core/exec/backend.h"
#include "core/trace/report.h"
#include "sim/device_model.h"
#include "sim/suggest/search.h"
#include "sim/suggest/sim_evaluator.h"

namespace sl::cli {
namespace {

Result<std::vector<int>> parse_comm_sms(const std::string& text) {
  std::vector<int> values;
  if (text.empty()) return values;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    int value = 0;
    auto [ptr, ec] = std::from_chars(text.data() + begin, text.data() + end, value);
    if (ec != std::errc() || ptr != text.data() + end || value < 0 || value > 1024) {
      return usage_error("--comm-sms expects N[,N...] with 0 <= N <= 1024, got '" + text + "'");
    }
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
    begin = end + 1;
  }
  return values;
}

// What to append to `streamlens run PROGRAM --backend sim --device M`.
std::vector<std::string> candidate_args(const SuggestArgs& args, const sim::Candidate& c) {
  std::vector<std::string> out;
  for (const auto& [name, stream] : c.overrides) {
    out.push_back("--stream");
    out.push_back(name + "=" + sim::stream_spelling(stream));
  }
  if (c.assignment.comm_sms != exec::kDefaultCommSms) {
    out.push_back("--comm-sms");
    out.push_back(std::to_string(c.assignment.comm_sms));
  }
  if (args.replicas > 0) out.insert(out.end(), {"--replicas", std::to_string(args.replicas)});
  if (args.partitions > 0) out.insert(out.end(), {"--partitions", std::to_string(args.partitions)});
  if (args.allow_tf32) out.push_back("--allow-tf32");
  return out;
}

double percent(int64_t value, int64_t base) {
  return base > 0 ? 100.0 * static_cast<double>(value - base) / static_cast<double>(base) : 0.0;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

nlohmann::json streams_json(const sim::SearchSpace& space, const sim::Assignment& a) {
  nlohmann::json streams = nlohmann::json::object();
  for (size_t i = 0; i < space.dimensions.size(); ++i) {
    const int s = a.streams[i];
    if (s == sched::kCommStreamBase) {
      streams[space.dimensions[i].instruction] = "comm";
    } else {
      streams[space.dimensions[i].instruction] = s;
    }
  }
  return streams;
}

struct Verified {
  std::vector<Measurement> measurements;  // [0]: the original, then the candidates
};

void print_json(const SuggestArgs& args, const sim::SearchSpace& space, const sim::SearchResult& result,
                const Verified* verified) {
  nlohmann::json out;
  out["program"] = args.program;
  out["device"] = args.device;
  out["original_makespan_ns"] = result.original_makespan_ns;
  out["original_comm_sms"] = space.comm_sms.front();
  out["search"] = {{"exhaustive", result.exhaustive},  {"space_size", result.space_size},
                   {"simulations", result.simulations}, {"infeasible", result.infeasible},
                   {"seed", args.seed},                 {"movable", space.dimensions.size()},
                   {"compute_streams", space.compute_streams}, {"comm_streams", space.comm_streams},
                   {"comm_sms", space.comm_sms}};
  auto measured = [](const Measurement& m) {
    return nlohmann::json{{"median_ns", m.median_ns()}, {"min_ns", m.min_ns()}, {"max_ns", m.max_ns()},
                          {"makespans_ns", m.makespans_ns}, {"run_ids", m.run_ids}};
  };
  if (verified) out["original_measured"] = measured(verified->measurements[0]);
  nlohmann::json candidates = nlohmann::json::array();
  for (size_t k = 0; k < result.candidates.size(); ++k) {
    const sim::Candidate& c = result.candidates[k];
    nlohmann::json j = {{"makespan_ns", c.makespan_ns},
                        {"delta_percent", percent(c.makespan_ns, result.original_makespan_ns)},
                        {"comm_sms", c.assignment.comm_sms},
                        {"streams", streams_json(space, c.assignment)},
                        {"args", candidate_args(args, c)}};
    if (verified) j["measured"] = measured(verified->measurements[k + 1]);
    candidates.push_back(std::move(j));
  }
  out["candidates"] = std::move(candidates);
  std::printf("%s\n", out.dump(2).c_str());
}

void print_text(const SuggestArgs& args, const sim::SearchSpace& space, const sim::SearchResult& result,
                const Verified* verified) {
  std::printf("%s on %s: %zu movable instruction%s, compute streams 0..%d, %d communication stream%s, "
              "--comm-sms %s\n",
              args.program.c_str(), args.device.c_str(), space.dimensions.size(),
              space.dimensions.size() == 1 ? "" : "s", space.compute_streams - 1, space.comm_streams,
              space.comm_streams == 1 ? "" : "s", fmt::format("{}", fmt::join(space.comm_sms, ",")).c_str());
  // The space's size saturates where it would pass 64 bits.
  const std::string size = result.space_size == UINT64_MAX ? std::string("more than 1.8e19")
                                                           : std::to_string(result.space_size);
  std::printf("  %s search: %s assignments, %lld simulations%s\n", result.exhaustive ? "exhaustive" : "local",
              size.c_str(), static_cast<long long>(result.simulations),
              result.infeasible > 0 ? fmt::format(", {} infeasible", result.infeasible).c_str() : "");
  std::printf("original: %s us predicted\n", trace::format_us(result.original_makespan_ns).c_str());
  if (result.candidates.empty()) {
    std::printf("no assignment changes the predicted makespan\n");
    return;
  }
  if (result.candidates.front().makespan_ns >= result.original_makespan_ns) {
    std::printf("nothing beats the program's own assignment; the closest:\n");
  }
  for (size_t k = 0; k < result.candidates.size(); ++k) {
    const sim::Candidate& c = result.candidates[k];
    const std::vector<std::string> flags = candidate_args(args, c);
    std::printf("%2zu. %12s us  %+6.1f%%  %s\n", k + 1, trace::format_us(c.makespan_ns).c_str(),
                percent(c.makespan_ns, result.original_makespan_ns),
                flags.empty() ? "(the same streams, renumbered)" : joined(flags).c_str());
  }
  const std::vector<std::string> best = candidate_args(args, result.candidates.front());
  const std::string measured =
      args.kernel_times.empty() ? "" : " --kernel-times " + args.kernel_times + " --db " + args.db;
  std::printf("reproduce 1: streamlens run %s --backend sim --device %s%s%s%s\n", args.program.c_str(),
              args.device.c_str(), measured.c_str(), best.empty() ? "" : " ", joined(best).c_str());
  if (!verified) return;
  std::printf("measured on the GPU (median of %d runs, each its median of %d iterations):\n", args.repeats,
              args.iterations);
  std::printf("    %-12s %14s %14s %9s %9s  %s\n", "", "predicted us", "measured us", "pred. %", "meas. %",
              "range us");
  const int64_t base = verified->measurements[0].median_ns();
  for (size_t k = 0; k < verified->measurements.size(); ++k) {
    const Measurement& m = verified->measurements[k];
    const int64_t predicted = k == 0 ? result.original_makespan_ns : result.candidates[k - 1].makespan_ns;
    std::printf("    %-12s %14s %14s %+8.1f%% %+8.1f%%  %s..%s\n",
                k == 0 ? "original" : fmt::format("candidate {}", k).c_str(), trace::format_us(predicted).c_str(),
                trace::format_us(m.median_ns()).c_str(), percent(predicted, result.original_makespan_ns),
                percent(m.median_ns(), base), trace::format_us(m.min_ns()).c_str(),
                trace::format_us(m.max_ns()).c_str());
  }
}

}  // namespace

int cmd_suggest(const SuggestArgs& given) {
  SuggestArgs args = given;
  Result<std::string> device = simulated_device(args.device, args.db, args.kernel_times);
  if (!device) return fail(device.status());
  args.device = *device;
  Result<hlo::Module> module = load_program(args.program);
  if (!module) return fail(module.status());
  Result<std::vector<int>> comm_sms = parse_comm_sms(args.comm_sms);
  if (!comm_sms) return fail(comm_sms.status());
  Result<sim::DeviceModel> model = sim::load_device_model(args.device);
  if (!model) return fail(model.status());

  // The GPU and the database first, so that --verify without a GPU fails before the search.
  std::optional<app::BackendChoice> gpu;
  std::unique_ptr<trace::TraceStore> store;
  if (!args.verify.empty()) {
    Result<app::BackendChoice> choice = app::make_backend(args.verify, args.device, args.allow_tf32);
    if (!choice) return fail(Status(choice.status().code(), "--verify " + args.verify + ": " + choice.status().message()));
    gpu = std::move(choice).value();
    Result<std::unique_ptr<trace::TraceStore>> opened = trace::TraceStore::open(args.db);
    if (!opened) return fail(opened.status());
    store = std::move(opened).value();
  }

  sim::SpaceOptions space_options;
  space_options.compute_streams = args.streams;
  space_options.comm_streams = args.comm_streams;
  space_options.comm_sms = *comm_sms;
  Result<sim::SearchSpace> space = sim::build_space(*module, space_options);
  if (!space) return fail(space.status());

  sim::SearchOptions options;
  options.mode = args.search == "exhaustive" ? sim::SearchMode::kExhaustive
                 : args.search == "local"    ? sim::SearchMode::kLocal
                                             : sim::SearchMode::kAuto;
  options.budget = args.budget;
  options.top = args.top;
  options.seed = args.seed;
  std::optional<ProgressBar> progress(std::in_place, "searching");
  options.progress = [&progress](int64_t done, int64_t total) { progress->update(done, total); };
  sim::SimEvaluatorOptions evaluator_options{
      .replicas = args.replicas, .partitions = args.partitions, .allow_tf32 = args.allow_tf32, .measured = {}};
  if (!args.kernel_times.empty()) {
    auto measured = app::measured_kernel_times(args.db, args.kernel_times, nullptr, nullptr, &*module);
    if (!measured) return fail(measured.status());
    evaluator_options.measured = std::move(*measured);
  }
  const sim::Evaluator evaluate = sim::make_sim_evaluator(*module, *model, std::move(evaluator_options));
  Result<sim::SearchResult> result = sim::search(*space, evaluate, options);
  progress.reset();  // clears its line before anything is printed
  if (!result) return fail(result.status());

  std::optional<Verified> verified;
  if (gpu) {
    std::vector<Variant> variants;
    variants.push_back({"original", {}, space->comm_sms.front(), result->original_makespan_ns});
    for (size_t k = 0; k < result->candidates.size(); ++k) {
      const sim::Candidate& c = result->candidates[k];
      variants.push_back({fmt::format("candidate {}", k + 1), c.overrides, c.assignment.comm_sms, c.makespan_ns});
    }
    Result<std::vector<Measurement>> measured =
        verify_variants(*gpu->backend, gpu->name, gpu->device_model, *store, *module, args, variants);
    if (!measured) return fail(measured.status());
    verified = Verified{std::move(measured).value()};
  }
  if (args.json) {
    print_json(args, *space, *result, verified ? &*verified : nullptr);
  } else {
    print_text(args, *space, *result, verified ? &*verified : nullptr);
  }
  return kExitOk;
}

}  // namespace sl::cli
