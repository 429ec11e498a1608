#pragma once
// What the GUI derives from a run's program text once, on the loading
// thread: the computation each stream-assignment entry belongs to (HLO
// names may repeat across computations: windowed_einsum has `x` in its
// entry and in its loop body), and whether the cpu backend would refuse the
// program (so the Rerun cpu button can say why before a 20 s run fails).

#include <string>
#include <vector>

#include "core/hlo/module.h"
#include "core/sched/lowering.h"

namespace sl::gui {

struct ProgramOutline {
  // Parallel to the run's stream assignment: each entry's computation
  // ("" when the name is in no computation of the program).
  std::vector<std::string> computations;
  // Why the cpu backend cannot run this program; empty when it can.
  std::string cpu_refusal;
};

// The computations lowering emits from the entry, depth first, callees after
// their caller: the order in which it lists the stream assignment.
std::vector<int> computations_in_call_order(const hlo::Module& module);

ProgramOutline outline_program(const hlo::Module& module, const std::vector<sched::StreamAssignmentEntry>& streams);

// The cpu backend's limits, checked over every instruction before running:
// a dot above its FLOP limit or an array above its element limit.
std::string cpu_refusal(const hlo::Module& module);

}  // namespace sl::gui
