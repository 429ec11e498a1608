#include "sim/suggest/space.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "core/exec/backend.h"
#include "core/hlo/opcode.h"
#include "core/sched/gemm.h"
#include "core/sched/stream_assignment.h"

namespace sl::sim {
namespace {

using hlo::Opcode;

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

uint64_t mul_sat(uint64_t a, uint64_t b) { return (b != 0 && a > kSaturated / b) ? kSaturated : a * b; }
uint64_t add_sat(uint64_t a, uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }

// Work the search may place: what the issue lists (GEMMs, fusions, custom
// calls, async-wrapped work, collectives) and anything the program itself
// put on a stream. Elementwise and data ops stay where they are: they are
// cheap, and moving each of them would only blow up the space.
bool is_movable(const hlo::Module& module, const hlo::Instruction& instruction) {
  if (!sched::is_async_capable(instruction)) return false;
  if (sched::program_stream(module, instruction)) return true;
  switch (instruction.opcode) {
    case Opcode::kAsyncStart:
    case Opcode::kDot:
    case Opcode::kConvolution:
    case Opcode::kFusion:
    case Opcode::kCustomCall:
      return true;
    default:
      return hlo::is_collective(instruction.opcode);
  }
}

MoveKind kind_of(const hlo::Module& module, const hlo::Instruction& instruction) {
  if (instruction.opcode == Opcode::kAsyncStart) {
    return sched::wraps_collective(module, instruction) ? MoveKind::kAsyncCollective : MoveKind::kCompute;
  }
  return hlo::is_collective(instruction.opcode) ? MoveKind::kSyncCollective : MoveKind::kCompute;
}

class SpaceBuilder {
 public:
  explicit SpaceBuilder(const hlo::Module& module) : module_(module) {
    // `--stream NAME=N` resolves a name to its first instruction in module order.
    for (const hlo::Computation& computation : module.computations) {
      for (const hlo::Instruction& instruction : computation.instructions) {
        first_by_name_.emplace(instruction.name, &instruction);
      }
    }
  }

  void walk(int computation_index) {
    if (computation_index < 0 || computation_index >= static_cast<int>(module_.computations.size())) return;
    if (!visited_.insert(computation_index).second) return;
    for (const hlo::Instruction& instruction : module_.computations[static_cast<size_t>(computation_index)].instructions) {
      if (is_movable(module_, instruction)) {
        add(instruction);
      } else if (instruction.opcode == Opcode::kCall || instruction.opcode == Opcode::kWhile ||
                 instruction.opcode == Opcode::kConditional) {
        // A body on its caller's stream: its own work can move.
        for (int callee : instruction.called) walk(callee);
      }
    }
  }

  std::vector<Dimension> take() { return std::move(dimensions_); }

 private:
  void add(const hlo::Instruction& instruction) {
    auto it = first_by_name_.find(instruction.name);
    if (it == first_by_name_.end() || it->second != &instruction) return;
    if (!named_.insert(instruction.name).second) return;
    Dimension d;
    d.instruction = instruction.name;
    d.kind = kind_of(module_, instruction);
    d.original_stream = sched::program_stream(module_, instruction).value_or(sched::kMainStream);
    dimensions_.push_back(std::move(d));
  }

  const hlo::Module& module_;
  std::unordered_map<std::string_view, const hlo::Instruction*> first_by_name_;
  std::set<int> visited_;
  std::set<std::string> named_;
  std::vector<Dimension> dimensions_;
};

bool is_comm(int stream) { return stream >= sched::kCommStreamBase; }

}  // namespace

Result<SearchSpace> build_space(const hlo::Module& module, const SpaceOptions& options) {
  if (module.entry < 0) return invalid_input("the module has no entry computation");
  if (options.compute_streams < 0 || options.compute_streams > sched::kCommStreamBase) {
    return usage_error("the number of compute streams must be 1.." + std::to_string(sched::kCommStreamBase));
  }
  if (options.comm_streams < 0 || options.comm_streams > 16) {
    return usage_error("the number of communication streams must be 1..16");
  }
  SpaceBuilder builder(module);
  builder.walk(module.entry);
  SearchSpace space;
  space.dimensions = builder.take();

  int highest_compute = 0, highest_comm = 0, collectives = 0;
  for (const Dimension& d : space.dimensions) {
    if (d.kind != MoveKind::kCompute) ++collectives;
    if (is_comm(d.original_stream)) {
      highest_comm = std::max(highest_comm, d.original_stream - sched::kCommStreamBase);
    } else {
      highest_compute = std::max(highest_compute, d.original_stream);
    }
  }
  space.compute_streams = options.compute_streams > 0 ? options.compute_streams : std::max(3, highest_compute + 1);
  space.comm_streams = options.comm_streams > 0 ? options.comm_streams : (collectives >= 2 ? 2 : 1);
  if (space.compute_streams <= highest_compute || space.comm_streams <= highest_comm) {
    return usage_error("the program already uses more streams than the search may use");
  }
  space.comm_sms = options.comm_sms;
  if (space.comm_sms.empty()) {
    // Only GEMMs beside a collective leave SMs: elsewhere the value changes nothing.
    bool any_gemm = false;
    for (const hlo::Computation& c : module.computations) {
      for (const hlo::Instruction& i : c.instructions) any_gemm = any_gemm || sched::is_gemm(i);
    }
    space.comm_sms = {exec::kDefaultCommSms};
    if (any_gemm && collectives > 0) space.comm_sms.insert(space.comm_sms.end(), {0, 16, 24, 48});
  }
  for (int sms : space.comm_sms) {
    if (sms < 0) return usage_error("--comm-sms values are >= 0");
  }
  return space;
}

Assignment original_assignment(const SearchSpace& space) {
  Assignment a;
  a.comm_sms = space.comm_sms.front();
  for (const Dimension& d : space.dimensions) a.streams.push_back(d.original_stream);
  return a;
}

std::vector<int> stream_options(const SearchSpace& space, const Dimension& dimension) {
  std::vector<int> out;
  if (dimension.kind == MoveKind::kCompute) {
    for (int s = 0; s < space.compute_streams; ++s) out.push_back(s);
    return out;
  }
  if (dimension.kind == MoveKind::kSyncCollective) out.push_back(sched::kMainStream);
  for (int s = 0; s < space.comm_streams; ++s) out.push_back(sched::kCommStreamBase + s);
  return out;
}

Assignment canonical(const SearchSpace& space, const Assignment& assignment) {
  (void)space;
  Assignment out = assignment;
  std::map<int, int> compute, comm;
  for (int& s : out.streams) {
    if (s == sched::kMainStream) continue;
    std::map<int, int>& labels = is_comm(s) ? comm : compute;
    const int first = is_comm(s) ? sched::kCommStreamBase : 1;
    auto [it, inserted] = labels.emplace(s, first + static_cast<int>(labels.size()));
    s = it->second;
  }
  return out;
}

uint64_t space_size(const SearchSpace& space) {
  // States: (extra compute streams used so far, communication streams used so far).
  std::map<std::pair<int, int>, uint64_t> states{{{0, 0}, 1}};
  for (const Dimension& d : space.dimensions) {
    std::map<std::pair<int, int>, uint64_t> next;
    for (const auto& [state, count] : states) {
      const auto [a, b] = state;
      auto add = [&](std::pair<int, int> to, uint64_t ways) { next[to] = add_sat(next[to], mul_sat(count, ways)); };
      if (d.kind == MoveKind::kCompute) {
        add({a, b}, static_cast<uint64_t>(1 + a));
        if (a < space.compute_streams - 1) add({a + 1, b}, 1);
      } else {
        const uint64_t stay = static_cast<uint64_t>(b + (d.kind == MoveKind::kSyncCollective ? 1 : 0));
        if (stay > 0) add({a, b}, stay);
        if (b < space.comm_streams) add({a, b + 1}, 1);
      }
    }
    states = std::move(next);
  }
  uint64_t total = 0;
  for (const auto& [state, count] : states) total = add_sat(total, count);
  return mul_sat(total, space.comm_sms.size());
}

std::vector<Assignment> enumerate(const SearchSpace& space, uint64_t limit) {
  std::vector<Assignment> out;
  Assignment current;
  current.streams.resize(space.dimensions.size());
  // Canonical labels only: a new extra stream is always the next number.
  std::function<void(size_t, int, int)> visit = [&](size_t i, int a, int b) {
    if (out.size() >= limit) return;
    if (i == space.dimensions.size()) {
      out.push_back(current);
      return;
    }
    const Dimension& d = space.dimensions[i];
    if (d.kind == MoveKind::kCompute) {
      for (int s = 0; s <= a; ++s) {
        current.streams[i] = s;
        visit(i + 1, a, b);
      }
      if (a < space.compute_streams - 1) {
        current.streams[i] = a + 1;
        visit(i + 1, a + 1, b);
      }
      return;
    }
    if (d.kind == MoveKind::kSyncCollective) {
      current.streams[i] = sched::kMainStream;
      visit(i + 1, a, b);
    }
    for (int s = 0; s < b; ++s) {
      current.streams[i] = sched::kCommStreamBase + s;
      visit(i + 1, a, b);
    }
    if (b < space.comm_streams) {
      current.streams[i] = sched::kCommStreamBase + b;
      visit(i + 1, a, b + 1);
    }
  };
  for (int sms : space.comm_sms) {
    current.comm_sms = sms;
    visit(0, 0, 0);
  }
  return out;
}

sched::StreamOverrides overrides_for(const SearchSpace& space, const Assignment& assignment) {
  sched::StreamOverrides out;
  for (size_t i = 0; i < space.dimensions.size() && i < assignment.streams.size(); ++i) {
    const Dimension& d = space.dimensions[i];
    if (assignment.streams[i] != d.original_stream) out[d.instruction] = assignment.streams[i];
  }
  return out;
}

std::string stream_spelling(int stream) {
  return stream == sched::kCommStreamBase ? "comm" : std::to_string(stream);
}

}  // namespace sl::sim
