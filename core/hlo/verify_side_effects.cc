// Ops with side effects or ordering roles: send/recv and their dones,
// after-all, add-dependency, opt-barrier, random numbers, infeed/outfeed and
// domain. XLA fixes only a few of their shapes; the rest is accepted as written.

#include <fmt/format.h>

#include "core/hlo/verify_context.h"

namespace sl::hlo::verify_detail {
namespace {

bool is_token(const Shape& shape) { return shape.is_token(); }

// The last operand is a token (send, recv, infeed, outfeed).
bool expect_token_operand(const Site& site, size_t i) {
  if (i < site.operand_count() && is_token(site.operand_shape(i))) return true;
  site.error(fmt::format("{} operand {} must be a token, but is {}", written_opcode(site.inst), i,
                         i < site.operand_count() ? str(site.operand_shape(i)) : std::string("missing")));
  return false;
}

// send: (data, token) -> (data, u32[] context, token).
void verify_send(const Site& site) {
  if (!expect_operand_count(site, 2) || !expect_token_operand(site, 1)) return;
  const Shape& shape = site.inst.shape;
  if (!shape.is_tuple() || shape.elements.size() != 3 || shape.elements[0] != site.operand_shape(0) ||
      !shape.elements[2].is_token()) {
    site.error(fmt::format("send shape must be ({}, u32[], token[]), but is {}", str(site.operand_shape(0)),
                           str(shape)));
  }
}

// recv: token -> (data, u32[] context, token).
void verify_recv(const Site& site) {
  if (!expect_operand_count(site, 1) || !expect_token_operand(site, 0)) return;
  const Shape& shape = site.inst.shape;
  if (!shape.is_tuple() || shape.elements.size() != 3 || !shape.elements[2].is_token()) {
    site.error(fmt::format("recv shape must be (data, u32[], token[]), but is {}", str(shape)));
  }
}

void verify_send_recv_done(const Site& site, Opcode start) {
  if (!expect_operand_count(site, 1)) return;
  const Instruction& operand = *site.operands[0];
  // Pipelined send/recv pass the start through a while loop's tuple.
  if (operand.opcode != start && !operand.shape.is_tuple()) {
    site.error(fmt::format("{} operand {} must be a {}, but is {}", written_opcode(site.inst), ref(operand),
                           opcode_name(start), written_opcode(operand)));
    return;
  }
  const Shape& shape = site.inst.shape;
  if (start == Opcode::kSend) {
    if (!shape.is_token()) site.error(fmt::format("send-done shape must be token[], but is {}", str(shape)));
    return;
  }
  const Shape& recv = operand.shape;
  const bool matches = operand.opcode != start || recv.elements.empty() || shape.elements[0] == recv.elements[0];
  const bool ok = shape.is_tuple() && shape.elements.size() == 2 && shape.elements[1].is_token() && matches;
  if (!ok) site.error(fmt::format("recv-done shape must be (data, token[]) of its recv, but is {}", str(shape)));
}

// XLA's verifier checks only the result: after-all orders after any
// operands, tokens or not (hlo_parser_test's AddDependency).
void verify_after_all(const Site& site) { expect_shape(site, Shape::token()); }

void verify_add_dependency(const Site& site) {
  if (expect_operand_count(site, 2)) expect_shape(site, site.operand_shape(0));
}

void verify_opt_barrier(const Site& site) {
  if (expect_operand_count(site, 1)) expect_shape(site, site.operand_shape(0));
}

// rng-bit-generator(state) -> (new state, random bits).
void verify_rng_bit_generator(const Site& site) {
  if (!expect_operand_count(site, 1) || !expect_array_operand(site, 0)) return;
  const Shape& shape = site.inst.shape;
  if (!shape.is_tuple() || shape.elements.size() != 2 || shape.elements[0] != site.operand_shape(0) ||
      !shape.elements[1].is_array()) {
    site.error(fmt::format("rng-bit-generator shape must be ({}, bits array), but is {}", str(site.operand_shape(0)),
                           str(shape)));
  }
}

// rng(a, b): two scalar parameters of the result's element type.
void verify_rng(const Site& site) {
  if (!expect_operand_count(site, 2)) return;
  for (size_t i = 0; i < 2; ++i) {
    const Shape& p = site.operand_shape(i);
    if (!p.is_array() || p.rank() != 0) {
      site.error(fmt::format("rng parameter {} must be a scalar, but is {}", i, str(p)));
      return;
    }
  }
  if (!site.inst.shape.is_array()) site.error(fmt::format("rng must produce an array, but its shape is {}", str(site.inst.shape)));
}

}  // namespace

void verify_side_effects(const Site& site) {
  switch (site.inst.opcode) {
    case Opcode::kSend: verify_send(site); return;
    case Opcode::kRecv: verify_recv(site); return;
    case Opcode::kSendDone: verify_send_recv_done(site, Opcode::kSend); return;
    case Opcode::kRecvDone: verify_send_recv_done(site, Opcode::kRecv); return;
    case Opcode::kAfterAll: verify_after_all(site); return;
    case Opcode::kAddDependency: verify_add_dependency(site); return;
    case Opcode::kOptimizationBarrier: verify_opt_barrier(site); return;
    case Opcode::kRngBitGenerator: verify_rng_bit_generator(site); return;
    case Opcode::kRng: verify_rng(site); return;
    default: return;  // infeed, outfeed, domain, rng-get-and-update-state: as written
  }
}

}  // namespace sl::hlo::verify_detail
