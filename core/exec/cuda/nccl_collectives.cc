#include "core/exec/cuda/nccl_collectives.h"

#include <fmt/format.h>

#include <vector>

#include "core/exec/cuda/cuda_check.h"
#include "core/exec/cuda/kernels.h"

namespace sl::exec::cuda {

using hlo::Opcode;
using hlo::PrimitiveType;

namespace {

Result<ncclDataType_t> nccl_type(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: return ncclUint8;
    case PrimitiveType::kS8: return ncclInt8;
    case PrimitiveType::kS32: return ncclInt32;
    case PrimitiveType::kU32: return ncclUint32;
    case PrimitiveType::kS64: return ncclInt64;
    case PrimitiveType::kF16: return ncclFloat16;
    case PrimitiveType::kBF16: return ncclBfloat16;
    case PrimitiveType::kF32: return ncclFloat32;
    case PrimitiveType::kF64: return ncclFloat64;
    default: return runtime_error("no NCCL type");
  }
}

Result<ncclRedOp_t> nccl_op(const hlo::Module& module, const hlo::Instruction& inst) {
  if (inst.called.empty()) return runtime_error("reduction without to_apply");
  const hlo::Computation& c = module.computations.at(static_cast<size_t>(inst.called[0]));
  const hlo::Instruction& root =
      c.instructions.at(static_cast<size_t>(c.root >= 0 ? c.root : static_cast<int>(c.instructions.size()) - 1));
  switch (root.opcode) {
    case Opcode::kAdd: return ncclSum;
    case Opcode::kMultiply: return ncclProd;
    case Opcode::kMaximum: case Opcode::kOr: return ncclMax;
    case Opcode::kMinimum: case Opcode::kAnd: return ncclMin;
    default: return runtime_error(fmt::format("to_apply '{}' is not add/multiply/max/min", c.name));
  }
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * dims[d + 1];
  return s;
}

// Index space [G, dims...] over a buffer whose dimension `dim` holds the G
// chunks side by side (the XLA layout of an all-gather output / reduce-scatter
// input), or over a contiguous [G, dims...] staging buffer.
View chunked_view(const std::vector<int64_t>& chunk_dims, int64_t groups, int64_t dim, bool staged) {
  View v;
  v.rank = static_cast<int>(chunk_dims.size()) + 1;
  v.dims[0] = groups;
  for (size_t d = 0; d < chunk_dims.size(); ++d) v.dims[d + 1] = chunk_dims[d];
  if (staged) {
    std::vector<int64_t> all(chunk_dims);
    all.insert(all.begin(), groups);
    auto s = strides_of(all);
    for (int d = 0; d < v.rank; ++d) v.strides[d] = s[static_cast<size_t>(d)];
  } else {
    std::vector<int64_t> full(chunk_dims);
    full[static_cast<size_t>(dim)] *= groups;
    auto s = strides_of(full);
    v.strides[0] = chunk_dims[static_cast<size_t>(dim)] * s[static_cast<size_t>(dim)];
    for (size_t d = 0; d < chunk_dims.size(); ++d) v.strides[d + 1] = s[d];
  }
  return v;
}

bool outer_dims_are_one(const std::vector<int64_t>& dims, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d) {
    if (dims[static_cast<size_t>(d)] != 1) return false;
  }
  return true;
}

}  // namespace

Status issue_collective(const sched::Thunk& t, DeviceContext& ctx) {
  const std::string at = where(t, ctx);
  const hlo::Instruction& inst = *t.instruction;
  const sched::CollectiveInfo& info = t.collective;
  const Opcode op = info.op;
  cudaStream_t stream = ctx.stream(t.stream);
  const int64_t device = ctx.program->device;
  const int64_t groups = static_cast<int64_t>(info.group.size());

  // Operand leaves with their shapes (the start's operands for sugared forms).
  std::vector<const hlo::Shape*> in_shapes;
  for (int o : inst.operands) {
    for (const hlo::Shape* leaf : t.computation->instructions[static_cast<size_t>(o)].shape.leaves()) {
      in_shapes.push_back(leaf);
    }
  }
  if (t.operands.size() < in_shapes.size() || t.results.size() < in_shapes.size()) {
    return runtime_error(fmt::format("{}: {} operand and {} result buffers for {} operands", at, t.operands.size(),
                                     t.results.size(), in_shapes.size()));
  }

  ncclComm_t comm = nullptr;
  std::vector<int64_t> world;
  if (op == Opcode::kCollectivePermute) {
    for (int64_t d = 0; d < static_cast<int64_t>(ctx.world_size); ++d) world.push_back(d);
    comm = ctx.comms->get(world, device);
  } else {
    comm = ctx.comms->get(info.group, device);
  }
  if (comm == nullptr) return runtime_error(fmt::format("{}: no NCCL communicator for its group", at));

  const int64_t dim = inst.dimensions.empty() ? 0 : inst.dimensions[0];
  ncclRedOp_t red = ncclSum;
  if (op == Opcode::kAllReduce || op == Opcode::kReduceScatter) {
    auto r = nccl_op(*ctx.module, inst);
    if (!r.is_ok()) return runtime_error(fmt::format("{}: {}", at, r.status().message()));
    red = *r;
  }

  // Staging buffers for a gather/scatter dimension that is not outermost:
  // NCCL concatenates rank chunks contiguously.
  struct Staged { size_t leaf; void* buffer; };
  std::vector<Staged> staged;
  DynamicStarts none;
  for (size_t i = 0; i < in_shapes.size(); ++i) {
    const hlo::Shape& s = *in_shapes[i];
    if ((op != Opcode::kAllGather && op != Opcode::kReduceScatter) || outer_dims_are_one(s.dims, dim)) continue;
    void* buf = nullptr;
    const size_t bytes = static_cast<size_t>(op == Opcode::kAllGather ? t.results[i].size : t.operands[i].size);
    SL_CUDA(cudaMallocAsync(&buf, bytes, stream), at);
    staged.push_back({i, buf});
    if (op == Opcode::kReduceScatter) {  // input [.., G*c, ..] -> staging [G, .., c, ..]
      std::vector<int64_t> chunk = s.dims;
      chunk[static_cast<size_t>(dim)] /= groups;
      View src = chunked_view(chunk, groups, dim, false);
      View dst = chunked_view(chunk, groups, dim, true);
      SL_RETURN_IF_ERROR(cuda_status(static_cast<cudaError_t>(launch_strided_copy(
                                         buf, static_cast<int>(s.type), dst, ctx.at(t.operands[i]),
                                         static_cast<int>(s.type), src, none, stream)),
                                     "strided_copy_kernel", at));
    }
  }
  auto staging_of = [&](size_t leaf) -> void* {
    for (const Staged& st : staged) if (st.leaf == leaf) return st.buffer;
    return nullptr;
  };

  // Element types first: an unsupported one fails before NCCL is called.
  std::vector<ncclDataType_t> types;
  for (const hlo::Shape* s : in_shapes) {
    auto type = nccl_type(s->type);
    if (!type.is_ok()) {
      return runtime_error(fmt::format("{}: element type {} has no NCCL type", at, hlo::primitive_type_name(s->type)));
    }
    types.push_back(*type);
  }
  auto failed = [](const NcclResult& r) { return r.result != ncclSuccess; };
  auto enqueue = [&]() -> NcclResult {
    if (NcclResult r{ncclGroupStart(), "ncclGroupStart"}; failed(r)) return r;
    for (size_t i = 0; i < in_shapes.size(); ++i) {
      const size_t count = static_cast<size_t>(in_shapes[i]->element_count());
      void* in = ctx.at(t.operands[i]);
      void* out = ctx.at(t.results[i]);
      NcclResult r;
      switch (op) {
        case Opcode::kAllGather:
          r = {ncclAllGather(in, staging_of(i) ? staging_of(i) : out, count, types[i], comm, stream), "ncclAllGather"};
          break;
        case Opcode::kReduceScatter:
          r = {ncclReduceScatter(staging_of(i) ? staging_of(i) : in, out, count / static_cast<size_t>(groups), types[i],
                                 red, comm, stream),
               "ncclReduceScatter"};
          break;
        case Opcode::kAllReduce:
          r = {ncclAllReduce(in, out, count, types[i], red, comm, stream), "ncclAllReduce"};
          break;
        case Opcode::kCollectivePermute:
          if (info.send_to >= 0) r = {ncclSend(in, count, types[i], static_cast<int>(info.send_to), comm, stream), "ncclSend"};
          if (!failed(r) && info.recv_from >= 0) {
            r = {ncclRecv(out, count, types[i], static_cast<int>(info.recv_from), comm, stream), "ncclRecv"};
          }
          break;
        default:
          r = {ncclInvalidUsage, "nccl collective"};
      }
      if (failed(r)) {
        (void)ncclGroupEnd();
        return r;
      }
    }
    return {ncclGroupEnd(), "ncclGroupEnd"};
  };
  SL_RETURN_IF_ERROR(ctx.comms->call(comm, enqueue, at));

  if (op == Opcode::kCollectivePermute && info.recv_from < 0) {
    for (size_t i = 0; i < in_shapes.size(); ++i) {
      SL_CUDA(cudaMemsetAsync(ctx.at(t.results[i]), 0, static_cast<size_t>(t.results[i].size), stream), at);
    }
  }
  for (const Staged& st : staged) {
    const hlo::Shape& s = *in_shapes[st.leaf];
    if (op == Opcode::kAllGather) {  // staging [G, ..] -> output [.., G*c, ..]
      View src = chunked_view(s.dims, groups, dim, true);
      View dst = chunked_view(s.dims, groups, dim, false);
      SL_RETURN_IF_ERROR(cuda_status(static_cast<cudaError_t>(launch_strided_copy(
                                         ctx.at(t.results[st.leaf]), static_cast<int>(s.type), dst, st.buffer,
                                         static_cast<int>(s.type), src, none, stream)),
                                     "strided_copy_kernel", at));
    }
    SL_CUDA(cudaFreeAsync(st.buffer, stream), at);
  }
  return ok_status();
}

}  // namespace sl::exec::cuda
