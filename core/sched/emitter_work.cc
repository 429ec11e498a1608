// Work thunks (kernels, GEMMs, collectives) and the logical buffers they
// read and write.

#include "core/sched/emitter.h"

#include <fmt/format.h>

#include "core/sched/gemm.h"

namespace sl::sched::detail {

using hlo::Opcode;

Leaves Emitter::emit_work(const hlo::Computation& computation, const hlo::Instruction& instruction, Opcode op,
                          const hlo::Shape& result_shape, int stream, const std::string* attribution,
                          const std::vector<Leaves>& env) {
  const int64_t position = static_cast<int64_t>(out_.thunks.size());
  Thunk thunk;
  ThunkBuffers buffers;
  buffers.first = static_cast<uint32_t>(out_.buffer_ids.size());
  thunk.stream = stream;
  thunk.computation = &computation;
  thunk.instruction = &instruction;
  thunk.attributed_name = attribution ? *attribution : instruction.name;
  thunk.occurrence = occurrences_[{attribution, &instruction}]++;

  // A slice (static or dynamic) reads only the window it returns, not its
  // whole first operand: it counts as the result's bytes.
  const bool reads_its_window = op == Opcode::kSlice || op == Opcode::kDynamicSlice;
  int64_t bytes_in = 0;
  for (size_t k = 0; k < instruction.operands.size(); ++k) {
    for (int32_t id : env[static_cast<size_t>(instruction.operands[k])]) {
      out_.buffer_ids.push_back(id);
      ++buffers.operands;
      if (id < 0) continue;
      if (!(reads_its_window && k == 0)) bytes_in += out_.buffers[static_cast<size_t>(id)].slice.size;
      touch(id, position);
    }
  }
  const bool gemm = is_gemm(instruction);
  const int workspace_leaf = gemm ? gemm_workspace_leaf(instruction, result_shape) : -1;
  // A library-calling fusion's workspace stays a result (its users may take
  // it out of the tuple) but is scratch, not bytes written.
  const hlo::Instruction* library_call =
      op == Opcode::kFusion ? library_call_in_fusion(module_, instruction) : nullptr;
  const int fusion_workspace =
      library_call ? fusion_workspace_leaf(module_.computations[static_cast<size_t>(instruction.called[0])])
                   : -1;
  Leaves result = new_leaves(result_shape, &instruction, position, /*whole_program=*/false);
  int64_t bytes_out = 0;
  for (size_t k = 0; k < result.size(); ++k) {
    const int32_t id = result[k];
    if (static_cast<int>(k) == workspace_leaf) {
      buffers.workspace = id;
      continue;
    }
    out_.buffer_ids.push_back(id);
    ++buffers.results;
    if (id < 0 || static_cast<int>(k) == fusion_workspace) continue;
    bytes_out += out_.buffers[static_cast<size_t>(id)].slice.size;
  }

  if (gemm) {
    thunk.kind = ThunkKind::kGemm;
    thunk.gemm = gemm_dims(computation, instruction);
    thunk.flops = 2 * thunk.gemm.m * thunk.gemm.n * thunk.gemm.k * thunk.gemm.batch;
    if (workspace_leaf < 0) {
      buffers.workspace = new_buffer(kDefaultGemmWorkspaceBytes, &instruction, -1, position);
      touch(buffers.workspace, position);
    }
  } else if (hlo::is_collective(op)) {
    thunk.kind = ThunkKind::kCollective;
    thunk.collective.op = op;
    thunk.collective.bytes_in = bytes_in;
    thunk.collective.bytes_out = bytes_out;
    thunk.collective.rendezvous_id = next_rendezvous_++;
  } else {
    thunk.kind = ThunkKind::kKernel;
    thunk.fusion_calls_library = library_call != nullptr;
    if (hlo::is_elementwise(op)) {
      thunk.flops = result_shape.element_count();
    } else if (op == Opcode::kReduce && !instruction.operands.empty()) {
      thunk.flops = computation.instructions[static_cast<size_t>(instruction.operands[0])].shape.element_count();
    }
  }
  thunk.bytes_accessed = bytes_in + (reads_its_window ? 2 * bytes_out : bytes_out);
  out_.thunks.push_back(std::move(thunk));
  out_.buffers_of.push_back(buffers);
  return result;
}

int32_t Emitter::new_buffer(int64_t size, const hlo::Instruction* instruction, int32_t leaf_index,
                            int64_t position) {
  LogicalBuffer buffer;
  buffer.slice.size = size;
  buffer.start = position;
  buffer.end = position;
  buffer.instruction = instruction;
  buffer.leaf = leaf_index;
  out_.buffers.push_back(buffer);
  return static_cast<int32_t>(out_.buffers.size()) - 1;
}

Leaves Emitter::new_leaves(const hlo::Shape& shape, const hlo::Instruction* instruction, int64_t position,
                           bool whole_program) {
  Leaves leaves;
  int32_t k = 0;
  for (const hlo::Shape* leaf : shape.leaves()) {
    const int64_t size = leaf->is_array() ? leaf->byte_size() : 0;
    if (size <= 0) {
      leaves.push_back(-1);
    } else {
      const int32_t id = new_buffer(size, instruction, k, position);
      if (whole_program) {
        whole_program_.push_back(id);
      } else {
        touch(id, position);
      }
      leaves.push_back(id);
    }
    ++k;
  }
  return leaves;
}

void Emitter::touch(int32_t buffer, int64_t position) {
  LogicalBuffer& b = out_.buffers[static_cast<size_t>(buffer)];
  b.end = std::max(b.end, position);
  if (!regions_.empty()) regions_.back()->touched.push_back(buffer);
}

}  // namespace sl::sched::detail
