// libFuzzer target: the discrete-event simulator on whatever the lowering
// accepts, with the built-in H200 model.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "sim/device_model.h"
#include "sim/sim_backend.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto model = sl::sim::load_device_model("h200");
  if (!model) std::abort();  // run from the build tree: the device files are found beside it
  if (size > 16384) return 0;
  sl::hlo::Module module;
  auto lowered = sl::fuzz::lower_text({reinterpret_cast<const char*>(data), size}, &module);
  if (!lowered) return 0;
  auto backend = sl::sim::make_sim_backend(*model);
  auto out = backend->run(*lowered, sl::exec::RunOptions{});
  if (!out) {
    sl::fuzz::check_error(out.status());
    return 0;
  }
  for (const sl::trace::Event& e : out->trace.events) {
    if (e.end_ns < e.start_ns) std::abort();  // a negative duration is an overflow
  }
  return 0;
}
