#include "sim/kernel_content.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/sched/gemm.h"

namespace sl::sim {
namespace {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

Opcode opcode_of(const Instruction& inst) { return inst.async_wrapped.value_or(inst.opcode); }

const Computation* called(const hlo::Module* module, const Instruction& inst, size_t i = 0) {
  if (module == nullptr || i >= inst.called.size()) return nullptr;
  const int index = inst.called[i];
  if (index < 0 || static_cast<size_t>(index) >= module->computations.size()) return nullptr;
  return &module->computations[static_cast<size_t>(index)];
}

const Instruction& operand(const Computation& c, const Instruction& inst, size_t k) {
  return c.instructions[static_cast<size_t>(inst.operands[k])];
}

double bytes_of(const hlo::Shape& shape) { return static_cast<double>(shape.byte_size()); }
double elements_of(const hlo::Shape& shape) { return static_cast<double>(shape.element_count()); }

// SFU operations per element of a transcendental op (0 for others). XLA's
// GPU emitters turn exp/log into ex2/lg2 with a multiply, rsqrt/sqrt into
// MUFU.RSQ, tanh into MUFU.TANH; the inverse trigonometric and hyperbolic
// functions take about two.
double transcendentals_per_element(Opcode op) {
  switch (op) {
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kLogistic: case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kCbrt:
    case Opcode::kTanh: case Opcode::kSin: case Opcode::kCos: case Opcode::kErf:
      return 1;
    case Opcode::kTan: case Opcode::kSinh: case Opcode::kCosh: case Opcode::kAsin: case Opcode::kAcos:
    case Opcode::kAtan: case Opcode::kAsinh: case Opcode::kAcosh: case Opcode::kAtanh: case Opcode::kAtan2:
    case Opcode::kPower:
      return 2;
    default:
      return 0;
  }
}

// Arithmetic ops of a reducer / comparator / combiner body, at least 1.
double body_ops(const Computation* body) {
  if (body == nullptr) return 1;
  double ops = 0;
  for (const Instruction& i : body->instructions) {
    if (hlo::is_elementwise(i.opcode)) ++ops;
  }
  return std::max(ops, 1.0);
}

struct Work {
  double flops = 0;
  double transcendentals = 0;
  double dot_flops = 0;
  const Computation* dot_computation = nullptr;  // where the largest dot lives
  const Instruction* dot = nullptr;
};

double dot_flops(const sched::GemmDims& d) {
  return 2.0 * static_cast<double>(d.m) * static_cast<double>(d.n) * static_cast<double>(d.k) *
         static_cast<double>(std::max<int64_t>(d.batch, 1));
}

// Flops and transcendentals of one instruction that runs inside a kernel.
void add_instruction(const hlo::Module* module, const Computation& c, const Instruction& inst, Work& w, int depth);

void add_computation(const hlo::Module* module, const Computation& c, Work& w, int depth) {
  if (depth > 16) return;  // nested fusions are shallow; this only guards cycles
  for (const Instruction& inst : c.instructions) add_instruction(module, c, inst, w, depth);
}

void add_instruction(const hlo::Module* module, const Computation& c, const Instruction& inst, Work& w, int depth) {
  const Opcode op = opcode_of(inst);
  const double out = elements_of(inst.shape);
  // A cuBLAS call inside a fusion (XLA's dynamic-slice fusion runs one on a
  // slice of a loop's stacked operand) is that fusion's GEMM.
  const bool library_gemm = op == Opcode::kCustomCall && sched::is_gemm(inst);
  switch (library_gemm ? Opcode::kDot : op) {
    case Opcode::kDot: case Opcode::kScaledDot: case Opcode::kRaggedDot: {
      const double f = dot_flops(sched::gemm_dims(c, inst));
      w.flops += f;
      w.dot_flops += f;
      if (w.dot == nullptr || f > dot_flops(sched::gemm_dims(*w.dot_computation, *w.dot))) {
        w.dot = &inst;
        w.dot_computation = &c;
      }
      return;
    }
    case Opcode::kFusion: case Opcode::kCall:
      if (const Computation* body = called(module, inst)) add_computation(module, *body, w, depth + 1);
      return;
    case Opcode::kReduce:
      if (!inst.operands.empty()) w.flops += elements_of(operand(c, inst, 0).shape) * body_ops(called(module, inst));
      return;
    case Opcode::kReduceWindow: {
      double window = 1;
      for (const hlo::WindowDim& d : inst.window) window *= static_cast<double>(std::max<int64_t>(d.size, 1));
      w.flops += out * window * body_ops(called(module, inst));
      return;
    }
    case Opcode::kScatter:
      if (!inst.operands.empty()) {
        w.flops += elements_of(operand(c, inst, inst.operands.size() - 1).shape) * body_ops(called(module, inst));
      }
      return;
    case Opcode::kSort:
      if (!inst.operands.empty()) {
        const hlo::Shape& keys = operand(c, inst, 0).shape;
        const int64_t dim = inst.dimensions.empty() ? keys.rank() - 1 : inst.dimensions[0];
        const double n = dim >= 0 && dim < keys.rank() ? static_cast<double>(keys.dims[static_cast<size_t>(dim)]) : 1;
        w.flops += elements_of(keys) * std::max(1.0, std::ceil(std::log2(std::max(n, 1.0)))) *
                   body_ops(called(module, inst));
      }
      return;
    case Opcode::kMap:
      w.flops += out * body_ops(called(module, inst));
      return;
    default:
      break;
  }
  if (!hlo::is_elementwise(op) || op == Opcode::kBitcastConvert) return;
  const double t = transcendentals_per_element(op);
  w.transcendentals += out * t;
  // Logistic is 1 / (1 + exp(-x)): an exp and two flops; the others' flops
  // are in their SFU operation.
  w.flops += t > 0 ? (op == Opcode::kLogistic ? 2 * out : 0) : out;
}

// Users of each instruction of `c`: (user index, operand position).
using Users = std::vector<std::vector<std::pair<int, size_t>>>;

Users users_of(const Computation& c) {
  Users users(c.instructions.size());
  for (size_t u = 0; u < c.instructions.size(); ++u) {
    const Instruction& inst = c.instructions[u];
    for (size_t k = 0; k < inst.operands.size(); ++k) {
      const int v = inst.operands[k];
      if (v >= 0 && static_cast<size_t>(v) < users.size()) users[static_cast<size_t>(v)].push_back({static_cast<int>(u), k});
    }
  }
  return users;
}

// Bytes `user` reads of its operand at position k, whose whole value is `full`
// bytes; negative: it reads whatever its own users read (bitcasts).
double read_by_user(const Computation& c, const Instruction& user, size_t k, double full) {
  switch (opcode_of(user)) {
    case Opcode::kBitcast: case Opcode::kGetTupleElement:
      return -1;
    case Opcode::kSlice: case Opcode::kDynamicSlice: case Opcode::kGather:
      return k == 0 ? std::min(full, bytes_of(user.shape)) : full;
    case Opcode::kDynamicUpdateSlice:
      return k == 0 ? 0 : full;  // in place: the rest of the operand is never touched
    case Opcode::kScatter:
      // In place: reads what the updates touch.
      return k == 0 ? std::min(full, bytes_of(operand(c, user, user.operands.size() - 1).shape)) : full;
    default:
      return full;
  }
}

double bytes_read(const Computation& c, const Users& users, int v, int depth = 0) {
  const double full = bytes_of(c.instructions[static_cast<size_t>(v)].shape);
  if (depth > 64) return full;
  double sum = 0;
  for (auto [u, k] : users[static_cast<size_t>(v)]) {
    const double r = read_by_user(c, c.instructions[static_cast<size_t>(u)], k, full);
    sum += r < 0 ? bytes_read(c, users, u, depth + 1) : r;
    if (sum >= full) return full;
  }
  return sum;
}

// Whether `v` is a parameter of `c`, seen through bitcasts.
bool is_parameter(const Computation& c, int v) {
  for (int depth = 0; depth < 64 && v >= 0; ++depth) {
    const Instruction& inst = c.instructions[static_cast<size_t>(v)];
    if (inst.opcode == Opcode::kParameter) return true;
    if (inst.opcode != Opcode::kBitcast || inst.operands.empty()) return false;
    v = inst.operands[0];
  }
  return false;
}

// Bytes the value `v` writes as (part of) a kernel's result: an in-place
// update writes only its update.
double bytes_written(const Computation& c, int v, int depth = 0) {
  const Instruction& inst = c.instructions[static_cast<size_t>(v)];
  if (depth > 64) return bytes_of(inst.shape);
  switch (opcode_of(inst)) {
    case Opcode::kTuple: {
      double sum = 0;
      for (int o : inst.operands) sum += bytes_written(c, o, depth + 1);
      return sum;
    }
    case Opcode::kBitcast:
      return inst.operands.empty() ? 0 : std::min(bytes_of(inst.shape), bytes_written(c, inst.operands[0], depth + 1));
    case Opcode::kDynamicUpdateSlice:
      if (inst.operands.size() >= 2 && is_parameter(c, inst.operands[0])) return bytes_of(operand(c, inst, 1).shape);
      break;
    case Opcode::kCustomCall:
      // A cuBLAS call's workspace (its result's s8 leaf, 32 MiB) is scratch, not output.
      if (const int leaf = sched::gemm_workspace_leaf(inst, inst.shape); sched::is_gemm(inst) && leaf >= 0) {
        return bytes_of(inst.shape) - bytes_of(*inst.shape.leaves()[static_cast<size_t>(leaf)]);
      }
      break;
    case Opcode::kScatter:
      if (inst.operands.size() >= 3 && is_parameter(c, inst.operands[0])) {
        return bytes_of(operand(c, inst, inst.operands.size() - 1).shape);
      }
      break;
    case Opcode::kGetTupleElement:
      // The same workspace taken out of the call's tuple (a dynamic-slice
      // fusion's root returns it beside the updated stack).
      if (sched::takes_gemm_workspace(c, inst)) return 0;
      break;
    default:
      break;
  }
  return bytes_of(inst.shape);
}

// A fusion: what its parameters read, its root writes, its body computes.
KernelWork fusion_work(const hlo::Module* module, const Computation& body) {
  KernelWork out;
  const Users users = users_of(body);
  for (int p : body.parameters) {
    if (p >= 0 && static_cast<size_t>(p) < body.instructions.size()) out.bytes_read += bytes_read(body, users, p);
  }
  if (body.root >= 0) out.bytes_written = bytes_written(body, body.root);
  Work w;
  add_computation(module, body, w, 0);
  if (w.dot != nullptr) {
    out.work_class = WorkClass::kGemm;
    out.gemm = sched::gemm_dims(*w.dot_computation, *w.dot);
    out.flops = w.dot_flops;  // the epilogue's elementwise work hides under the tiles' math
    out.transcendentals = 0;
    return out;
  }
  out.work_class = WorkClass::kFusion;
  out.flops = w.flops;
  out.transcendentals = w.transcendentals;
  return out;
}

// An implicit GEMM: m = output elements per output feature, n = output
// features, k = the kernel's input features times its spatial window.
sched::GemmDims convolution_dims(const Computation& c, const Instruction& conv) {
  sched::GemmDims d;
  if (conv.operands.size() < 2) return d;
  const hlo::Shape& kernel = operand(c, conv, 1).shape;
  d.type = operand(c, conv, 0).shape.type;
  const std::string& labels = conv.dim_labels;  // b01f_01io->b01f
  const size_t us = labels.find('_');
  const size_t arrow = labels.find("->");
  int64_t k = 1, n = 1;
  if (us != std::string::npos && arrow != std::string::npos && arrow > us) {
    const std::string rhs = labels.substr(us + 1, arrow - us - 1);
    for (size_t i = 0; i < rhs.size() && static_cast<int64_t>(i) < kernel.rank(); ++i) {
      if (rhs[i] == 'o') n = kernel.dims[i];
      else k *= kernel.dims[i];  // 'i' and the spatial dims
    }
  } else if (kernel.rank() >= 1) {
    n = kernel.dims.back();
    for (int64_t i = 0; i + 1 < kernel.rank(); ++i) k *= kernel.dims[static_cast<size_t>(i)];
  }
  const int64_t out = conv.shape.element_count();
  d.n = std::max<int64_t>(n, 1);
  d.m = std::max<int64_t>(out / d.n, 1);
  d.k = std::max<int64_t>(k, 1);
  return d;
}

double operand_bytes(const Computation& c, const Instruction& inst) {
  double sum = 0;
  for (size_t k = 0; k < inst.operands.size(); ++k) sum += bytes_of(operand(c, inst, k).shape);
  return sum;
}

}  // namespace

const char* work_class_name(WorkClass c) {
  switch (c) {
    case WorkClass::kThunk: return "thunk";
    case WorkClass::kGemm: return "gemm";
    case WorkClass::kConvolution: return "convolution";
    case WorkClass::kFusion: return "fusion";
    case WorkClass::kReduction: return "reduction";
    case WorkClass::kElementwise: return "elementwise";
    case WorkClass::kGather: return "gather";
    case WorkClass::kScatter: return "scatter";
    case WorkClass::kSort: return "sort";
    case WorkClass::kCustomCall: return "custom-call";
  }
  return "thunk";
}

KernelWork instruction_work(const hlo::Module* module, const Computation& c, const Instruction& inst) {
  const Opcode op = opcode_of(inst);
  KernelWork out;
  // An explicit async-start runs its computation's root.
  if (op == Opcode::kAsyncStart) {
    const Computation* body = called(module, inst);
    if (body == nullptr || body->root < 0) return out;
    return instruction_work(module, *body, body->instructions[static_cast<size_t>(body->root)]);
  }
  auto single = [&](WorkClass cls) {
    Work w;
    add_instruction(module, c, inst, w, 0);
    out.work_class = cls;
    out.flops = w.flops;
    out.transcendentals = w.transcendentals;
    for (size_t k = 0; k < inst.operands.size(); ++k) {
      const double full = bytes_of(operand(c, inst, k).shape);
      const double r = read_by_user(c, inst, k, full);
      out.bytes_read += r < 0 ? full : r;
    }
    out.bytes_written = bytes_of(inst.shape);
    return out;
  };
  switch (op) {
    case Opcode::kFusion:
      if (const Computation* body = called(module, inst)) return fusion_work(module, *body);
      return out;
    case Opcode::kConvolution:
      out.work_class = WorkClass::kConvolution;
      out.gemm = convolution_dims(c, inst);
      out.flops = dot_flops(out.gemm);
      out.bytes_read = operand_bytes(c, inst);
      out.bytes_written = bytes_of(inst.shape);
      return out;
    case Opcode::kReduce: case Opcode::kReduceWindow:
      return single(WorkClass::kReduction);
    case Opcode::kGather:
      return single(WorkClass::kGather);
    case Opcode::kScatter:
      single(WorkClass::kScatter);
      if (inst.operands.size() >= 3) out.bytes_written = bytes_of(operand(c, inst, inst.operands.size() - 1).shape);
      return out;
    case Opcode::kSort:
      return single(WorkClass::kSort);
    case Opcode::kCustomCall:
      if (sched::is_gemm(inst)) return out;
      out.work_class = WorkClass::kCustomCall;
      out.bytes_read = operand_bytes(c, inst);
      out.bytes_written = bytes_of(inst.shape);
      return out;
    default:
      if (hlo::is_elementwise(op) && transcendentals_per_element(op) > 0) return single(WorkClass::kElementwise);
      return out;
  }
}

KernelWork kernel_work(const hlo::Module* module, const sched::Thunk& thunk) {
  KernelWork out;
  if (thunk.kind == sched::ThunkKind::kKernel && thunk.instruction != nullptr && thunk.computation != nullptr) {
    out = instruction_work(module, *thunk.computation, *thunk.instruction);
  }
  if (out.work_class == WorkClass::kThunk) {
    out.flops = static_cast<double>(thunk.flops);
    out.bytes_read = static_cast<double>(thunk.bytes_accessed);
    out.bytes_written = 0;
  }
  return out;
}

}  // namespace sl::sim
