#pragma once
// The instructions of two compilations of one program that do the same work.
// XLA numbers instructions anew each compilation: the module compiled with
// another flag (command buffers off, Triton GEMMs off) may call the GEMM that
// was custom-call.2 custom-call.6, and a kernel time taken by name would
// cost one GEMM with another's time. Instructions are matched by what they
// compute instead: opcode, shapes, call target, and a fusion's fused
// computation, op by op.

#include <string>
#include <unordered_map>
#include <vector>

#include "core/hlo/module.h"

namespace sl::xla {

// What one instruction computes, as text: equal `work`, same work. `emitter`
// says how XLA chose to run it (a fusion's kind and backend kind: native
// loop emitter or Triton), which can change its time for the same work.
struct Fingerprint {
  std::string name;
  std::string work;
  std::string emitter;
};

// Every instruction that runs as a thunk (those of the entry computation and
// of the computations while loops, conditionals, calls and async ops run,
// not those inside fusions or reducers), in module order.
std::vector<Fingerprint> instruction_fingerprints(const hlo::Module& module);

// Instruction of `target` -> the instruction of `source` that does the same
// work ("" when none does), for every instruction of `target`. Pairs are
// taken in rounds, each in module order among what is left: same name, work
// and emitter; same work and emitter; same work (emitted another way).
std::unordered_map<std::string, std::string> match_by_content(const std::vector<Fingerprint>& target,
                                                              const std::vector<Fingerprint>& source);

}  // namespace sl::xla
