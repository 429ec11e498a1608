// Collectives on the CPU backend: each device contributes its operand leaves
// to the rendezvous under (instruction, occurrence), then computes its own
// result from its group's contributions.

#include <fmt/format.h>

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

}  // namespace

Result<Value> Evaluator::evaluate_collective(const hlo::Instruction& inst, const hlo::Instruction& key,
                                             const std::vector<const Value*>& operands) {
  if (operands.empty()) return op_error(inst, "needs at least one operand");
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
