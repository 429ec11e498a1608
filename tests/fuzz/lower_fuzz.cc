// libFuzzer target: the verifier and the lowering. Any text is either
// refused with a message or lowered to per-device thunks whose printout
// does not crash.

#include <cstddef>
#include <cstdint>

#include "core/sched/lowering.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sl::hlo::Module module;
  auto lowered = sl::fuzz::lower_text({reinterpret_cast<const char*>(data), size}, &module);
  if (lowered) (void)sl::sched::format_lowered(*lowered, -1);
  return 0;
}
