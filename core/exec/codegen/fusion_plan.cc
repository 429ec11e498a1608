// How each fusion runs on the cuda backend (fusion_plan.h).

#include "core/exec/codegen/fusion_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "core/exec/codegen/gemm_operand.h"
#include "core/exec/codegen/scatter_codegen.h"
#include "core/sched/dot_precision.h"

namespace sl::exec::codegen {

using hlo::Opcode;
using hlo::PrimitiveType;

const char* fusion_path_name(FusionPath path) {
  switch (path) {
    case FusionPath::kGenerated: return "generated";
    case FusionPath::kCublasGemm: return "cublas_gemm";
    case FusionPath::kOpByOp: return "op_by_op";
    case FusionPath::kNone: return "none";
  }
  return "none";
}

std::string backend_kind(const hlo::Instruction& fusion) {
  // XLA writes backend_config as compact JSON: fusion_backend_config's
  // "kind" is the only "kind" key of a fusion's config.
  const std::string key = "\"kind\":\"";
  const size_t at = fusion.backend_config.find(key);
  if (at == std::string::npos) return "";
  const size_t start = at + key.size();
  const size_t end = fusion.backend_config.find('"', start);
  return end == std::string::npos ? "" : fusion.backend_config.substr(start, end - start);
}

bool is_gemm_fusion(const hlo::Instruction& fusion) {
  const std::string kind = backend_kind(fusion);
  return fusion.fusion_kind == "kCustom" && (kind == "__triton_gemm" || kind == "__triton_nested_gemm_fusion");
}

bool generates(const hlo::Instruction& fusion) {
  return generates_kind(fusion.fusion_kind) || (fusion.fusion_kind == "kCustom" && backend_kind(fusion) == "__triton");
}

namespace {

const hlo::Instruction& at(const hlo::Computation& c, int k) { return c.instructions.at(static_cast<size_t>(k)); }

Status no_kernel(const hlo::Instruction& inst, const std::string& why) {
  return runtime_error(fmt::format("{} '{}' {}", hlo::opcode_name(inst.opcode), inst.name, why));
}

bool per_op_elementwise(Opcode op) {
  switch (op) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kRemainder: case Opcode::kAnd:
    case Opcode::kOr: case Opcode::kNegate: case Opcode::kAbs: case Opcode::kExp: case Opcode::kConvert:
    case Opcode::kCompare: case Opcode::kSelect:
      return true;
    default:
      return false;
  }
}

int root_of(const hlo::Computation& c) { return c.root >= 0 ? c.root : static_cast<int>(c.instructions.size()) - 1; }

// Instructions reachable from `outputs` (operands first), not entering
// called computations.
std::vector<int> post_order(const hlo::Computation& c, const std::vector<int>& outputs) {
  std::vector<int> order;
  std::vector<char> seen(c.instructions.size(), 0);
  std::function<void(int)> visit = [&](int k) {
    if (seen[static_cast<size_t>(k)]) return;
    seen[static_cast<size_t>(k)] = 1;
    for (int o : at(c, k).operands) visit(o);
    order.push_back(k);
  };
  for (int o : outputs) visit(o);
  return order;
}

int64_t reduced_elements(const hlo::Computation& c, const hlo::Instruction& reduce) {
  const hlo::Shape& in = at(c, reduce.operands.at(0)).shape;
  int64_t n = 1;
  for (int64_t d : reduce.dimensions) {
    if (d >= 0 && d < in.rank()) n *= in.dims[static_cast<size_t>(d)];
  }
  return n;
}

TempBuffer temp_of(const hlo::Computation& c, int k) {
  const hlo::Instruction& inst = at(c, k);
  return {k, inst.shape.type, inst.shape.element_count()};
}

std::vector<BufferRef> parameter_refs(const hlo::Computation& c) {
  std::vector<BufferRef> params;
  for (size_t n = 0; n < c.parameters.size(); ++n) params.push_back({BufferRef::kOperand, static_cast<int>(n)});
  return params;
}

// The scatter's operand into the output, then the updates into it.
Result<FusionPlan> scatter_plan(const hlo::Module& module, const hlo::Instruction& fusion, const hlo::Computation& c) {
  FusionPlan plan;
  plan.path = FusionPath::kGenerated;
  const int k = fusion_outputs(c)[0];
  const hlo::Instruction& s = at(c, k);
  if (s.operands.size() != 3) return runtime_error(fmt::format("scatter '{}' has more than one operand", s.name));
  const std::string base = identifier(fusion.name);
  std::vector<BufferRef> args = parameter_refs(c);
  args.push_back({BufferRef::kResult, 0});
  FusionStep copy;
  SL_ASSIGN_OR_RETURN(copy.kernel, generate_kernel(module, c,
                                                   {.name = base + "_operand",
                                                    .comment = fmt::format("{}: the operand of {}", fusion.name, s.name),
                                                    .outputs = {s.operands[0]},
                                                    .loaded = {}}));
  copy.args = args;
  const hlo::Instruction& operand = at(c, s.operands[0]);
  if (operand.opcode == Opcode::kParameter) copy.skip_if_aliased = static_cast<int>(operand.parameter_number);
  plan.steps.push_back(std::move(copy));
  FusionStep updates;
  SL_ASSIGN_OR_RETURN(updates.kernel, generate_scatter_kernel(module, c, k, base));
  updates.args = args;
  plan.steps.push_back(std::move(updates));
  return plan;
}

// Generated kernels: reduces nested in another loop that no warp computes
// for its row first (one kernel each,
// in dependency order, into temporaries), then the fusion's kernel reading them.
Result<FusionPlan> generated_plan(const hlo::Module& module, const hlo::Instruction& fusion, const hlo::Computation& c) {
  FusionPlan plan;
  plan.path = FusionPath::kGenerated;
  const std::vector<int> outputs = fusion_outputs(c);
  if (outputs.size() == 1 && at(c, outputs[0]).opcode == Opcode::kScatter) return scatter_plan(module, fusion, c);
  std::set<int> drivers;
  for (int o : outputs) {
    if (auto r = loop_driver(c, o, {})) drivers.insert(*r);
  }
  // Reduces a warp computes for the row its loop is on stay in the kernel.
  const RowLocalPlan warp = row_local_plan(c, outputs, {}, false);
  std::vector<int> hoisted;
  for (int k : post_order(c, outputs)) {
    const hlo::Instruction& inst = at(c, k);
    if (inst.opcode == Opcode::kReduce && !drivers.count(k) && !warp.in_warp.count(k) && inst.operands.size() == 2 &&
        reduced_elements(c, inst) >= kHoistReducedElements) {
      hoisted.push_back(k);
    }
  }
  const std::string base = identifier(fusion.name);
  std::vector<BufferRef> params;
  for (size_t n = 0; n < c.parameters.size(); ++n) params.push_back({BufferRef::kOperand, static_cast<int>(n)});
  std::vector<int> loaded;
  std::vector<BufferRef> loaded_refs;
  for (size_t h = 0; h < hoisted.size(); ++h) {
    const int k = hoisted[h];
    SL_ASSIGN_OR_RETURN(GeneratedKernel kernel,
                        generate_kernel(module, c,
                                        {.name = fmt::format("{}_reduce{}", base, h),
                                         .comment = fmt::format("{}: {} hoisted", fusion.name, at(c, k).name),
                                         .outputs = {k},
                                         .loaded = loaded,
                                         .outputs_are_temporaries = true}));
    FusionStep step;
    step.kernel = std::move(kernel);
    step.args = params;
    step.args.insert(step.args.end(), loaded_refs.begin(), loaded_refs.end());
    const BufferRef temp{BufferRef::kTemp, static_cast<int>(plan.temps.size())};
    step.args.push_back(temp);
    plan.temps.push_back(temp_of(c, k));
    plan.steps.push_back(std::move(step));
    loaded.push_back(k);
    loaded_refs.push_back(temp);
  }
  SL_ASSIGN_OR_RETURN(GeneratedKernel kernel,
                      generate_kernel(module, c,
                                      {.name = base,
                                       .comment = fmt::format("{} ({}, computation {})", fusion.name,
                                                              fusion.fusion_kind, c.name),
                                       .outputs = outputs,
                                       .loaded = loaded}));
  FusionStep step;
  step.kernel = std::move(kernel);
  step.args = params;
  step.args.insert(step.args.end(), loaded_refs.begin(), loaded_refs.end());
  for (size_t o = 0; o < outputs.size(); ++o) step.args.push_back({BufferRef::kResult, static_cast<int>(o)});
  plan.steps.push_back(std::move(step));
  plan.hoisted_reduces = static_cast<int>(hoisted.size());
  return plan;
}

bool gemm_type(PrimitiveType t) { return t == PrimitiveType::kBF16 || t == PrimitiveType::kF16 || t == PrimitiveType::kF32; }

// minor_to_major of a layout that swaps the two minor dimensions of rank r.
bool minor_dims_swapped(const hlo::Shape& s) {
  const int64_t r = s.rank();
  if (r < 2 || s.minor_to_major.size() != static_cast<size_t>(r)) return false;
  if (s.minor_to_major[0] != r - 2 || s.minor_to_major[1] != r - 1) return false;
  for (int64_t i = 2; i < r; ++i) {
    if (s.minor_to_major[static_cast<size_t>(i)] != r - 1 - i) return false;
  }
  return true;
}

// The GEMM kernels (cuBLASLt, the reference kernel) take [batch..., m, k] x
// [batch..., k, n], either operand transposed in its two minor dimensions.
// `k` = multiply(x, broadcast(c)) (either order) of bf16/f32 with c a
// scalar constant power of two: x's index and c. Scaling by it is exact in
// f32 and bf16 (same exponent range), so alpha * (A.B) equals (c * A).B.
std::optional<std::pair<int, double>> power_of_two_scale(const hlo::Computation& c, int k) {
  const hlo::Instruction& m = at(c, k);
  if (m.opcode != Opcode::kMultiply || m.operands.size() != 2) return std::nullopt;
  if (m.shape.type != PrimitiveType::kBF16 && m.shape.type != PrimitiveType::kF32) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const hlo::Instruction& b = at(c, m.operands[static_cast<size_t>(side)]);
    if (b.opcode != Opcode::kBroadcast || b.operands.size() != 1) continue;
    const hlo::Instruction& k0 = at(c, b.operands[0]);
    if (k0.opcode != Opcode::kConstant || k0.literal.size() != 1) continue;
    int exponent = 0;
    const double v = k0.literal[0];
    if (v == 0.0 || !std::isfinite(v) || std::fabs(std::frexp(v, &exponent)) != 0.5) continue;
    const int x = m.operands[static_cast<size_t>(1 - side)];
    if (at(c, x).shape.type != m.shape.type) continue;
    return std::make_pair(x, v);
  }
  return std::nullopt;
}

Status gemm_shaped(const hlo::Computation& c, const hlo::Instruction& d) {
  const hlo::Shape& ls = at(c, d.operands.at(0)).shape;
  const hlo::Shape& rs = at(c, d.operands.at(1)).shape;
  const hlo::DotDims& dims = d.dot;
  const auto nb = static_cast<int64_t>(dims.lhs_batch.size());
  if (ls.rank() != nb + 2 || rs.rank() != nb + 2 || dims.lhs_contracting.size() != 1 ||
      dims.rhs_contracting.size() != 1 || dims.rhs_batch.size() != dims.lhs_batch.size()) {
    return runtime_error(
        fmt::format("dot '{}' is not [batch..., m, k] x [batch..., k, n] with one contracting dimension", d.name));
  }
  for (int64_t b = 0; b < nb; ++b) {
    if (dims.lhs_batch[static_cast<size_t>(b)] != b || dims.rhs_batch[static_cast<size_t>(b)] != b) {
      return runtime_error(fmt::format("dot '{}' has batch dimensions that are not leading", d.name));
    }
  }
  return ok_status();
}

Result<FusionPlan> gemm_plan(const hlo::Module& module, const hlo::Instruction& fusion, const hlo::Computation& c) {
  auto refuse = [](const std::string& why) { return runtime_error(why); };
  int dot = -1;
  for (size_t k = 0; k < c.instructions.size(); ++k) {
    if (c.instructions[k].opcode != Opcode::kDot) continue;
    if (dot >= 0) return refuse("more than one dot");
    dot = static_cast<int>(k);
  }
  if (dot < 0) return refuse("no dot");
  const hlo::Instruction& d = at(c, dot);
  const hlo::Shape& ls = at(c, d.operands.at(0)).shape;
  const hlo::Shape& rs = at(c, d.operands.at(1)).shape;
  const hlo::DotDims& dims = d.dot;
  const auto nb = static_cast<int64_t>(dims.lhs_batch.size());
  // One batch dimension anywhere but minor: a strided batch (gemm_operand.h).
  std::optional<StridedOperand> lhs_strided, rhs_strided;
  if (Status leading = gemm_shaped(c, d); !leading.is_ok()) {
    if (nb == 1 && dims.lhs_contracting.size() == 1 && dims.rhs_contracting.size() == 1 && ls.rank() == 3 &&
        rs.rank() == 3 && d.shape.is_row_major()) {
      lhs_strided = strided_operand(ls.dims, dims.lhs_batch[0], dims.lhs_contracting[0], false);
      rhs_strided = strided_operand(rs.dims, dims.rhs_batch[0], dims.rhs_contracting[0], true);
    }
    if (!lhs_strided || !rhs_strided) return leading;
  }
  const bool strided = lhs_strided.has_value();
  if (!gemm_type(ls.type) || ls.type != rs.type ||
      !(d.shape.type == ls.type || (ls.type != PrimitiveType::kF32 && d.shape.type == PrimitiveType::kF32))) {
    return refuse(fmt::format("dot '{}' types {} x {} -> {} are not a cuBLASLt GEMM", d.name,
                              hlo::primitive_type_name(ls.type), hlo::primitive_type_name(rs.type),
                              hlo::primitive_type_name(d.shape.type)));
  }
  FusionPlan plan;
  plan.path = FusionPath::kCublasGemm;
  GemmCall g;
  g.type = ls.type;
  g.out_type = d.shape.type;
  g.tf32 = sched::xla_allows_tf32(d);
  g.lhs_transposed = dims.lhs_contracting[0] == nb;
  g.rhs_transposed = dims.rhs_contracting[0] == nb + 1;
  g.k = ls.dims[static_cast<size_t>(dims.lhs_contracting[0])];
  g.m = ls.dims[static_cast<size_t>(g.lhs_transposed ? nb + 1 : nb)];
  g.n = rs.dims[static_cast<size_t>(g.rhs_transposed ? nb : nb + 1)];
  for (int64_t b = 0; b < nb; ++b) g.batch *= ls.dims[static_cast<size_t>(b)];
  if (strided) {
    g.lhs_transposed = lhs_strided->transposed;
    g.rhs_transposed = rhs_strided->transposed;
    g.m = lhs_strided->free;
    g.n = rhs_strided->free;
    g.k = lhs_strided->k;
    g.batch = lhs_strided->batch;
    g.lhs_ld = lhs_strided->ld;
    g.rhs_ld = rhs_strided->ld;
    g.lhs_batch_stride = lhs_strided->batch_stride;
    g.rhs_batch_stride = rhs_strided->batch_stride;
  }
  std::vector<BufferRef> params;
  for (size_t n = 0; n < c.parameters.size(); ++n) params.push_back({BufferRef::kOperand, static_cast<int>(n)});
  const std::string base = identifier(fusion.name);
  // An operand is a parameter as it is, a parameter transposed in its two
  // minor dimensions (cuBLASLt transposes it), or computed by a prologue kernel.
  auto operand = [&](int k, bool* transposed, const char* what) -> Result<BufferRef> {
    // A power-of-two scale of a parameter (attention's 1/sqrt(d)) becomes
    // cuBLASLt's alpha: exact, as the scale commutes with every rounding.
    const std::optional<std::pair<int, double>> scaled = power_of_two_scale(c, k);
    const hlo::Instruction& o = at(c, scaled ? scaled->first : k);
    if (scaled && (o.opcode == Opcode::kParameter || o.opcode == Opcode::kTranspose)) g.alpha *= scaled->second;
    // Strided operands are read as the operand's row-major buffer: a
    // parameter so laid out, else a prologue's temporary.
    if (strided && o.opcode == Opcode::kParameter && o.shape.is_row_major()) {
      return BufferRef{BufferRef::kOperand, static_cast<int>(o.parameter_number)};
    }
    if (!strided && o.opcode == Opcode::kParameter && (o.shape.is_row_major() || minor_dims_swapped(o.shape))) {
      // Laid out [.., minor, major]: the buffer is the operand transposed.
      if (!o.shape.is_row_major()) *transposed = !*transposed;
      return BufferRef{BufferRef::kOperand, static_cast<int>(o.parameter_number)};
    }
    if (!strided && o.opcode == Opcode::kTranspose && at(c, o.operands[0]).opcode == Opcode::kParameter &&
        at(c, o.operands[0]).shape.is_row_major()) {
      bool swap = static_cast<int64_t>(o.dimensions.size()) == nb + 2;
      for (int64_t i = 0; swap && i < nb; ++i) swap = o.dimensions[static_cast<size_t>(i)] == i;
      if (swap && o.dimensions[static_cast<size_t>(nb)] == nb + 1 && o.dimensions[static_cast<size_t>(nb + 1)] == nb) {
        *transposed = !*transposed;
        return BufferRef{BufferRef::kOperand, static_cast<int>(at(c, o.operands[0]).parameter_number)};
      }
    }
    if (scaled && (o.opcode == Opcode::kParameter || o.opcode == Opcode::kTranspose)) g.alpha /= scaled->second;
    SL_ASSIGN_OR_RETURN(GeneratedKernel kernel,
                        generate_kernel(module, c,
                                        {.name = fmt::format("{}_{}", base, what),
                                         .comment = fmt::format("{}: {} of {}", fusion.name, what, d.name),
                                         .outputs = {k},
                                         .loaded = {},
                                         .outputs_are_temporaries = true}));
    FusionStep step;
    step.kernel = std::move(kernel);
    step.args = params;
    const BufferRef temp{BufferRef::kTemp, static_cast<int>(plan.temps.size())};
    step.args.push_back(temp);
    plan.temps.push_back(temp_of(c, k));
    plan.steps.push_back(std::move(step));
    return temp;
  };
  SL_ASSIGN_OR_RETURN(g.lhs, operand(d.operands[0], &g.lhs_transposed, "lhs"));
  SL_ASSIGN_OR_RETURN(g.rhs, operand(d.operands[1], &g.rhs_transposed, "rhs"));

  const std::vector<int> outputs = fusion_outputs(c);
  // What the GEMM writes: the dot, or the row-major bitcast that is its only
  // user when the dot's layout keeps [batch][n][m] (then C^T = B^T . A^T is
  // computed, which is that bitcast's row-major order).
  int view = dot;
  std::vector<int> users;
  for (size_t k = 0; k < c.instructions.size(); ++k) {
    const auto& ops = c.instructions[k].operands;
    if (std::find(ops.begin(), ops.end(), dot) != ops.end()) users.push_back(static_cast<int>(k));
  }
  // A dot laid out [batch][n][m] computes C^T = B^T . A^T, which is its
  // memory order: as the fusion's output, or as the row-major bitcast that
  // is its only user (then that bitcast is what the GEMM writes).
  const bool is_dot_output = std::find(outputs.begin(), outputs.end(), dot) != outputs.end();
  if (!d.shape.is_row_major()) {
    const hlo::Instruction* b = users.size() == 1 ? &at(c, users[0]) : nullptr;
    const bool alone = outputs.size() == 1 && outputs[0] == dot;
    const bool bitcast = !is_dot_output && b != nullptr && b->opcode == Opcode::kBitcast &&
                         b->shape.type == d.shape.type && b->shape.is_row_major();
    if (!minor_dims_swapped(d.shape) || !(alone || bitcast)) {
      return refuse(fmt::format("dot '{}' has a layout other than row-major or [batch][n][m] written as it is",
                                d.name));
    }
    if (bitcast) view = users[0];
    std::swap(g.lhs, g.rhs);
    std::swap(g.m, g.n);
    const bool lt = g.lhs_transposed;
    g.lhs_transposed = !g.rhs_transposed;
    g.rhs_transposed = !lt;
  }
  if (outputs.size() == 1 && outputs[0] == view) {
    g.out = {BufferRef::kResult, 0};
  } else {
    g.out = {BufferRef::kTemp, static_cast<int>(plan.temps.size())};
    plan.temps.push_back(temp_of(c, view));
  }
  // An f32 GEMM whose root adds a per-column f32 parameter: cuBLASLt's BIAS
  // epilogue, which is exact there (the f32 accumulator plus the bias,
  // rounded once, as the cpu backend rounds the dot and then the sum). Not
  // for bf16/f16 results, whose dot the cpu backend rounds to 16 bits first.
  if (outputs.size() == 1 && view == dot && g.batch == 1 && g.out.kind == BufferRef::kTemp &&
      d.shape.type == PrimitiveType::kF32) {
    const hlo::Instruction& r = at(c, outputs[0]);
    const int other = r.opcode != Opcode::kAdd || r.operands.size() != 2 ? -1
                      : r.operands[0] == dot ? r.operands[1]
                      : r.operands[1] == dot ? r.operands[0]
                                             : -1;
    const hlo::Instruction* b = other >= 0 ? &at(c, other) : nullptr;
    if (b != nullptr && r.shape.type == PrimitiveType::kF32 && b->opcode == Opcode::kBroadcast &&
        b->dimensions == std::vector<int64_t>{d.shape.rank() - 1} && at(c, b->operands[0]).opcode == Opcode::kParameter &&
        at(c, b->operands[0]).shape.type == PrimitiveType::kF32) {
      g.has_bias = true;
      g.bias = {BufferRef::kOperand, static_cast<int>(at(c, b->operands[0]).parameter_number)};
      g.out = {BufferRef::kResult, 0};
      plan.temps.pop_back();
    }
  }
  FusionStep gemm_step;
  gemm_step.is_gemm = true;
  gemm_step.gemm = g;
  plan.steps.push_back(gemm_step);
  if (g.out.kind == BufferRef::kTemp) {
    SL_ASSIGN_OR_RETURN(GeneratedKernel kernel,
                        generate_kernel(module, c,
                                        {.name = base + "_epilogue",
                                         .comment = fmt::format("{}: after {}", fusion.name, d.name),
                                         .outputs = outputs,
                                         .loaded = {view}}));
    FusionStep step;
    step.kernel = std::move(kernel);
    step.args = params;
    step.args.push_back(g.out);
    for (size_t o = 0; o < outputs.size(); ++o) step.args.push_back({BufferRef::kResult, static_cast<int>(o)});
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

// The op-by-op run's buffers, or the first instruction without a per-op kernel.
Status op_by_op_plan(const hlo::Module& module, const hlo::Computation& c, FusionPlan* plan) {
  const std::vector<int> outputs = fusion_outputs(c);
  const int root = root_of(c);
  plan->slots.assign(c.instructions.size(), BufferRef{BufferRef::kTemp, -1});
  for (int k : post_order(c, outputs)) {
    const hlo::Instruction& inst = at(c, k);
    if (inst.opcode == Opcode::kParameter) {
      plan->slots[static_cast<size_t>(k)] = {BufferRef::kOperand, static_cast<int>(inst.parameter_number)};
      continue;
    }
    if (k == root && inst.opcode == Opcode::kTuple) continue;
    SL_RETURN_IF_ERROR(per_op_kernel(module, c, inst));
    plan->op_order.push_back(k);
  }
  auto assign_temp = [&](int k) {
    BufferRef& slot = plan->slots[static_cast<size_t>(k)];
    if (slot.kind == BufferRef::kTemp && slot.index < 0) {
      slot = {BufferRef::kTemp, static_cast<int>(plan->temps.size())};
      plan->temps.push_back(temp_of(c, k));
    }
  };
  // Constants live in temporaries filled at setup, outputs too (then copied).
  for (int k : plan->op_order) {
    if (at(c, k).opcode == Opcode::kConstant) assign_temp(k);
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    BufferRef& slot = plan->slots[static_cast<size_t>(outputs[o])];
    if (slot.kind == BufferRef::kTemp && slot.index < 0) {
      slot = {BufferRef::kResult, static_cast<int>(o)};
    } else {
      plan->copies.push_back({static_cast<int>(o), slot});
    }
  }
  for (int k : plan->op_order) assign_temp(k);
  return ok_status();
}

}  // namespace

Status per_op_kernel(const hlo::Module& module, const hlo::Computation& c, const hlo::Instruction& inst) {
  const Opcode op = inst.opcode;
  if (!inst.shape.is_array()) return no_kernel(inst, "has a non-array result");
  if (inst.shape.rank() > 8) return no_kernel(inst, "has rank above 8");
  switch (op) {
    case Opcode::kConstant:
      return static_cast<int64_t>(inst.literal.size()) == inst.shape.element_count() || inst.literal.size() == 1
                 ? ok_status()
                 : no_kernel(inst, "is a constant without its values");
    case Opcode::kCopy:
    case Opcode::kReshape:
    case Opcode::kBitcast: {
      const hlo::Shape& in = at(c, inst.operands.at(0)).shape;
      // Buffers are in memory order: a bitcast is a copy of the bytes whatever
      // the layouts; a copy or reshape between layouts moves elements.
      if (op != Opcode::kBitcast && (!in.is_row_major() || !inst.shape.is_row_major())) {
        return no_kernel(inst, "moves elements between layouts, which no per-op kernel does");
      }
      if (in.element_count() * hlo::primitive_type_bytes(in.type) !=
          inst.shape.element_count() * hlo::primitive_type_bytes(inst.shape.type)) {
        return no_kernel(inst, "changes the byte size");
      }
      return ok_status();
    }
    default:
      break;
  }
  bool row_major = inst.shape.is_row_major();
  for (int o : inst.operands) row_major = row_major && at(c, o).shape.is_row_major();
  if (!row_major && op != Opcode::kDot) {
    return no_kernel(inst, "is laid out other than row-major, which the per-op kernels assume");
  }
  switch (op) {
    case Opcode::kBroadcast: case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: case Opcode::kConcatenate: case Opcode::kIota:
      return ok_status();
    case Opcode::kDot: {  // the backend's GEMM (cuBLASLt or its reference kernel)
      bool laid_out = inst.shape.is_row_major() || minor_dims_swapped(inst.shape);
      for (int o : inst.operands) laid_out = laid_out && (at(c, o).shape.is_row_major() || minor_dims_swapped(at(c, o).shape));
      if (!laid_out) return no_kernel(inst, "has a layout the GEMM does not read (row-major or minor dimensions swapped)");
      return gemm_shaped(c, inst);
    }
    case Opcode::kReduce: {
      if (inst.operands.size() != 2) return no_kernel(inst, "is a variadic reduce");
      if (inst.called.empty()) return no_kernel(inst, "has no to_apply");
      const hlo::Computation& r = module.computations.at(static_cast<size_t>(inst.called[0]));
      const Opcode ro = r.instructions.empty() ? Opcode::kTuple : at(r, root_of(r)).opcode;
      if (ro == Opcode::kAdd || ro == Opcode::kMultiply || ro == Opcode::kMaximum || ro == Opcode::kMinimum ||
          ro == Opcode::kAnd || ro == Opcode::kOr) {
        return ok_status();
      }
      return no_kernel(inst, fmt::format("reduces with '{}', which the per-op reduce kernel does not", r.name));
    }
    default:
      break;
  }
  if (per_op_elementwise(op)) return ok_status();
  return no_kernel(inst, "has no per-op kernel in the cuda backend");
}

FusionPlan plan_fusion(const hlo::Module& module, const hlo::Instruction& fusion) {
  FusionPlan none;
  if (fusion.opcode != Opcode::kFusion || fusion.called.empty()) {
    none.why = fmt::format("fusion '{}': not a fusion with calls=", fusion.name);
    return none;
  }
  const hlo::Computation& c = module.computations.at(static_cast<size_t>(fusion.called[0]));
  if (c.instructions.empty()) {
    none.why = fmt::format("fusion '{}': empty computation", fusion.name);
    return none;
  }
  std::string why;
  if (is_gemm_fusion(fusion)) {
    auto plan = gemm_plan(module, fusion, c);
    if (plan.is_ok()) return std::move(plan).value();
    why = fmt::format("{} fusion: {}", backend_kind(fusion), plan.status().message());
  } else if (generates(fusion)) {
    auto plan = generated_plan(module, fusion, c);
    if (plan.is_ok()) return std::move(plan).value();
    why = plan.status().message();
  } else {
    const std::string kind = backend_kind(fusion);
    why = fmt::format("kind {}{} has no generated kernel", fusion.fusion_kind, kind.empty() ? "" : " " + kind);
  }
  FusionPlan op_by_op;
  op_by_op.path = FusionPath::kOpByOp;
  op_by_op.why = fmt::format("fusion '{}': {}", fusion.name, why);
  Status s = op_by_op_plan(module, c, &op_by_op);
  if (s.is_ok()) return op_by_op;
  none.why = fmt::format("fusion '{}': {}; op by op: {}", fusion.name, why, s.message());
  return none;
}

}  // namespace sl::exec::codegen
