#pragma once
// Which GEMMs may run while a collective of their device is in flight.
//
// NCCL's kernels need SMs of their own. A large cuBLAS GEMM is persistent
// (one CTA per SM until it is done), so when it becomes resident first a
// concurrent collective gets no SM and waits for the GEMM to end: the overlap
// the schedule asked for does not happen. GEMMs marked here are run on fewer
// SMs by the cuda backend, and modelled so by the simulator (DESIGN
// section 4, "compute beside communication").

#include <span>

#include "core/sched/thunk.h"

namespace sl::sched {

// Sets `gemm.beside_collective` on every kGemm thunk of one device's
// per-iteration sequence that is not ordered against some ring collective
// (all-gather, reduce-scatter, all-reduce; not collective-permute) on another
// stream: neither waits, through any chain of events, for the other. Ordering follows the sequence's record/wait thunks and each
// stream's issue order (vector clocks); O(thunks x streams).
void mark_gemms_beside_collectives(std::span<Thunk> thunks);

}  // namespace sl::sched
