#pragma once
// Which GEMMs may run while a collective of their device is in flight.
//
// NCCL's kernels need SMs of their own. A large cuBLAS GEMM is persistent
// (one CTA per SM until it is done), so when it becomes resident first a
// concurrent collective gets no SM and waits for the GEMM to end: the overlap
// the schedule asked for does not happen. GEMMs marked here are run on fewer
// SMs by the cuda backend, and modelled so by the simulator
// (docs/streams.md, "SMs beside collectives").

#include <cstdint>
#include <span>

#include "core/sched/thunk.h"

namespace sl::sched {

// Sets `gemm.beside_collective` on every kGemm thunk of one device's
// per-iteration sequence that is not ordered against some ring collective
// (all-gather, reduce-scatter, all-reduce; not collective-permute) on another
// stream: neither waits, through any chain of events, for the other. Ordering follows the sequence's record/wait thunks and each
// stream's issue order (vector clocks); O(thunks x streams).
void mark_gemms_beside_collectives(std::span<Thunk> thunks);

// SMs a GEMM runs on when GEMMs beside a collective leave `comm_sms` of the
// device's `sm_count` to NCCL; 0: every SM (not marked, or nothing to leave).
// The one rule for the cuda backend and the simulator.
inline int64_t gemm_sm_limit(const Thunk& thunk, int64_t sm_count, int64_t comm_sms) {
  if (thunk.kind != ThunkKind::kGemm || !thunk.gemm.beside_collective || comm_sms <= 0 || sm_count <= comm_sms) {
    return 0;
  }
  return sm_count - comm_sms;
}

}  // namespace sl::sched
