// send / recv between the devices of one run. The peers come from the
// `_xla_send_recv_source_target_pairs` frontend attribute that XLA's GPU
// pipeline puts on every device-to-device send and recv; its ids are
// partition ids with a channel_id and replica ids without one, as for
// collective-permute. A send posts its data to each target at once; a
// recv-done waits for the message of the recv that started it. Messages
// between two devices pair up in order, as NCCL's do; the channel_id does
// not take part (XLA's own tests pair a send and a recv of different ids).
// A device that is no pair's target receives zeros, as collective-permute's.

#include <fmt/format.h>

#include <cctype>

#include "core/exec/cpu/array_util.h"
#include "core/exec/cpu/evaluator.h"
#include "core/hlo/replica_groups.h"

namespace sl::exec::cpu {
namespace {

using hlo::Opcode;

Status op_error(const hlo::Instruction& inst, const std::string& what) {
  return invalid_input(fmt::format("'{}' ({}): {}", inst.name, hlo::opcode_name(inst.opcode), what));
}

// "{{0,1},{1,2}}" -> {(0,1), (1,2)}.
Result<std::vector<std::pair<int64_t, int64_t>>> parse_pairs(const std::string& text) {
  std::vector<int64_t> ids;
  for (size_t i = 0; i < text.size();) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      size_t end = i;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
      ids.push_back(std::stoll(text.substr(i, end - i)));
      i = end;
    } else if (text[i] == '{' || text[i] == '}' || text[i] == ',' || text[i] == ' ') {
      ++i;
    } else {
      return invalid_input(fmt::format("_xla_send_recv_source_target_pairs={} is not a list of pairs", text));
    }
  }
  if (ids.size() % 2 != 0) return invalid_input(fmt::format("_xla_send_recv_source_target_pairs={} is odd", text));
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i < ids.size(); i += 2) pairs.emplace_back(ids[i], ids[i + 1]);
  return pairs;
}

Literal u32_scalar(double v) { return Literal{hlo::Shape::array(hlo::PrimitiveType::kU32, {}), {v}}; }
Value token() { return Value::of(Literal{hlo::Shape::token(), {}}); }

}  // namespace

Result<Value> Evaluator::evaluate_p2p(const hlo::Instruction& inst, const std::vector<const Value*>& operands) {
  if (inst.opcode == Opcode::kSendDone) return token();
  if (inst.opcode == Opcode::kRecvDone) {
    // (data, context, token) -> (data, token).
    if (operands.size() != 1 || !operands[0]->is_tuple() || operands[0]->elements.size() < 2 ||
        operands[0]->elements[1].is_tuple()) {
      return op_error(inst, "needs the (data, u32[], token[]) of a recv");
    }
    const Value& started = *operands[0];
    const double ticket = started.elements[1].literal().values.empty() ? 0 : started.elements[1].literal().values[0];
    Value data = started.elements[0];
    if (ticket >= 1 && ticket <= static_cast<double>(pending_receives_.size())) {
      const auto [source, sequence] = pending_receives_[static_cast<size_t>(ticket) - 1];
      SL_ASSIGN_OR_RETURN(Contribution message, rendezvous_->take(inst, source, context_.device, sequence));
      std::vector<Literal> leaves(message->begin(), message->end());
      size_t next = 0;
      const hlo::Shape& shape = inst.shape.is_tuple() && !inst.shape.elements.empty() ? inst.shape.elements[0]
                                                                                        : inst.shape;
      auto value = value_from_leaves(shape, leaves, &next);
      if (!value || next != leaves.size()) {
        return op_error(inst, fmt::format("received {} value(s) for {}", leaves.size(), hlo::to_string(shape)));
      }
      data = std::move(value).value();
    }
    return Value::tuple({std::move(data), token()});
  }
  if (inst.attributes.count("is_host_transfer") && inst.attributes.find("is_host_transfer")->second == "true") {
    return op_error(inst, "is a transfer with the host, outside the program: the cpu backend cannot evaluate it");
  }
  auto pairs_text = inst.frontend_attributes.find("_xla_send_recv_source_target_pairs");
  if (pairs_text == inst.frontend_attributes.end()) {
    return op_error(inst, "has no _xla_send_recv_source_target_pairs frontend attribute, so the cpu backend does "
                          "not know its peer (use --backend sim)");
  }
  hlo::Instruction as_permute = inst;  // the pairs name peers as a collective-permute's do
  as_permute.opcode = Opcode::kCollectivePermute;
  SL_ASSIGN_OR_RETURN(as_permute.source_target_pairs, parse_pairs(pairs_text->second));
  SL_ASSIGN_OR_RETURN(hlo::PermutePeers peers, hlo::permute_peers(as_permute, context_.device,
                                                                  context_.replica_count, context_.num_partitions));
  if (inst.opcode == Opcode::kSend) {
    // (data, token) -> (data, context, token).
    if (operands.empty()) return op_error(inst, "needs the data to send");
    auto message = std::make_shared<std::vector<Literal>>();
    std::vector<const Literal*> leaves;
    operands[0]->collect_leaves(&leaves);
    for (const Literal* l : leaves) message->push_back(*l);
    for (int64_t to : peers.sends) rendezvous_->post(context_.device, to, sent_to_[to]++, message);
    return Value::tuple({*operands[0], Value::of(u32_scalar(0)), token()});
  }
  // recv: (token) -> (data, context, token); the data arrives at recv-done.
  if (!inst.shape.is_tuple() || inst.shape.elements.empty()) return op_error(inst, "needs a (data, u32[], token[]) shape");
  double ticket = 0;
  if (!peers.receives.empty()) {
    if (peers.receives.size() > 1) return op_error(inst, "receives from more than one device");
    const int64_t from = peers.receives.front();
    pending_receives_.emplace_back(from, received_from_[from]++);
    ticket = static_cast<double>(pending_receives_.size());
  }
  return Value::tuple({zeros_value(inst.shape.elements[0]), Value::of(u32_scalar(ticket)), token()});
}

}  // namespace sl::exec::cpu
