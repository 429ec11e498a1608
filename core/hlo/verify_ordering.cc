// Scheduling constraints of one computation: every control predecessor is an
// instruction of the computation, and control edges together with operand
// edges form no cycle (XLA would never find an order to run them in).

#include <fmt/format.h>

#include <queue>

#include "core/hlo/verify_context.h"

namespace sl::hlo::verify_detail {

void verify_ordering(const Module& module, const Computation& computation, std::vector<Diagnostic>& out) {
  const auto& insts = computation.instructions;
  const size_t n = insts.size();
  auto report = [&](const Instruction& inst, std::string message) {
    out.push_back(Diagnostic{Severity::kError, module.file_name, inst.loc, std::move(message)});
  };
  std::vector<std::vector<int>> successors(n);
  std::vector<int> pending(n, 0);  // unmet predecessors (operands and control)
  bool any_control = false;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& inst = insts[i];
    for (int operand : inst.operands) {
      if (operand < 0 || static_cast<size_t>(operand) >= n) continue;  // reported by the driver
      successors[static_cast<size_t>(operand)].push_back(static_cast<int>(i));
      ++pending[i];
    }
    for (int predecessor : inst.control_predecessors) {
      any_control = true;
      if (predecessor < 0 || static_cast<size_t>(predecessor) >= n) {
        report(inst, fmt::format("%{} names a control predecessor that is not in computation %{}", inst.name,
                                 computation.name));
        continue;
      }
      if (static_cast<size_t>(predecessor) == i) {
        report(inst, fmt::format("%{} is its own control predecessor", inst.name));
        continue;
      }
      successors[static_cast<size_t>(predecessor)].push_back(static_cast<int>(i));
      ++pending[i];
    }
  }
  // Operands always precede their users in the text (checked by the driver),
  // so only control edges can close a cycle.
  if (!any_control) return;
  std::queue<int> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  }
  size_t ordered = 0;
  while (!ready.empty()) {
    const int i = ready.front();
    ready.pop();
    ++ordered;
    for (int s : successors[static_cast<size_t>(i)]) {
      if (--pending[static_cast<size_t>(s)] == 0) ready.push(s);
    }
  }
  if (ordered == n) return;
  // Every instruction left has an unordered predecessor; walking back through
  // them n times lands on a cycle, whose member is reported.
  auto unordered_predecessor = [&](size_t i) -> int {
    for (int p : insts[i].control_predecessors) {
      if (p >= 0 && static_cast<size_t>(p) < n && p != static_cast<int>(i) && pending[static_cast<size_t>(p)] > 0) return p;
    }
    for (int p : insts[i].operands) {
      if (p >= 0 && static_cast<size_t>(p) < n && pending[static_cast<size_t>(p)] > 0) return p;
    }
    return -1;
  };
  size_t at = 0;
  while (pending[at] == 0) ++at;
  for (size_t step = 0; step < n; ++step) {
    const int p = unordered_predecessor(at);
    if (p < 0) break;
    at = static_cast<size_t>(p);
  }
  std::string through;
  for (int p : insts[at].control_predecessors) {
    if (p >= 0 && static_cast<size_t>(p) < n && pending[static_cast<size_t>(p)] > 0) {
      through += fmt::format("{}%{}", through.empty() ? "" : ", ", insts[static_cast<size_t>(p)].name);
    }
  }
  report(insts[at], fmt::format("control-predecessors of %{} form a cycle{}", insts[at].name,
                                through.empty() ? std::string() : " (through " + through + ")"));
}

}  // namespace sl::hlo::verify_detail
