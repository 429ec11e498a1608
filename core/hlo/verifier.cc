#include "core/hlo/verifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/hlo/verify_context.h"

namespace sl::hlo {
namespace verify_detail {

void Site::error(std::string message) const {
  out.push_back(Diagnostic{Severity::kError, module.file_name, inst.loc, std::move(message)});
}

std::vector<const Shape*> Site::operand_shapes() const {
  std::vector<const Shape*> shapes;
  shapes.reserve(operands.size());
  for (const Instruction* operand : operands) shapes.push_back(&operand->shape);
  return shapes;
}

std::string str(const Shape& shape) { return to_string(shape); }

std::string ref(const Instruction& inst) { return "%" + inst.name; }

std::string written_opcode(const Instruction& inst) {
  if (!inst.async_wrapped) return std::string(opcode_name(inst.opcode));
  std::string name(opcode_name(*inst.async_wrapped));
  switch (inst.opcode) {
    case Opcode::kAsyncStart: return name + "-start";
    case Opcode::kAsyncUpdate: return name + "-update";
    case Opcode::kAsyncDone: return name + "-done";
    default: return name;
  }
}

bool expect_operand_count(const Site& site, size_t n) {
  if (site.operand_count() == n) return true;
  site.error(fmt::format("{} takes {} operand{} but has {}", written_opcode(site.inst), n, n == 1 ? "" : "s",
                         site.operand_count()));
  return false;
}

bool expect_min_operand_count(const Site& site, size_t n) {
  if (site.operand_count() >= n) return true;
  site.error(fmt::format("{} needs at least {} operand{} but has {}", written_opcode(site.inst), n,
                         n == 1 ? "" : "s", site.operand_count()));
  return false;
}

bool expect_shape(const Site& site, const Shape& expected) {
  if (site.inst.shape == expected) return true;
  site.error(fmt::format("{} result shape {} does not match the inferred shape {}", written_opcode(site.inst),
                         str(site.inst.shape), str(expected)));
  return false;
}

bool expect_array_operand(const Site& site, size_t i) {
  if (i < site.operand_count() && site.operand_shape(i).is_array()) return true;
  if (i < site.operand_count()) {
    site.error(fmt::format("{} operand {} ({}) has shape {}, but an array is required", written_opcode(site.inst), i,
                           ref(*site.operands[i]), str(site.operand_shape(i))));
  }
  return false;
}

const Computation* called_computation(const Site& site, size_t k, std::string_view attribute) {
  if (k >= site.inst.called.size()) {
    site.error(fmt::format("{} is missing its {} computation", written_opcode(site.inst), attribute));
    return nullptr;
  }
  int index = site.inst.called[k];
  if (index < 0 || static_cast<size_t>(index) >= site.module.computations.size()) {
    site.error(fmt::format("{} refers to an undefined {} computation", written_opcode(site.inst), attribute));
    return nullptr;
  }
  return &site.module.computations[static_cast<size_t>(index)];
}

std::vector<const Shape*> parameter_shapes(const Computation& computation) {
  int64_t count = 0;
  for (const Instruction& inst : computation.instructions) {
    if (inst.opcode == Opcode::kParameter) ++count;
  }
  std::vector<const Shape*> shapes(static_cast<size_t>(count), nullptr);
  for (const Instruction& inst : computation.instructions) {
    if (inst.opcode == Opcode::kParameter && inst.parameter_number >= 0 && inst.parameter_number < count) {
      shapes[static_cast<size_t>(inst.parameter_number)] = &inst.shape;
    }
  }
  return shapes;
}

const Shape* root_shape(const Computation& computation) {
  if (computation.root < 0 || static_cast<size_t>(computation.root) >= computation.instructions.size()) {
    return nullptr;
  }
  return &computation.instructions[static_cast<size_t>(computation.root)].shape;
}

void expect_arguments(const Site& site, const Computation& callee, const std::vector<const Shape*>& args,
                      std::string_view role) {
  std::vector<const Shape*> params = parameter_shapes(callee);
  if (params.size() != args.size()) {
    site.error(fmt::format("{} passes {} argument{} to {} computation %{}, which takes {} parameter{}",
                           written_opcode(site.inst), args.size(), args.size() == 1 ? "" : "s", role, callee.name,
                           params.size(), params.size() == 1 ? "" : "s"));
    return;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (params[i] == nullptr || args[i] == nullptr) continue;  // reported on the callee itself
    if (*params[i] != *args[i]) {
      site.error(fmt::format("{} argument {} has shape {}, but parameter {} of {} computation %{} is {}",
                             written_opcode(site.inst), i, str(*args[i]), i, role, callee.name, str(*params[i])));
    }
  }
}

void expect_reducer(const Site& site, const Computation& callee, PrimitiveType type, std::string_view what) {
  std::vector<const Shape*> params = parameter_shapes(callee);
  const Shape* root = root_shape(callee);
  if (params.size() != 2) {
    site.error(fmt::format("{} computation %{} must take 2 parameters of type {}[], but takes {}",
                           written_opcode(site.inst), callee.name, primitive_type_name(type), params.size()));
    return;
  }
  for (size_t i = 0; i < 2; ++i) {
    // XLA's verifier takes parameters of the operand's element type of any
    // rank (command_buffer_scheduling_test reduces with an s32[4] add).
    if (params[i] != nullptr && (!params[i]->is_array() || params[i]->type != type)) {
      site.error(fmt::format("{} computation %{} parameter {} has shape {}, but {} has element type {}",
                             written_opcode(site.inst), callee.name, i, str(*params[i]), what,
                             primitive_type_name(type)));
      return;
    }
  }
  if (root != nullptr && (!root->is_array() || root->type != type)) {
    site.error(fmt::format("{} computation %{} returns {}, but {} has element type {} (a {}[] result is required)",
                           written_opcode(site.inst), callee.name, str(*root), what, primitive_type_name(type),
                           primitive_type_name(type)));
  }
}

}  // namespace verify_detail

namespace {

using verify_detail::Site;

void report(const Module& module, std::vector<Diagnostic>& out, SourceLoc loc, std::string message) {
  out.push_back(Diagnostic{Severity::kError, module.file_name, loc, std::move(message)});
}

// Dimensions are non-negative and the byte size fits in int64, so the rules
// below may multiply and add sizes freely. The bound also keeps nested tuples
// finite for the recursive helpers.
bool shape_fits(const Shape& shape, int depth = 0) {
  if (depth > 64) return false;
  if (shape.is_tuple()) {
    for (const Shape& element : shape.elements) {
      if (!shape_fits(element, depth + 1)) return false;
    }
    return true;
  }
  int64_t bytes = std::max<int64_t>(primitive_type_bytes(shape.type), 1);
  for (int64_t d : shape.dims) {
    if (d < 0 || __builtin_mul_overflow(bytes, std::max<int64_t>(d, 1), &bytes)) return false;
  }
  // Leave headroom for all-gather and concatenate results built from this shape.
  return bytes < (int64_t{1} << 52);
}

void dispatch(const Site& site) {
  const Opcode op = site.inst.opcode;
  if (is_collective(op)) {
    verify_detail::verify_collective(site, op, &site.inst.shape);
    return;
  }
  switch (op) {
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      verify_detail::verify_async(site);
      return;
    case Opcode::kReduce:
    case Opcode::kDot:
    case Opcode::kCustomCall:
    case Opcode::kFusion:
      verify_detail::verify_compute(site);
      return;
    case Opcode::kCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
      verify_detail::verify_control(site);
      return;
    case Opcode::kGather: case Opcode::kScatter: case Opcode::kPad: case Opcode::kReverse:
    case Opcode::kReduceWindow: case Opcode::kSelectAndScatter: case Opcode::kMap: case Opcode::kSort:
    case Opcode::kTopK:
      verify_detail::verify_indexing(site);
      return;
    case Opcode::kSend: case Opcode::kRecv: case Opcode::kSendDone: case Opcode::kRecvDone:
    case Opcode::kAfterAll: case Opcode::kAddDependency: case Opcode::kOptimizationBarrier:
    case Opcode::kRngBitGenerator: case Opcode::kRng: case Opcode::kInfeed: case Opcode::kOutfeed:
    case Opcode::kDomain: case Opcode::kRngGetAndUpdateState:
      verify_detail::verify_side_effects(site);
      return;
    default:
      break;
  }
  // convert and stochastic-convert change the element type freely: data rules.
  if (is_elementwise(op) && op != Opcode::kConvert && op != Opcode::kStochasticConvert) {
    verify_detail::verify_elementwise(site);
  } else {
    verify_detail::verify_data(site);
  }
}

// Parameter numbers 0..n-1, each used once.
void verify_parameters(const Module& module, const Computation& computation, std::vector<Diagnostic>& out) {
  int64_t count = 0;
  for (const Instruction& inst : computation.instructions) {
    if (inst.opcode == Opcode::kParameter) ++count;
  }
  std::map<int64_t, const Instruction*> seen;
  for (const Instruction& inst : computation.instructions) {
    if (inst.opcode != Opcode::kParameter) continue;
    const int64_t n = inst.parameter_number;
    if (n < 0 || n >= count) {
      report(module, out, inst.loc,
             fmt::format("parameter number {} is out of range: computation %{} has {} parameter{}, numbered 0 to {}",
                         n, computation.name, count, count == 1 ? "" : "s", count - 1));
      continue;
    }
    auto [it, inserted] = seen.emplace(n, &inst);
    if (!inserted) {
      report(module, out, inst.loc,
             fmt::format("parameter number {} is used twice in computation %{} (also by %{})", n, computation.name,
                         it->second->name));
    }
  }
}

// The header signature, when written, against the parameters and the ROOT.
void verify_signature(const Module& module, const Computation& computation, std::vector<Diagnostic>& out) {
  if (computation.declared_parameters) {
    const auto& declared = *computation.declared_parameters;
    std::vector<const Shape*> actual = verify_detail::parameter_shapes(computation);
    // XLA's parser does not hold the signature's parameter count against the
    // body (command_buffer_scheduling_test writes more than it uses): compare
    // only when they agree.
    if (declared.size() == actual.size()) {
      for (size_t i = 0; i < declared.size(); ++i) {
        if (actual[i] != nullptr && *actual[i] != declared[i]) {
          report(module, out, computation.loc,
                 fmt::format("computation %{} declares parameter {} as {}, but parameter({}) is {}", computation.name,
                             i, verify_detail::str(declared[i]), i, verify_detail::str(*actual[i])));
        }
      }
    }
  }
  const Shape* root = verify_detail::root_shape(computation);
  if (computation.declared_result && root != nullptr && *root != *computation.declared_result) {
    report(module, out, computation.loc,
           fmt::format("computation %{} declares result {}, but its ROOT is {}", computation.name,
                       verify_detail::str(*computation.declared_result), verify_detail::str(*root)));
  }
}

void verify_computation(const Module& module, const Computation& computation, std::vector<Diagnostic>& out) {
  const auto& insts = computation.instructions;
  if (insts.empty()) {
    report(module, out, computation.loc, fmt::format("computation %{} has no instructions", computation.name));
    return;
  }
  if (computation.root < 0 || static_cast<size_t>(computation.root) >= insts.size()) {
    report(module, out, computation.loc, fmt::format("computation %{} has no valid ROOT", computation.name));
  }
  verify_parameters(module, computation, out);
  verify_signature(module, computation, out);

  for (size_t i = 0; i < insts.size(); ++i) {
    const Instruction& inst = insts[i];
    Site site{module, computation, inst, {}, out};
    bool operands_ok = true;
    for (size_t k = 0; k < inst.operands.size(); ++k) {
      const int index = inst.operands[k];
      if (index < 0 || static_cast<size_t>(index) >= insts.size()) {
        site.error(fmt::format("operand {} of %{} is undefined", k, inst.name));
        operands_ok = false;
      } else if (static_cast<size_t>(index) == i) {
        site.error(fmt::format("%{} uses itself as operand {}", inst.name, k));
        operands_ok = false;
      } else if (static_cast<size_t>(index) > i) {
        site.error(fmt::format("operand {} (%{}) of %{} is used before it is defined (line {})", k,
                               insts[static_cast<size_t>(index)].name, inst.name,
                               insts[static_cast<size_t>(index)].loc.line));
        operands_ok = false;
      } else {
        site.operands.push_back(&insts[static_cast<size_t>(index)]);
      }
    }
    if (!shape_fits(inst.shape)) {
      site.error(fmt::format("shape {} of %{} is invalid or too large", verify_detail::str(inst.shape), inst.name));
      continue;
    }
    for (const Instruction* operand : site.operands) operands_ok = operands_ok && shape_fits(operand->shape);
    if (operands_ok) dispatch(site);
  }
  verify_detail::verify_async_pairs(module, computation, out);
  verify_detail::verify_ordering(module, computation, out);
}

}  // namespace

std::vector<Diagnostic> verify(const Module& module) {
  std::vector<Diagnostic> out;
  if (module.replica_count < 1 || module.num_partitions < 1) {
    report(module, out, SourceLoc{1, 1},
           fmt::format("replica_count ({}) and num_partitions ({}) must be at least 1", module.replica_count,
                       module.num_partitions));
    return out;
  }
  int64_t devices = 0;
  if (__builtin_mul_overflow(module.replica_count, module.num_partitions, &devices) || devices > (int64_t{1} << 24)) {
    report(module, out, SourceLoc{1, 1},
           fmt::format("replica_count ({}) x num_partitions ({}) is too large", module.replica_count,
                       module.num_partitions));
    return out;
  }
  if (module.entry < 0 || static_cast<size_t>(module.entry) >= module.computations.size()) {
    report(module, out, SourceLoc{1, 1}, fmt::format("module %{} has no ENTRY computation", module.name));
  }
  for (const Computation& computation : module.computations) verify_computation(module, computation, out);
  return out;
}

Status verify_status(const Module& module) {
  std::vector<Diagnostic> diagnostics = verify(module);
  if (diagnostics.empty()) return ok_status();
  return invalid_input(format_diagnostics(diagnostics, module.source_text));
}

}  // namespace sl::hlo
