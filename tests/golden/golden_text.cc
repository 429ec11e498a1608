#include "tests/golden/golden_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/exec/backend.h"
#include "core/exec/cpu/cpu_backend.h"
#include "core/hlo/module.h"
#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"
#include "core/sched/lowering.h"
#include "core/trace/analysis.h"
#include "sim/device_model.h"
#include "sim/sim_backend.h"
#include "tests/corpus/corpus_pipeline.h"

namespace sl::golden {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void add_files(const fs::path& root, const fs::path& dir, const std::string& suffix, std::vector<Case>* out) {
  std::error_code error;
  for (fs::directory_iterator it(root / dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!it->is_regular_file() || !ends_with(name, suffix)) continue;
    Case c;
    c.input = (dir / name).generic_string();
    std::string stem = name.substr(0, name.size() - suffix.size());
    // tests/corpus/jax/small/P/... -> tests/data/golden/jax/small/P/...
    std::string under = dir.generic_string();
    if (under.rfind("tests/corpus/", 0) == 0) under = under.substr(std::string("tests/corpus/").size());
    c.golden = (fs::path("tests/data/golden") / under / (stem + ".txt")).generic_string();
    out->push_back(c);
  }
}

// Six significant digits: the summary survives a change of summation order
// in the evaluator's last bits, and not a wrong value.
std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v == 0.0 ? 0.0 : v);
  return buffer;
}

std::string summary(const exec::Literal& literal) {
  const std::vector<double>& v = literal.values;
  std::ostringstream out;
  out << hlo::to_string(literal.shape) << " count=" << v.size();
  if (v.empty()) return out.str();
  double sum = 0, abs_sum = 0, lo = v[0], hi = v[0];
  for (double x : v) {
    sum += x;
    abs_sum += std::fabs(x);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  out << " sum=" << number(sum) << " abs_sum=" << number(abs_sum) << " min=" << number(lo)
      << " max=" << number(hi) << " first=[";
  for (size_t i = 0; i < std::min<size_t>(v.size(), 4); ++i) out << (i ? " " : "") << number(v[i]);
  out << "]";
  return out.str();
}

void simulate(const hlo::Module& module, std::ostringstream& out) {
  Result<sched::LoweredProgram> lowered = sched::lower(module, sched::LowerOptions{});
  if (!lowered) {
    out << "error: lower: " << lowered.status().message() << "\n";
    return;
  }
  Result<sim::DeviceModel> model = sim::load_device_model("h200");
  if (!model) {
    out << "error: device model: " << model.status().message() << "\n";
    return;
  }
  Result<exec::RunOutput> run = sim::make_sim_backend(*model)->run(*lowered, exec::RunOptions{});
  if (!run) {
    out << "error: simulate: " << run.status().message() << "\n";
    return;
  }
  const trace::Trace& trace = run->trace;
  out << "sim.makespan_ns " << trace.makespan_ns() << "\n";
  out << "sim.events " << trace.events.size() << "\n";
  out << "sim.dependencies " << trace.dependencies.size() << "\n";
  for (const trace::StreamBusy& s : trace::stream_busy_time(trace)) {
    out << "sim.busy device=" << s.device << " stream=" << s.stream
        << " kind=" << sched::stream_kind_name(s.stream_kind) << " events=" << s.event_count
        << " busy_ns=" << s.busy_ns << "\n";
  }
  std::vector<trace::Counter> counters = trace.counters;
  std::sort(counters.begin(), counters.end(),
            [](const trace::Counter& a, const trace::Counter& b) { return a.name < b.name; });
  for (const trace::Counter& c : counters) out << "sim.counter " << c.name << " " << c.value << "\n";
}

void evaluate(const hlo::Module& module, std::ostringstream& out) {
  corpus::EvalCost cost = corpus::eval_cost(module);
  if (cost.bytes > corpus::kMaxEvalBytes || cost.flops > corpus::kMaxEvalFlops) {
    out << "cpu skipped (over the corpus harness's evaluation bound)\n";
    return;
  }
  exec::RunOptions options;
  options.collect_results = true;
  Result<exec::RunOutput> run = exec::run_cpu(module, 0, 0, options);
  if (!run) {
    out << "error: cpu: " << run.status().message() << "\n";
    return;
  }
  for (const exec::DeviceResults& device : run->results) {
    for (size_t i = 0; i < device.outputs.size(); ++i) {
      out << "cpu.output device=" << device.device << " index=" << i << " " << summary(device.outputs[i]) << "\n";
    }
  }
}

}  // namespace

std::vector<Case> list_cases(const std::string& source_dir) {
  const fs::path root(source_dir);
  std::vector<Case> cases;
  add_files(root, "samples", ".hlo", &cases);
  add_files(root, "samples/small", ".hlo", &cases);
  std::error_code error;
  for (fs::directory_iterator it(root / "tests/corpus/jax/small", error), end; !error && it != end;
       it.increment(error)) {
    if (!it->is_directory()) continue;
    add_files(root, fs::path("tests/corpus/jax/small") / it->path().filename(), ".sm_9.0a_gpu_after_optimizations.txt",
              &cases);
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.input < b.input; });
  return cases;
}

std::string golden_text(const std::string& source_dir, const Case& c) {
  std::ostringstream out;
  out << "# " << c.input << ": sim backend (stock h200 model) and cpu backend (--init ramp).\n"
      << "# Written by scripts/regen-golden; a change here is a change of behaviour to review.\n";
  // The relative name keeps diagnostics free of the checkout's location.
  std::ifstream in(fs::path(source_dir) / c.input, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  Result<hlo::Module> module = hlo::parse_program(text.str(), c.input);
  if (!module) {
    out << "error: parse: " << module.status().message() << "\n";
    return out.str();
  }
  hlo::settle_device_counts(*module, 0, 0);
  Status verified = hlo::verify_status(*module);
  if (!verified) {
    out << "error: check: " << verified.message() << "\n";
    return out.str();
  }
  out << "devices replicas=" << module->replica_count << " partitions=" << module->num_partitions << "\n";
  simulate(*module, out);
  evaluate(*module, out);
  return out.str();
}

std::string line_diff(const std::string& expected, const std::string& actual, int context) {
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  const std::vector<std::string> a = lines(expected), b = lines(actual);
  if (a == b) return "";
  // Longest common subsequence table; golden files are a few hundred lines at most.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::vector<std::pair<char, std::string>> ops;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ops.push_back({' ', a[i++]});
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.push_back({'-', a[i++]});  // what was expected first, then what came instead
    } else {
      ops.push_back({'+', b[j++]});
    }
  }
  std::ostringstream out;
  size_t last_printed = 0;
  bool printed_any = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    bool near_change = false;
    for (size_t d = (k >= static_cast<size_t>(context) ? k - context : 0);
         d < std::min(ops.size(), k + context + 1); ++d) {
      near_change = near_change || ops[d].first != ' ';
    }
    if (!near_change) continue;
    if (printed_any && k > last_printed + 1) out << "...\n";
    out << ops[k].first << " " << ops[k].second << "\n";
    last_printed = k;
    printed_any = true;
  }
  return out.str();
}

}  // namespace sl::golden
