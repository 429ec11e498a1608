#include "tests/corpus/corpus_pipeline.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>

#include "core/exec/backend.h"
#include "core/exec/cpu/cpu_backend.h"
#include "core/hlo/module.h"
#include "core/hlo/parser.h"
#include "core/hlo/verifier.h"
#include "core/sched/lowering.h"
#include "sim/device_model.h"
#include "sim/sim_backend.h"

namespace sl::corpus {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStageNames[] = {"none", "parse", "check", "lower", "simulate", "evaluate"};

Stage next_stage(Stage stage) {
  return stage == Stage::kEvaluate ? Stage::kEvaluate : static_cast<Stage>(static_cast<int>(stage) + 1);
}

// The first line of an error, without tabs (the expectation file is a TSV).
std::string first_line(const std::string& message) {
  std::string line = message.substr(0, message.find('\n'));
  std::replace(line.begin(), line.end(), '\t', ' ');
  if (line.size() > 240) line = line.substr(0, 240) + "...";
  return line;
}

std::string failed(Stage stage, const std::string& message) {
  return std::string(stage_name(stage)) + ": " + first_line(message);
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, '\t')) fields.push_back(field);
  return fields;
}

int64_t to_count(const std::string& field) {
  if (field.empty()) return 0;
  try {
    return std::stoll(field);
  } catch (...) {
    return 0;
  }
}

// xla/MANIFEST.tsv rows by path relative to tests/corpus.
std::map<std::string, Entry> read_manifest(const fs::path& root) {
  std::map<std::string, Entry> rows;
  std::ifstream in(root / "xla" / "MANIFEST.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = split_tabs(line);
    if (f.size() < 6) continue;
    Entry entry;
    entry.relative = "xla/" + f[0];
    entry.replicas = to_count(f[3]);
    entry.partitions = to_count(f[4]);
    entry.rejected = f[5] == "rejected";
    rows[entry.relative] = entry;
  }
  return rows;
}

bool is_corpus_file(const fs::path& path) {
  const std::string name = path.filename().string();
  if (path.extension() == ".hlo") return true;
  const std::string suffix = "optimizations.txt";
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The stages proper; `reached` is told of every stage that succeeds.
Outcome run_stages_reporting(const Entry& entry, const std::function<void(Stage)>& reached) {
  Outcome out;
  auto advance = [&](Stage stage) {
    out.reached = stage;
    reached(stage);
  };
  std::ifstream in(entry.path, std::ios::binary);
  if (!in) {
    out.detail = "parse: cannot read " + entry.relative;
    return out;
  }
  std::stringstream text;
  text << in.rdbuf();
  // The relative name keeps diagnostics (and so the expectation file) free of
  // the checkout's location.
  Result<hlo::Module> module = hlo::parse_program(text.str(), "tests/corpus/" + entry.relative);
  if (!module) {
    out.detail = failed(Stage::kParse, module.status().message());
    return out;
  }
  advance(Stage::kParse);
  // The counts XLA's test gives its HloModuleConfig, applied before verifying
  // as `--replicas` / `--partitions` are (the rest inferred, as check does).
  // XLA's parser lets a header count other than 1 replace the config's
  // (hlo_parser.cc, ParseHloModule), so the header wins here too.
  const int64_t replicas =
      module->replica_count_declared && module->replica_count != 1 ? 0 : entry.replicas;
  const int64_t partitions =
      module->num_partitions_declared && module->num_partitions != 1 ? 0 : entry.partitions;
  hlo::settle_device_counts(*module, replicas, partitions);
  Status verified = hlo::verify_status(*module);
  if (!verified) {
    out.detail = failed(Stage::kCheck, verified.message());
    return out;
  }
  advance(Stage::kCheck);
  if (entry.rejected) return out;  // nothing more to learn from a module XLA refuses

  sched::LowerOptions options;  // counts: the module's, set above
  Result<sched::LoweredProgram> lowered = sched::lower(*module, options);
  if (!lowered) {
    out.detail = failed(Stage::kLower, lowered.status().message());
    return out;
  }
  advance(Stage::kLower);

  Result<sim::DeviceModel> model = sim::load_device_model("h200");
  if (!model) {
    out.detail = failed(Stage::kSimulate, model.status().message());
    return out;
  }
  Result<exec::RunOutput> simulated = sim::make_sim_backend(*model)->run(*lowered, exec::RunOptions{});
  if (!simulated) {
    out.detail = failed(Stage::kSimulate, simulated.status().message());
    return out;
  }
  advance(Stage::kSimulate);

  EvalCost cost = eval_cost(*module);
  if (cost.bytes > kMaxEvalBytes || cost.flops > kMaxEvalFlops) {
    out.detail = "evaluate: skipped (" + std::to_string(cost.bytes >> 20) + " MiB of results, " +
                 std::to_string(cost.flops / 1000000) + " M multiply-adds: over the harness's bound)";
    return out;
  }
  Result<exec::RunOutput> evaluated = exec::run_cpu(*module, 0, 0, exec::RunOptions{});
  if (!evaluated) {
    out.detail = failed(Stage::kEvaluate, evaluated.status().message());
    return out;
  }
  advance(Stage::kEvaluate);
  return out;
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Child side: one line per stage reached ("R <n>"), then "D <detail>".
[[noreturn]] void child_main(const Entry& entry, int fd) {
  Outcome out = run_stages_reporting(
      entry, [fd](Stage stage) { write_all(fd, "R " + std::to_string(static_cast<int>(stage)) + "\n"); });
  write_all(fd, "D " + out.detail + "\n");
  ::close(fd);
  ::_exit(0);
}

void apply_child_line(const std::string& line, Outcome* out, bool* finished) {
  if (line.rfind("R ", 0) == 0) {
    int n = std::atoi(line.c_str() + 2);
    if (n >= 0 && n <= static_cast<int>(Stage::kEvaluate)) out->reached = static_cast<Stage>(n);
  } else if (line.rfind("D ", 0) == 0) {
    out->detail = line.substr(2);
    *finished = true;
  }
}

}  // namespace

// An upper bound of the evaluator's work: every result is materialised once
// per device; dots and convolutions cost one multiply-add per output element
// and contracted (or kernel) element.
EvalCost eval_cost(const hlo::Module& module) {
  EvalCost cost;
  for (const hlo::Computation& computation : module.computations) {
    for (const hlo::Instruction& instruction : computation.instructions) {
      cost.bytes += instruction.shape.byte_size();
      auto operand_shape = [&](size_t i) -> const hlo::Shape* {
        if (i >= instruction.operands.size()) return nullptr;
        int index = instruction.operands[i];
        if (index < 0 || static_cast<size_t>(index) >= computation.instructions.size()) return nullptr;
        return &computation.instructions[static_cast<size_t>(index)].shape;
      };
      int64_t out = instruction.shape.element_count();
      if (instruction.opcode == hlo::Opcode::kDot) {
        int64_t contracted = 1;
        if (const hlo::Shape* lhs = operand_shape(0)) {
          for (int64_t d : instruction.dot.lhs_contracting) {
            if (d >= 0 && d < lhs->rank()) contracted *= lhs->dims[static_cast<size_t>(d)];
          }
        }
        cost.flops += out * contracted;
      } else if (instruction.opcode == hlo::Opcode::kConvolution) {
        if (const hlo::Shape* kernel = operand_shape(1)) cost.flops += out * kernel->element_count();
      }
    }
  }
  int64_t devices = std::max<int64_t>(1, module.device_count());
  cost.bytes *= devices;
  cost.flops *= devices;
  return cost;
}

const char* stage_name(Stage stage) { return kStageNames[static_cast<int>(stage)]; }

bool parse_stage(const std::string& name, Stage* stage) {
  for (int i = 0; i <= static_cast<int>(Stage::kEvaluate); ++i) {
    if (name == kStageNames[i]) {
      *stage = static_cast<Stage>(i);
      return true;
    }
  }
  return false;
}

std::string group_of(const Entry& entry) {
  if (entry.relative.rfind("xla/", 0) != 0) return "jax";  // jax/, captures/: XLA's dumps of JAX programs
  return entry.rejected ? "xla-rejected" : "xla";
}

std::vector<Entry> list_corpus(const std::string& root_dir) {
  const fs::path root(root_dir);
  std::map<std::string, Entry> manifest = read_manifest(root);
  std::vector<Entry> entries;
  std::error_code error;
  for (fs::recursive_directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    if (!it->is_regular_file() || !is_corpus_file(it->path())) continue;
    std::string relative = fs::relative(it->path(), root).generic_string();
    Entry entry;
    auto row = manifest.find(relative);
    if (row != manifest.end()) entry = row->second;
    entry.relative = relative;
    entry.path = it->path().string();
    entries.push_back(entry);
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.relative < b.relative; });
  return entries;
}

Outcome run_stages(const Entry& entry) {
  return run_stages_reporting(entry, [](Stage) {});
}

Outcome run_isolated(const Entry& entry, int timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) return run_stages(entry);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return run_stages(entry);
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(entry, fds[1]);
  }
  ::close(fds[1]);
  Outcome out;
  bool finished = false;
  bool timed_out = false;
  std::string pending;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is gone
    pending.append(buffer, static_cast<size_t>(n));
    for (size_t eol; (eol = pending.find('\n')) != std::string::npos;) {
      apply_child_line(pending.substr(0, eol), &out, &finished);
      pending.erase(0, eol + 1);
    }
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string stage = stage_name(next_stage(out.reached));
  if (timed_out) {
    out.detail = stage + ": timed out after " + std::to_string(timeout_s) + " s";
  } else if (WIFSIGNALED(status)) {
    out.detail = stage + ": crashed (signal " + std::to_string(WTERMSIG(status)) + ", " +
                 strsignal(WTERMSIG(status)) + ")";
  } else if (!finished) {
    out.detail = stage + ": the harness's child exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return out;
}

}  // namespace sl::corpus
