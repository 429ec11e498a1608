#include "app/gui/model/program_outline.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/exec/cpu/array_util.h"
#include "core/hlo/shape.h"

namespace sl::gui {
namespace {

void visit(const hlo::Module& module, int index, std::vector<bool>& seen, std::vector<int>& order) {
  if (index < 0 || static_cast<size_t>(index) >= module.computations.size() || seen[static_cast<size_t>(index)]) return;
  seen[static_cast<size_t>(index)] = true;
  order.push_back(index);
  for (const hlo::Instruction& inst : module.computations[static_cast<size_t>(index)].instructions) {
    // What lowering emits: a call's and an async-start's callee, a while's
    // body (its condition is unrolled away) and a conditional's first branch.
    const auto& called = inst.called;
    switch (inst.opcode) {
      case hlo::Opcode::kCall:
      case hlo::Opcode::kAsyncStart:
        for (int callee : called) visit(module, callee, seen, order);
        break;
      case hlo::Opcode::kWhile:
        if (called.size() > 1) visit(module, called[1], seen, order);
        break;
      case hlo::Opcode::kConditional:
        if (!called.empty()) visit(module, called[0], seen, order);
        break;
      default:
        break;
    }
  }
}

std::string where(const hlo::Instruction& inst) {
  return inst.loc.line > 0 ? fmt::format("line {}: ", inst.loc.line) : std::string();
}

// 2*m*n*k from the shapes, as the cpu evaluator estimates it before a dot or a gemm.
double gemm_flops(const hlo::Computation& c, const hlo::Instruction& inst, const hlo::Shape& out) {
  if (inst.operands.size() < 2) return 0;
  auto count = [&](size_t k) {
    return static_cast<double>(c.instructions[static_cast<size_t>(inst.operands[k])].shape.element_count());
  };
  const double out_elems = std::max<double>(1.0, static_cast<double>(out.element_count()));
  return 2.0 * out_elems * std::sqrt(count(0) * count(1) / out_elems);
}

}  // namespace

std::vector<int> computations_in_call_order(const hlo::Module& module) {
  std::vector<bool> seen(module.computations.size(), false);
  std::vector<int> order;
  visit(module, module.entry, seen, order);
  return order;
}

ProgramOutline outline_program(const hlo::Module& module, const std::vector<sched::StreamAssignmentEntry>& streams) {
  // Lowering lists an instruction when it emits it, callers before callees,
  // so the k-th entry named `x` belongs to the k-th computation holding an
  // `x` in call order.
  std::map<std::string, std::vector<int>> holders;
  for (int c : computations_in_call_order(module)) {
    for (const hlo::Instruction& inst : module.computations[static_cast<size_t>(c)].instructions) {
      auto& list = holders[inst.name];
      if (list.empty() || list.back() != c) list.push_back(c);
    }
  }
  ProgramOutline outline;
  outline.computations.reserve(streams.size());
  std::map<std::string, size_t> used;
  for (const auto& entry : streams) {
    auto it = holders.find(entry.instruction);
    size_t& k = used[entry.instruction];
    if (it == holders.end() || it->second.empty()) {
      outline.computations.emplace_back();
      continue;
    }
    const int c = it->second[std::min(k, it->second.size() - 1)];
    ++k;
    outline.computations.push_back(module.computations[static_cast<size_t>(c)].name);
  }
  outline.cpu_refusal = cpu_refusal(module);
  return outline;
}

std::string cpu_refusal(const hlo::Module& module) {
  for (const hlo::Computation& c : module.computations) {
    for (const hlo::Instruction& inst : c.instructions) {
      for (const hlo::Shape* leaf : inst.shape.leaves()) {
        if (leaf->element_count() > exec::cpu::kMaxElements) {
          return fmt::format("{}'{}' {} has more than {} elements, too large for the cpu backend", where(inst),
                             inst.name, hlo::to_string(*leaf), exec::cpu::kMaxElements);
        }
      }
      double flops = 0;
      if (inst.opcode == hlo::Opcode::kDot) {
        flops = gemm_flops(c, inst, inst.shape);
      } else if (inst.opcode == hlo::Opcode::kCustomCall) {
        const std::string& target = inst.custom_call_target;
        if (target != "__cublas$gemm" && target != "__cublas$lt$matmul") {
          return fmt::format("{}'{}' calls custom_call_target=\"{}\", an opaque kernel the cpu backend cannot evaluate",
                             where(inst), inst.name, target);
        }
        flops = gemm_flops(c, inst, inst.shape.is_tuple() && !inst.shape.elements.empty() ? inst.shape.elements[0]
                                                                                          : inst.shape);
      }
      if (flops > exec::cpu::kMaxDotFlops) {
        return fmt::format("{}'{}' is a {:.3g} GFLOP matrix product; the cpu backend stops at {:.3g} GFLOP "
                           "(rerun on sim or cuda)", where(inst), inst.name, flops / 1e9, exec::cpu::kMaxDotFlops / 1e9);
      }
    }
  }
  return "";
}

}  // namespace sl::gui
