// Async pairs (docs/program-format.md): explicit async-start `((operands...),
// output, context...)` matching the called computation; XLA's sugared start
// shapes (all-gather, all-reduce, collective-permute, copy); done shape = the
// wrapped op's result; done/update operands are starts;
// every start has exactly one done.

#include <fmt/format.h>

#include <map>

#include "core/hlo/verify_context.h"

namespace sl::hlo::verify_detail {
namespace {

Shape operands_tuple(const Site& site) {
  std::vector<Shape> elements;
  for (const Instruction* operand : site.operands) elements.push_back(operand->shape);
  return Shape::tuple(std::move(elements));
}

// all-gather-start and collective-permute-start hold the operand itself when
// there is one, a tuple of them otherwise.
Shape operands_one_or_tuple(const Site& site) {
  if (site.operand_count() == 1) return site.operand_shape(0);
  return operands_tuple(site);
}

// The start shape as a tuple of at least `min_elements`; reports otherwise.
bool expect_start_tuple(const Site& site, size_t min_elements, std::string_view form) {
  const Shape& shape = site.inst.shape;
  if (shape.is_tuple() && shape.elements.size() >= min_elements) return true;
  site.error(fmt::format("{} shape must be {}, but is {}", written_opcode(site.inst), form, str(shape)));
  return false;
}

bool expect_element0(const Site& site, const Shape& expected) {
  const Shape& got = site.inst.shape.elements[0];
  if (got == expected) return true;
  site.error(fmt::format("{} shape element 0 is {}, but the operands are {}", written_opcode(site.inst), str(got),
                         str(expected)));
  return false;
}

// A start that wraps a computation (explicit async-start, call-start, fusion-start).
void verify_called_start(const Site& site) {
  const std::string_view attribute = "calls";
  const Computation* callee = called_computation(site, 0, attribute);
  if (!expect_start_tuple(site, 2, "((operands...), output, ...)")) return;
  expect_element0(site, operands_tuple(site));
  if (callee == nullptr) return;
  expect_arguments(site, *callee, site.operand_shapes(), "called");
  const Shape* root = root_shape(*callee);
  if (root != nullptr && *root != site.inst.shape.elements[1]) {
    site.error(fmt::format("{} output shape {} does not match the root of called computation %{}, {}",
                           written_opcode(site.inst), str(site.inst.shape.elements[1]), callee->name, str(*root)));
  }
}

void verify_start(const Site& site) {
  if (!site.inst.async_wrapped) {
    verify_called_start(site);
    return;
  }
  const Opcode wrapped = *site.inst.async_wrapped;
  const Shape& shape = site.inst.shape;
  switch (wrapped) {
    case Opcode::kAllReduce:
      // XLA: all-reduce-start has the all-reduce's own result shape.
      verify_collective(site, wrapped, &shape);
      return;
    case Opcode::kAllGather:
      if (site.operand_count() == 0) break;
      if (!shape.is_tuple() || shape.elements.size() != 2) {
        site.error(fmt::format("all-gather-start shape must be (operand(s), result(s)), but is {}", str(shape)));
        break;
      }
      expect_element0(site, operands_one_or_tuple(site));
      verify_collective(site, wrapped, &shape.elements[1]);
      return;
    case Opcode::kCollectivePermute:
      if (site.operand_count() == 0 || !expect_start_tuple(site, 2, "(operand, result, u32[], u32[])")) break;
      // The in-place form (input, output, input offsets, output offsets)
      // starts as (input, output, ...) like the one-operand form.
      expect_element0(site, is_in_place_permute(site) ? site.operand_shape(0) : operands_one_or_tuple(site));
      for (size_t k = 2; k < shape.elements.size(); ++k) {
        const Shape& context = shape.elements[k];
        if (!context.is_array() || context.rank() != 0) {
          site.error(fmt::format("collective-permute-start context element {} must be a scalar such as u32[], but is {}",
                                 k, str(context)));
        }
      }
      verify_collective(site, wrapped, &shape.elements[1]);
      return;
    case Opcode::kCall:
    case Opcode::kFusion:
      verify_called_start(site);
      return;
    case Opcode::kCopy:
      // XLA: copy-start is (destination, source, u32[] context); copy-done returns the destination.
      if (!expect_operand_count(site, 1)) return;
      if (!shape.is_tuple() || shape.elements.size() != 3 || shape.elements[0] != site.operand_shape(0) ||
          shape.elements[1] != site.operand_shape(0) || shape.elements[2] != Shape::array(PrimitiveType::kU32, {})) {
        const std::string in = str(site.operand_shape(0));
        site.error(fmt::format("copy-start shape must be ({}, {}, u32[]), but is {}", in, in, str(shape)));
      }
      return;
    default:
      break;
  }
  if (wrapped == Opcode::kAllGather || wrapped == Opcode::kCollectivePermute) {
    // No operands or a malformed start shape (reported): still check the attributes.
    verify_collective(site, wrapped, nullptr);
    return;
  }
  if (is_collective(wrapped)) {
    // reduce-scatter-start and friends: the generic ((operands...), output, ...).
    if (site.operand_count() == 0 || !expect_start_tuple(site, 2, "((operands...), output, ...)")) {
      verify_collective(site, wrapped, nullptr);
      return;
    }
    expect_element0(site, operands_tuple(site));
    verify_collective(site, wrapped, &shape.elements[1]);
    return;
  }
  // custom-call-start and other wrapped ops: the output cannot be inferred here.
  if (expect_start_tuple(site, 2, "((operands...), output, ...)")) expect_element0(site, operands_tuple(site));
}

// Follows async-update operands back to the start; null if the chain does not
// lead to one. Operand indices of earlier instructions were checked by the
// driver, but guard anyway: this walks instructions other than the site.
const Instruction* start_of(const Computation& computation, const Instruction& inst) {
  const Instruction* current = &inst;
  for (size_t steps = 0; steps <= computation.instructions.size(); ++steps) {
    if (current->operands.empty()) return nullptr;
    const int index = current->operands[0];
    if (index < 0 || static_cast<size_t>(index) >= computation.instructions.size()) return nullptr;
    const Instruction& operand = computation.instructions[static_cast<size_t>(index)];
    if (operand.opcode == Opcode::kAsyncStart) return &operand;
    if (operand.opcode != Opcode::kAsyncUpdate) return nullptr;
    current = &operand;
  }
  return nullptr;
}

// What a done returns for this start: the wrapped op's result.
const Shape* start_output(const Instruction& start) {
  if (start.async_wrapped == Opcode::kAllReduce) return &start.shape;
  if (start.async_wrapped == Opcode::kCopy) {
    return start.shape.is_tuple() && !start.shape.elements.empty() ? &start.shape.elements[0] : nullptr;
  }
  if (start.shape.is_tuple() && start.shape.elements.size() >= 2) return &start.shape.elements[1];
  return nullptr;  // malformed start, reported there
}

bool expect_async_operand(const Site& site) {
  if (!expect_operand_count(site, 1)) return false;
  const Instruction& operand = *site.operands[0];
  if (operand.opcode == Opcode::kAsyncStart || operand.opcode == Opcode::kAsyncUpdate) {
    if (site.inst.async_wrapped != operand.async_wrapped) {
      site.error(fmt::format("{} operand {} is {}, not the matching start", written_opcode(site.inst), ref(operand),
                             written_opcode(operand).insert(0, "a ")));
      return false;
    }
    return true;
  }
  site.error(fmt::format("{} operand {} must be an async start, but is {}", written_opcode(site.inst), ref(operand),
                         written_opcode(operand)));
  return false;
}

void verify_update(const Site& site) {
  if (!expect_async_operand(site)) return;
  if (site.inst.shape != site.operand_shape(0)) {
    site.error(fmt::format("{} shape {} must equal the shape of its start {}, {}", written_opcode(site.inst),
                           str(site.inst.shape), ref(*site.operands[0]), str(site.operand_shape(0))));
  }
}

void verify_done(const Site& site) {
  if (!expect_async_operand(site)) return;
  const Instruction* start = start_of(site.computation, site.inst);
  if (start == nullptr) return;
  const Shape* output = start_output(*start);
  if (output != nullptr && *output != site.inst.shape) {
    site.error(fmt::format("{} shape {} does not match the result of {}, {}", written_opcode(site.inst),
                           str(site.inst.shape), ref(*start), str(*output)));
  }
}

}  // namespace

void verify_async(const Site& site) {
  switch (site.inst.opcode) {
    case Opcode::kAsyncStart: verify_start(site); break;
    case Opcode::kAsyncUpdate: verify_update(site); break;
    case Opcode::kAsyncDone: verify_done(site); break;
    default: break;
  }
}

void verify_async_pairs(const Module& module, const Computation& computation, std::vector<Diagnostic>& out) {
  std::map<const Instruction*, const Instruction*> done_of;
  for (const Instruction& inst : computation.instructions) {
    if (inst.opcode != Opcode::kAsyncDone) continue;
    const Instruction* start = start_of(computation, inst);
    if (start == nullptr) continue;  // reported by verify_done
    auto [it, inserted] = done_of.emplace(start, &inst);
    if (!inserted) {
      out.push_back(Diagnostic{Severity::kError, module.file_name, inst.loc,
                               fmt::format("%{} is a second done for %{} (the first is %{})", inst.name, start->name,
                                           it->second->name)});
    }
  }
  for (const Instruction& inst : computation.instructions) {
    if (inst.opcode != Opcode::kAsyncStart || done_of.count(&inst)) continue;
    std::string done = inst.async_wrapped ? std::string(opcode_name(*inst.async_wrapped)) + "-done" : "async-done";
    out.push_back(Diagnostic{Severity::kError, module.file_name, inst.loc,
                             fmt::format("%{} has no matching {}", inst.name, done)});
  }
}

}  // namespace sl::hlo::verify_detail
