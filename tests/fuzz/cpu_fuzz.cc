// libFuzzer target: the cpu reference evaluator on small modules. Inputs are
// kept small (4 KiB of text, at most 64 Ki elements in any shape) so one run
// stays well inside the fuzzer's timeout; loops rely on the evaluator's
// iteration caps.

#include <cstddef>
#include <cstdint>

#include "core/exec/cpu/cpu_backend.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

bool small_enough(const sl::hlo::Module& module) {
  for (const sl::hlo::Computation& c : module.computations) {
    for (const sl::hlo::Instruction& i : c.instructions) {
      if (i.shape.element_count() > (int64_t{1} << 16)) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  sl::hlo::Module module;
  auto lowered = sl::fuzz::lower_text({reinterpret_cast<const char*>(data), size}, &module);
  if (!lowered || !small_enough(module)) return 0;
  auto backend = sl::exec::make_cpu_backend();
  sl::exec::RunOptions options;
  options.collect_results = true;
  auto out = backend->run(*lowered, options);
  if (!out) sl::fuzz::check_error(out.status());
  return 0;
}
