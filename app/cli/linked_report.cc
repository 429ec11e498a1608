#include "app/cli/linked_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/hlo/parser.h"
#include "core/trace/analysis.h"
#include "core/trace/host_probe.h"
#include "core/trace/iterations.h"
#include "core/trace/report.h"

namespace sl::cli {
namespace {

constexpr size_t kTopInstructions = 25;
constexpr size_t kStepRows = 40;  // a long training run has thousands of steps

struct StepStats {
  int32_t step = 0;
  int64_t start_ns = INT64_MAX, end_ns = INT64_MIN, busy_ns = 0;
  int64_t records = 0;
  std::vector<std::pair<int64_t, int64_t>> intervals;  // for the time no record ran
};

}  // namespace

std::string format_linked_show(const trace::RunInfo& info, const trace::Trace& trace, const std::string& program_text) {
  std::map<int32_t, StepStats> steps;
  int64_t outside = 0;
  for (const trace::Event& e : trace.events) {
    if (e.iteration < 0) {
      ++outside;
      continue;
    }
    StepStats& s = steps[e.iteration];
    s.step = e.iteration;
    s.start_ns = std::min(s.start_ns, e.start_ns);
    s.end_ns = std::max(s.end_ns, e.end_ns);
    s.busy_ns += e.duration_ns();
    s.intervals.emplace_back(e.start_ns, e.end_ns);
    ++s.records;
  }
  const int32_t median = trace::median_iteration(trace);
  std::string out = fmt::format("run {} '{}': {} linked to {}, {} steps, {} records outside the steps "
                                "(autotuning, other modules, transfers)\n",
                                info.id, info.name, info.backend, info.program_name, steps.size(), outside);
  out += "\nsteps\n";
  // BUSY adds the records' times (streams and graph nodes overlap); IDLE is
  // the span's time with no record running: the GPU waiting for the host.
  out += fmt::format("{:>6}  {:>12}  {:>12}  {:>12}  {:>12}  {:>8}\n", "STEP", "START(us)", "SPAN(us)", "BUSY(us)",
                     "IDLE(us)", "RECORDS");
  size_t row = 0;
  for (auto& [id, s] : steps) {
    if (row++ >= kStepRows && id != median) continue;
    const int64_t span = s.end_ns - s.start_ns;
    out += fmt::format("{:>6}  {:>12}  {:>12}  {:>12}  {:>12}  {:>8}{}\n", id, trace::format_us(s.start_ns),
                       trace::format_us(span), trace::format_us(s.busy_ns),
                       trace::format_us(span - trace::union_length(s.intervals)), s.records,
                       id == median ? "  <- median" : "");
  }
  if (steps.size() > kStepRows) out += fmt::format("... {} more steps\n", steps.size() - kStepRows);
  if (const trace::HostProbe host = trace::host_probe_of(trace); host.measured()) {
    out += fmt::format("host probe: {} us at the capture's start, {} us at its end (a fixed CPU workload: a "
                       "slower host core takes longer, and so does a step with IDLE time)\n",
                       trace::format_us(host.start_ns), trace::format_us(host.end_ns));
  }

  // The median step's instructions by GPU time, with their Python lines.
  std::unordered_map<std::string, std::string> source;
  if (!program_text.empty()) {
    auto module = hlo::parse_program(program_text, info.program_name);
    if (module) {
      for (const hlo::Computation& c : module->computations) {
        for (const hlo::Instruction& inst : c.instructions) source.emplace(inst.name, module->source_location(inst));
      }
    }
  }
  std::map<std::string, std::pair<int64_t, int64_t>> by_instruction;  // name -> (ns, records)
  int64_t step_busy = 0;
  for (const trace::Event& e : trace.events) {
    if (e.iteration != median) continue;
    step_busy += e.duration_ns();
    auto& [ns, records] = by_instruction[e.instruction == 0 ? "(no instruction)" : trace.instruction_of(e)];
    ns += e.duration_ns();
    ++records;
  }
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> rows(by_instruction.begin(), by_instruction.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  out += fmt::format("\nmedian step {}: instructions by GPU time\n", median);
  out += fmt::format("{:<40}  {:>10}  {:>6}  {:>7}  {}\n", "INSTRUCTION", "TIME(us)", "%", "RECORDS", "SOURCE");
  for (size_t i = 0; i < rows.size() && i < kTopInstructions; ++i) {
    const auto& [name, stat] = rows[i];
    const double pct = step_busy > 0 ? 100.0 * static_cast<double>(stat.first) / static_cast<double>(step_busy) : 0.0;
    auto it = source.find(name);
    out += fmt::format("{:<40}  {:>10}  {:>6.1f}  {:>7}  {}\n", name.substr(0, 40), trace::format_us(stat.first), pct,
                       stat.second, it == source.end() ? "" : it->second);
  }
  if (rows.size() > kTopInstructions) out += fmt::format("... {} more instructions\n", rows.size() - kTopInstructions);
  out += "\n";
  trace::RunInfo step_info = info;
  step_info.makespan_ns = 0;  // the step's own span, not the whole capture's
  out += trace::format_show_text(step_info, trace::one_iteration(trace, median));
  return out;
}

}  // namespace sl::cli
