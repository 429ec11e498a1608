// Collectives on the CPU backend: each device contributes its operand leaves
// to the rendezvous under (instruction, occurrence), then computes its own
// result from its group's contributions.

#include <fmt/format.h>

#include <algorithm>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/collectives.h"
#include "core/exec/cpu/evaluator.h"
#include "core/hlo/replica_groups.h"

namespace sl::exec::cpu {
namespace {

using hlo::Opcode;

Status op_error(const hlo::Instruction& inst, const std::string& what) {
  return invalid_input(fmt::format("'{}' ({}): {}", inst.name, hlo::opcode_name(inst.opcode), what));
}

// collective-permute: the devices that share this device's partition
// (cross-replica) or replica (cross-partition); all of them run the permute.
std::vector<int64_t> permute_domain(hlo::GroupMode mode, int64_t device, int64_t replica_count,
                                    int64_t num_partitions) {
  const int64_t replica = device / num_partitions, partition = device % num_partitions;
  std::vector<int64_t> out;
  if (mode == hlo::GroupMode::kCrossPartition) {
    for (int64_t p = 0; p < num_partitions; ++p) out.push_back(replica * num_partitions + p);
  } else {
    for (int64_t r = 0; r < replica_count; ++r) out.push_back(r * num_partitions + partition);
  }
  return out;
}

// "{{64,32}}" -> {{64, 32}}: one list of sizes per slice.
std::vector<std::vector<int64_t>> parse_slice_sizes(const std::string& text) {
  std::vector<std::vector<int64_t>> out;
  int depth = 0;
  std::string number;
  auto flush = [&] {
    if (!number.empty() && !out.empty()) out.back().push_back(std::stoll(number));
    number.clear();
  };
  for (char c : text) {
    if (c == '{') {
      if (++depth == 2) out.emplace_back();
    } else if (c == '}') {
      flush();
      --depth;
    } else if (c == ',') {
      flush();
    } else if (c >= '0' && c <= '9') {
      number += c;
    }
  }
  return out;
}

// XLA clamps dynamic offsets so the slice stays inside the array.
std::vector<int64_t> clamped(const std::vector<const Literal*>& offsets, const std::vector<int64_t>& dims,
                             const std::vector<int64_t>& sizes) {
  std::vector<int64_t> out(dims.size(), 0);
  for (size_t d = 0; d < dims.size() && d < offsets.size(); ++d) {
    const int64_t v = offsets[d]->values.empty() ? 0 : static_cast<int64_t>(offsets[d]->values[0]);
    out[d] = std::clamp<int64_t>(v, 0, std::max<int64_t>(0, dims[d] - sizes[d]));
  }
  return out;
}

// Copies the `sizes` box at `from_at` of `from` to `to_at` of `to`.
void copy_box(const Literal& from, const std::vector<int64_t>& from_at, Literal& to, const std::vector<int64_t>& to_at,
              const std::vector<int64_t>& sizes) {
  for (int64_t s : sizes) {
    if (s <= 0) return;
  }
  const std::vector<int64_t> fs = row_major_strides(from.shape.dims), ts = row_major_strides(to.shape.dims);
  std::vector<int64_t> index(sizes.size(), 0);
  do {
    int64_t f = 0, t = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      f += (from_at[d] + index[d]) * fs[d];
      t += (to_at[d] + index[d]) * ts[d];
    }
    to.values[static_cast<size_t>(t)] = from.values[static_cast<size_t>(f)];
  } while (next_index(index, sizes));
}

}  // namespace

// The in-place collective-permute of one slice, (input, output, input
// offsets, output offsets) with slice_sizes: the source's slice at its input
// offsets lands in the target's output at the target's output offsets; a
// device that receives nothing keeps its output operand.
Result<Value> Evaluator::evaluate_in_place_permute(const hlo::Instruction& inst, const hlo::Instruction& key,
                                                   const std::vector<const Value*>& operands) {
  if (operands[0]->is_tuple() || operands[1]->is_tuple()) {
    return op_error(inst, "an in-place permute of tuple buffers is not supported by the cpu backend");
  }
  auto sizes_text = inst.attributes.find("slice_sizes");
  const std::vector<std::vector<int64_t>> slices =
      sizes_text == inst.attributes.end() ? std::vector<std::vector<int64_t>>{} : parse_slice_sizes(sizes_text->second);
  const Literal& input = operands[0]->literal();
  const Literal& output = operands[1]->literal();
  if (slices.size() != 1 || slices[0].size() != input.shape.dims.size()) {
    return op_error(inst, fmt::format("the cpu backend evaluates in-place permutes of one slice of rank {} "
                                      "(slice_sizes={})",
                                      input.shape.rank(),
                                      sizes_text == inst.attributes.end() ? "none" : sizes_text->second));
  }
  const std::vector<int64_t>& sizes = slices[0];
  std::vector<const Literal*> in_offsets, out_offsets;
  operands[2]->collect_leaves(&in_offsets);
  operands[3]->collect_leaves(&out_offsets);
  Literal slice{input.shape, {}};
  slice.shape.dims = sizes;
  slice.shape.minor_to_major.clear();
  slice.shape.layout.clear();
  slice.values.assign(static_cast<size_t>(slice.shape.element_count()), 0.0);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > input.shape.dims[d]) return op_error(inst, "slice_sizes exceed the input");
  }
  copy_box(input, clamped(in_offsets, input.shape.dims, sizes), slice, std::vector<int64_t>(sizes.size(), 0), sizes);

  const int64_t occurrence = occurrences_[&key]++;
  const int64_t R = context_.replica_count, P = context_.num_partitions;
  SL_ASSIGN_OR_RETURN(hlo::GroupMode mode, hlo::group_mode(inst));
  SL_ASSIGN_OR_RETURN(hlo::PermutePeers peers, hlo::permute_peers(inst, context_.device, R, P));
  std::vector<int64_t> domain = permute_domain(mode, context_.device, R, P);
  auto contribution = std::make_shared<std::vector<Literal>>(std::vector<Literal>{std::move(slice)});
  SL_ASSIGN_OR_RETURN(auto inputs, rendezvous_->exchange(RendezvousKey{&key, occurrence}, context_.device, domain,
                                                         contribution));
  Literal result = output;
  if (peers.recv_from >= 0) {
    size_t from = 0;
    while (from < domain.size() && domain[from] != peers.recv_from) ++from;
    if (from == domain.size()) return op_error(inst, fmt::format("source device {} is not a peer", peers.recv_from));
    const Literal& received = (*inputs[from])[0];
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (sizes[d] > output.shape.dims[d]) return op_error(inst, "slice_sizes exceed the output");
    }
    copy_box(received, std::vector<int64_t>(sizes.size(), 0), result, clamped(out_offsets, output.shape.dims, sizes),
             sizes);
  }
  return Value::of(std::move(result));
}

Result<Value> Evaluator::evaluate_collective(const hlo::Instruction& inst, const hlo::Instruction& key,
                                             const std::vector<const Value*>& operands) {
  if (operands.empty()) return op_error(inst, "needs at least one operand");
  if (inst.opcode == Opcode::kCollectivePermute && operands.size() == 4 &&
      (operands[2]->is_tuple() || operands[3]->is_tuple())) {
    return evaluate_in_place_permute(inst, key, operands);
  }
  std::vector<const Literal*> in_leaves;
  for (const Value* v : operands) v->collect_leaves(&in_leaves);
  auto contribution = std::make_shared<std::vector<Literal>>();
  for (const Literal* l : in_leaves) contribution->push_back(*l);
  std::vector<hlo::Shape> result_shapes;
  for (const hlo::Shape* s : inst.shape.leaves()) result_shapes.push_back(*s);

  const int64_t occurrence = occurrences_[&key]++;
  const RendezvousKey rkey{&key, occurrence};
  const int64_t R = context_.replica_count, P = context_.num_partitions;
  std::vector<Literal> out;

  if (inst.opcode == Opcode::kCollectivePermute) {
    SL_ASSIGN_OR_RETURN(hlo::GroupMode mode, hlo::group_mode(inst));
    SL_ASSIGN_OR_RETURN(hlo::PermutePeers peers, hlo::permute_peers(inst, context_.device, R, P));
    std::vector<int64_t> domain = permute_domain(mode, context_.device, R, P);
    SL_ASSIGN_OR_RETURN(auto inputs, rendezvous_->exchange(rkey, context_.device, domain, contribution));
    if (peers.recv_from < 0) {
      // XLA: a device that receives nothing gets zeros.
      for (const hlo::Shape& s : result_shapes) out.push_back(zeros_literal(s));
    } else {
      size_t from = 0;
      while (from < domain.size() && domain[from] != peers.recv_from) ++from;
      if (from == domain.size()) return op_error(inst, fmt::format("source device {} is not a peer", peers.recv_from));
      const std::vector<Literal>& received = *inputs[from];
      if (received.size() != result_shapes.size()) return op_error(inst, "operand and result counts differ");
      for (size_t i = 0; i < received.size(); ++i) {
        if (received[i].shape != result_shapes[i]) {
          return op_error(inst, fmt::format("result {} is {} but the operand is {}", i,
                                            hlo::to_string(result_shapes[i]), hlo::to_string(received[i].shape)));
        }
        out.push_back(received[i]);
      }
    }
  } else {
    SL_ASSIGN_OR_RETURN(hlo::DeviceGroup group, hlo::group_of(inst, context_.device, R, P));
    std::vector<Combiner> combiners;
    if (inst.opcode == Opcode::kAllReduce || inst.opcode == Opcode::kReduceScatter) {
      for (const Literal* l : in_leaves) {
        SL_ASSIGN_OR_RETURN(Combiner c, make_combiner(inst, {l->shape.type}));
        combiners.push_back(std::move(c));
      }
    }
    SL_ASSIGN_OR_RETURN(auto inputs, rendezvous_->exchange(rkey, context_.device, group.devices, contribution));
    switch (inst.opcode) {
      case Opcode::kAllGather: {
        SL_ASSIGN_OR_RETURN(out, all_gather_result(inst, inputs, result_shapes));
        break;
      }
      case Opcode::kAllReduce: {
        SL_ASSIGN_OR_RETURN(out, all_reduce_result(inst, inputs, result_shapes, combiners));
        break;
      }
      case Opcode::kReduceScatter: {
        SL_ASSIGN_OR_RETURN(out, reduce_scatter_result(inst, inputs, group.rank, result_shapes, combiners));
        break;
      }
      case Opcode::kAllToAll: {
        SL_ASSIGN_OR_RETURN(out, all_to_all_result(inst, inputs, group.rank, result_shapes));
        break;
      }
      case Opcode::kCollectiveBroadcast: {
        // Every member gets the operand of its group's first device.
        if (inputs.empty() || inputs[0]->size() != result_shapes.size()) {
          return op_error(inst, "operand and result counts differ");
        }
        out.assign(inputs[0]->begin(), inputs[0]->end());
        break;
      }
      default:
        return op_error(inst, "is not supported by the cpu backend");
    }
  }
  size_t next = 0;
  return value_from_leaves(inst.shape, out, &next);
}

}  // namespace sl::exec::cpu
