// kKernel and kGemm thunks: one instruction's elementwise / data / reduce
// kernel, or its GEMM, on the thunk's stream.
#include <fmt/format.h>

#include <algorithm>

#include "core/exec/cuda/cuda_check.h"
#include "core/exec/cuda/device_context.h"
#include "core/exec/cuda/generated_fusions.h"
#include "core/exec/cuda/kernels.h"
#include "core/sched/collective_overlap.h"
#include "core/sched/dot_precision.h"

// kernels.cu numbers element types as hlo::PrimitiveType numbers its first nine.
static_assert(static_cast<int>(sl::hlo::PrimitiveType::kPred) == 0 &&
              static_cast<int>(sl::hlo::PrimitiveType::kF64) == 8);

namespace sl::exec::cuda {

using hlo::Opcode;
using hlo::PrimitiveType;

std::string where(const sched::Thunk& thunk, const DeviceContext& ctx) {
  return fmt::format("instruction '{}' on device {}", thunk.instruction ? thunk.instruction->name : "?",
                     ctx.program ? ctx.program->device : ctx.ordinal);
}

namespace {

const hlo::Shape& operand_shape(const sched::Thunk& t, size_t k) {
  return t.computation->instructions[static_cast<size_t>(t.instruction->operands[k])].shape;
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * dims[d + 1];
  return s;
}

// A contiguous row-major view of `dims`.
Result<View> dense_view(const std::vector<int64_t>& dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) return runtime_error(fmt::format("rank {} > {}", dims.size(), kMaxRank));
  View v;
  v.rank = static_cast<int>(dims.size());
  auto s = row_major_strides(dims);
  for (int d = 0; d < v.rank; ++d) {
    v.dims[d] = dims[d];
    v.strides[d] = s[d];
  }
  return v;
}

int type_of(const hlo::Shape& s) { return static_cast<int>(s.type); }

Status launched(int err, const char* what, const std::string& at) {
  return cuda_status(static_cast<cudaError_t>(err), what, at);
}

Result<EwOp> elementwise_op(Opcode op) {
  switch (op) {
    case Opcode::kAdd: return EwOp::kAdd;
    case Opcode::kSubtract: return EwOp::kSubtract;
    case Opcode::kMultiply: return EwOp::kMultiply;
    case Opcode::kDivide: return EwOp::kDivide;
    case Opcode::kMaximum: return EwOp::kMaximum;
    case Opcode::kMinimum: return EwOp::kMinimum;
    case Opcode::kRemainder: return EwOp::kRemainder;
    case Opcode::kAnd: return EwOp::kAnd;
    case Opcode::kOr: return EwOp::kOr;
    case Opcode::kNegate: return EwOp::kNegate;
    case Opcode::kAbs: return EwOp::kAbs;
    case Opcode::kExp: return EwOp::kExp;
    case Opcode::kConvert: return EwOp::kConvert;
    case Opcode::kCompare: return EwOp::kCompare;
    case Opcode::kSelect: return EwOp::kSelect;
    default: return runtime_error("not an elementwise op");
  }
}

// The reduction of a to_apply computation whose ROOT is one binary op.
Result<ReduceOp> reduce_op_of(const hlo::Module& module, const hlo::Instruction& inst) {
  if (inst.called.empty()) return runtime_error("reduce without to_apply");
  const hlo::Computation& c = module.computations.at(static_cast<size_t>(inst.called[0]));
  const hlo::Instruction& root = c.instructions.at(static_cast<size_t>(c.root >= 0 ? c.root : c.instructions.size() - 1));
  switch (root.opcode) {
    case Opcode::kAdd: return ReduceOp::kAdd;
    case Opcode::kMultiply: return ReduceOp::kMultiply;
    case Opcode::kMaximum: return ReduceOp::kMaximum;
    case Opcode::kMinimum: return ReduceOp::kMinimum;
    case Opcode::kAnd: return ReduceOp::kAnd;
    case Opcode::kOr: return ReduceOp::kOr;
    default:
      return runtime_error(fmt::format("reduce computation '{}' is not add/multiply/max/min/and/or", c.name));
  }
}

// Laid out with its two minor dimensions swapped ({0,1}, {1,2,0} ...).
bool minor_dims_swapped(const hlo::Shape& s) {
  const int64_t r = s.rank();
  if (!s.is_array() || r < 2 || s.minor_to_major.size() != static_cast<size_t>(r)) return false;
  if (s.minor_to_major[0] != r - 2 || s.minor_to_major[1] != r - 1) return false;
  for (int64_t i = 2; i < r; ++i) {
    if (s.minor_to_major[static_cast<size_t>(i)] != r - 1 - i) return false;
  }
  return true;
}

}  // namespace

Status issue_kernel(const sched::Thunk& t, DeviceContext& ctx) {
  const hlo::Instruction& inst = *t.instruction;
  const std::string at = where(t, ctx);
  cudaStream_t stream = ctx.stream(t.stream);
  void* s = stream;
  auto need = [&](size_t operands, size_t results) -> Status {
    if (t.operands.size() < operands || t.results.size() < results || inst.operands.size() < operands) {
      return runtime_error(fmt::format("{}: {} operand / {} result buffers, expected {} / {}", at, t.operands.size(),
                                       t.results.size(), operands, results));
    }
    return ok_status();
  };
  const Opcode op = inst.async_wrapped ? *inst.async_wrapped : inst.opcode;
  DynamicStarts none;
  if (op == Opcode::kFusion && ctx.fusions != nullptr) return ctx.fusions->launch(t, ctx);

  switch (op) {
    case Opcode::kCopy:
    case Opcode::kReshape:
    case Opcode::kBitcast: {
      SL_RETURN_IF_ERROR(need(1, 1));
      if (t.operands[0].offset == t.results[0].offset) return ok_status();
      SL_CUDA(cudaMemcpyAsync(ctx.at(t.results[0]), ctx.at(t.operands[0]),
                              static_cast<size_t>(std::min(t.operands[0].size, t.results[0].size)),
                              cudaMemcpyDeviceToDevice, stream),
              at);
      return ok_status();
    }
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice: {
      SL_RETURN_IF_ERROR(need(1, 1));
      const hlo::Shape& in = operand_shape(t, 0);
      SL_ASSIGN_OR_RETURN(View dst, dense_view(inst.shape.dims));
      View src = dst;
      auto in_strides = row_major_strides(in.dims);
      DynamicStarts dyn;
      for (int d = 0; d < src.rank; ++d) src.strides[d] = 0;
      if (op == Opcode::kBroadcast) {
        for (size_t i = 0; i < inst.dimensions.size(); ++i) src.strides[inst.dimensions[i]] = in_strides[i];
      } else if (op == Opcode::kTranspose) {
        for (int d = 0; d < src.rank; ++d) src.strides[d] = in_strides[static_cast<size_t>(inst.dimensions[d])];
      } else if (op == Opcode::kSlice) {
        for (int d = 0; d < src.rank; ++d) {
          const hlo::SliceDim& sd = inst.slice.at(static_cast<size_t>(d));
          src.strides[d] = in_strides[d] * sd.stride;
          src.offset += sd.start * in_strides[d];
        }
      } else {  // dynamic-slice: operand, then one scalar start per dimension
        SL_RETURN_IF_ERROR(need(1 + static_cast<size_t>(src.rank), 1));
        dyn.count = src.rank;
        for (int d = 0; d < src.rank; ++d) {
          src.strides[d] = in_strides[d];
          dyn.index[d] = ctx.at(t.operands[1 + d]);
          dyn.index_type[d] = type_of(operand_shape(t, 1 + d));
          dyn.limit[d] = in.dims[d] - inst.shape.dims[d];
        }
      }
      return launched(launch_strided_copy(ctx.at(t.results[0]), type_of(inst.shape), dst, ctx.at(t.operands[0]),
                                          type_of(in), src, dyn, s),
                      "strided_copy_kernel", at);
    }
    case Opcode::kDynamicUpdateSlice: {
      SL_RETURN_IF_ERROR(need(2, 1));
      const hlo::Shape& update = operand_shape(t, 1);
      const int rank = static_cast<int>(inst.shape.dims.size());
      SL_RETURN_IF_ERROR(need(2 + static_cast<size_t>(rank), 1));
      if (t.operands[0].offset != t.results[0].offset) {
        SL_CUDA(cudaMemcpyAsync(ctx.at(t.results[0]), ctx.at(t.operands[0]), static_cast<size_t>(t.results[0].size),
                                cudaMemcpyDeviceToDevice, stream),
                at);
      }
      SL_ASSIGN_OR_RETURN(View src, dense_view(update.dims));
      View dst = src;
      auto out_strides = row_major_strides(inst.shape.dims);
      DynamicStarts dyn;
      dyn.count = rank;
      dyn.apply_to_dst = true;
      for (int d = 0; d < rank; ++d) {
        dst.strides[d] = out_strides[d];
        dyn.index[d] = ctx.at(t.operands[2 + d]);
        dyn.index_type[d] = type_of(operand_shape(t, 2 + d));
        dyn.limit[d] = inst.shape.dims[d] - update.dims[d];
      }
      return launched(launch_strided_copy(ctx.at(t.results[0]), type_of(inst.shape), dst, ctx.at(t.operands[1]),
                                          type_of(update), src, dyn, s),
                      "strided_copy_kernel", at);
    }
    case Opcode::kConcatenate: {
      SL_RETURN_IF_ERROR(need(inst.operands.size(), 1));
      const int64_t dim = inst.dimensions.at(0);
      auto out_strides = row_major_strides(inst.shape.dims);
      int64_t offset = 0;
      for (size_t k = 0; k < inst.operands.size(); ++k) {
        const hlo::Shape& in = operand_shape(t, k);
        SL_ASSIGN_OR_RETURN(View src, dense_view(in.dims));
        View dst = src;
        for (int d = 0; d < dst.rank; ++d) dst.strides[d] = out_strides[d];
        dst.offset = offset * out_strides[static_cast<size_t>(dim)];
        offset += in.dims[static_cast<size_t>(dim)];
        SL_RETURN_IF_ERROR(launched(launch_strided_copy(ctx.at(t.results[0]), type_of(inst.shape), dst,
                                                        ctx.at(t.operands[k]), type_of(in), src, none, s),
                                    "strided_copy_kernel", at));
      }
      return ok_status();
    }
    case Opcode::kIota: {
      SL_RETURN_IF_ERROR(need(0, 1));
      SL_ASSIGN_OR_RETURN(View shape, dense_view(inst.shape.dims));
      return launched(launch_iota(ctx.at(t.results[0]), type_of(inst.shape), shape,
                                  static_cast<int>(inst.iota_dimension), s),
                      "iota_kernel", at);
    }
    case Opcode::kReplicaId:
    case Opcode::kPartitionId: {
      SL_RETURN_IF_ERROR(need(0, 1));
      double v = static_cast<double>(op == Opcode::kReplicaId ? ctx.program->replica : ctx.program->partition);
      return launched(launch_fill(ctx.at(t.results[0]), type_of(inst.shape), 1, v, s), "fill_kernel", at);
    }
    case Opcode::kReduce: {
      if (inst.operands.size() != 2) {
        return runtime_error(fmt::format("{}: variadic reduce is not supported by the cuda backend", at));
      }
      SL_RETURN_IF_ERROR(need(2, 1));
      const hlo::Shape& in = operand_shape(t, 0);
      SL_ASSIGN_OR_RETURN(View shape, dense_view(in.dims));
      uint32_t mask = 0;
      for (int64_t d : inst.dimensions) mask |= 1u << d;
      SL_ASSIGN_OR_RETURN(ReduceOp rop, reduce_op_of(*ctx.module, inst));
      return launched(launch_reduce(ctx.at(t.results[0]), ctx.at(t.operands[0]), ctx.at(t.operands[1]), type_of(in),
                                    shape, mask, rop, s),
                      "reduce_kernel", at);
    }
    default:
      break;
  }
  if (hlo::is_elementwise(op) || op == Opcode::kConvert || op == Opcode::kCompare || op == Opcode::kSelect) {
    SL_ASSIGN_OR_RETURN(EwOp ew, elementwise_op(op));
    const size_t arity = inst.operands.size();
    SL_RETURN_IF_ERROR(need(arity, 1));
    const hlo::Shape& first = operand_shape(t, op == Opcode::kSelect ? 1 : 0);
    const void* ptr[3] = {nullptr, nullptr, nullptr};
    int64_t count[3] = {0, 0, 0};
    for (size_t k = 0; k < arity && k < 3; ++k) {
      ptr[k] = ctx.at(t.operands[k]);
      count[k] = operand_shape(t, k).element_count();
    }
    int direction = inst.comparison_direction ? static_cast<int>(*inst.comparison_direction) : 0;
    return launched(launch_elementwise(ew, type_of(first), type_of(inst.shape), ctx.at(t.results[0]),
                                       inst.shape.element_count(), ptr[0], count[0], ptr[1], count[1], ptr[2],
                                       count[2], direction, inst.comparison_type == "TOTALORDER", s),
                    "elementwise_kernel", at);
  }
  return runtime_error(fmt::format("{}: {} is not supported by the cuda backend", at, hlo::opcode_name(op)));
}

}  // namespace sl::exec::cuda

namespace sl::exec::cuda {

// Row-major GEMM: lhs [batch..., m, k] (or [.., k, m]: transposed), rhs
// [batch..., k, n] (or [.., n, k]), out [batch..., m, n].
Status issue_gemm(const sched::Thunk& t, DeviceContext& ctx) {
  const std::string at = where(t, ctx);
  if (t.operands.size() < 2 || t.results.empty()) {
    return runtime_error(fmt::format("{}: GEMM needs 2 operand and 1 result buffers", at));
  }
  const hlo::Instruction& inst = *t.instruction;
  GemmProblem p;
  p.type = static_cast<int>(t.gemm.type);
  p.m = t.gemm.m;
  p.n = t.gemm.n;
  p.k = t.gemm.k;
  p.batch = t.gemm.batch;
  p.allow_tf32 = ctx.allow_tf32 || (!ctx.exact_f32_gemms && sched::xla_allows_tf32(inst));
  p.sm_count_target = static_cast<int>(sched::gemm_sm_limit(t, ctx.sm_count, ctx.comm_sms));
  const Opcode op = inst.async_wrapped.value_or(inst.opcode);
  // A cuBLAS custom-call's dot dimensions come from its backend_config (the
  // parser reads them into inst.dot), as do alpha, beta and the epilogue.
  if ((op == Opcode::kDot || op == Opcode::kCustomCall) && inst.operands.size() >= 2) {
    const hlo::Shape& lhs = operand_shape(t, 0);
    const hlo::Shape& rhs = operand_shape(t, 1);
    const size_t nb = inst.dot.lhs_batch.size();
    if (lhs.dims.size() == nb + 2 && inst.dot.lhs_contracting.size() == 1) {
      p.lhs_transposed = inst.dot.lhs_contracting[0] == static_cast<int64_t>(nb);
    }
    if (rhs.dims.size() == nb + 2 && inst.dot.rhs_contracting.size() == 1) {
      p.rhs_transposed = inst.dot.rhs_contracting[0] == static_cast<int64_t>(nb + 1);
    }
  }
  // Buffers are in their layouts' memory order: an operand laid out
  // [.., minor, major] is stored transposed, and a result laid out so is C^T,
  // computed as B^T . A^T.
  bool swap_operands = false;
  if ((op == Opcode::kDot || op == Opcode::kCustomCall) && inst.operands.size() >= 2) {
    if (minor_dims_swapped(operand_shape(t, 0))) p.lhs_transposed = !p.lhs_transposed;
    if (minor_dims_swapped(operand_shape(t, 1))) p.rhs_transposed = !p.rhs_transposed;
    const hlo::Shape& out = inst.shape.is_tuple() && !inst.shape.elements.empty() ? inst.shape.elements[0] : inst.shape;
    if (minor_dims_swapped(out)) {
      swap_operands = true;
      std::swap(p.m, p.n);
      const bool lt = p.lhs_transposed;
      p.lhs_transposed = !p.rhs_transposed;
      p.rhs_transposed = !lt;
    }
  }
  size_t next_operand = 2;
  const void* c_in = nullptr;
  const void* bias = nullptr;
  if (op == Opcode::kCustomCall && inst.gemm_config) {
    const hlo::GemmConfig& g = *inst.gemm_config;
    if (g.alpha_imag != 0.0) return runtime_error(fmt::format("{}: complex alpha is not supported", at));
    static const std::pair<const char*, GemmEpilogue> kEpilogues[] = {
        {"DEFAULT", GemmEpilogue::kDefault}, {"RELU", GemmEpilogue::kRelu}, {"BIAS", GemmEpilogue::kBias},
        {"BIAS_RELU", GemmEpilogue::kBiasRelu}, {"GELU", GemmEpilogue::kGelu}, {"BIAS_GELU", GemmEpilogue::kBiasGelu}};
    bool known = false;
    for (const auto& [name, e] : kEpilogues) {
      if (g.epilogue == name) {
        p.epilogue = e;
        known = true;
      }
    }
    if (!known) return runtime_error(fmt::format("{}: GEMM epilogue {} is not supported by the cuda backend", at, g.epilogue));
    p.alpha = static_cast<float>(g.alpha_real);
    p.beta = static_cast<float>(g.beta);
    // Operands as XLA's GEMM rewriter orders them: a, b, c (beta != 0), bias.
    if (p.beta != 0.0f) {
      if (t.operands.size() <= next_operand) return runtime_error(fmt::format("{}: beta != 0 without a C operand", at));
      c_in = ctx.at(t.operands[next_operand++]);
    }
    if (has_bias(p.epilogue)) {
      if (t.operands.size() <= next_operand) return runtime_error(fmt::format("{}: {} without a bias operand", at, g.epilogue));
      if (swap_operands) {
        return runtime_error(fmt::format("{}: {} with a column-major result is not supported", at, g.epilogue));
      }
      bias = ctx.at(t.operands[next_operand++]);
    }
  }
  if (inst.shape.is_array()) p.out_type = static_cast<int>(inst.shape.type);
  cudaStream_t stream = ctx.stream(t.stream);
  if (gemm_lt_supports(p.type, p.out_type)) {
    void* ws = ctx.at(t.workspace);
    size_t ws_bytes = static_cast<size_t>(std::max<int64_t>(t.workspace.size, 0));
    if (ws == nullptr || ws_bytes == 0) {
      ws = ctx.fallback_workspace;
      ws_bytes = ctx.fallback_workspace_bytes;
    }
    const size_t a = swap_operands ? 1 : 0;
    return ctx.gemm->run(p, ctx.at(t.operands[a]), ctx.at(t.operands[1 - a]), ctx.at(t.results[0]), ws, ws_bytes,
                         stream, at, c_in, bias);
  }
  if (p.alpha != 1.0f || p.beta != 0.0f || p.epilogue != GemmEpilogue::kDefault) {
    return runtime_error(fmt::format("{}: alpha, beta and epilogues need cuBLASLt, which does not run {} GEMMs", at,
                                     hlo::primitive_type_name(t.gemm.type)));
  }
  if (swap_operands) {
    return runtime_error(fmt::format("{}: a {} GEMM laid out other than row-major needs cuBLASLt", at,
                                     hlo::primitive_type_name(t.gemm.type)));
  }
  GemmOperand a, b;
  a.batch_stride = p.m * p.k;
  a.row_stride = p.lhs_transposed ? 1 : p.k;
  a.col_stride = p.lhs_transposed ? p.m : 1;
  b.batch_stride = p.k * p.n;
  b.row_stride = p.rhs_transposed ? 1 : p.n;
  b.col_stride = p.rhs_transposed ? p.k : 1;
  const int out_type = inst.shape.is_array() ? static_cast<int>(inst.shape.type) : p.type;
  if (out_type != p.type) {
    return runtime_error(fmt::format("{}: GEMM with output type different from its operands", at));
  }
  return launched(launch_naive_gemm(p.type, ctx.at(t.results[0]), ctx.at(t.operands[0]), ctx.at(t.operands[1]),
                                    p.batch, p.m, p.n, p.k, a, b, stream),
                  "naive_gemm_kernel", at);
}

}  // namespace sl::exec::cuda
