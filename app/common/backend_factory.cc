#include "app/common/backend_factory.h"

#include "app/common/input_file.h"
#include "core/exec/cpu/cpu_backend.h"
#include "sim/sim_backend.h"
#include "app/common/cuda_plugin.h"

namespace sl::app {
namespace {

// A device file is read here, with a size cap and its type checked (a pipe
// or /dev/zero must not grow without bound); bare names are installed files.
Result<sim::DeviceModel> load_device(const std::string& device) {
  const bool is_path = device.find('/') != std::string::npos || (device.size() > 5 && device.ends_with(".json"));
  if (!is_path) return sim::load_device_model(device);
  SL_ASSIGN_OR_RETURN(std::string text, read_input_file(device, kMaxDeviceFileBytes, "device file"));
  return sim::parse_device_model(text, device);
}

Result<BackendChoice> make_sim(const std::string& device) {
  SL_ASSIGN_OR_RETURN(sim::DeviceModel model, load_device(device));
  BackendChoice choice;
  choice.backend = sim::make_sim_backend(model);
  choice.name = "sim";
  choice.device_model = device;
  return choice;
}

Result<BackendChoice> make_cuda(bool allow_tf32) {
  (void)allow_tf32;  // passed per run in RunOptions
  SL_ASSIGN_OR_RETURN(const CudaPlugin* cuda, cuda_plugin());
  SL_ASSIGN_OR_RETURN(std::optional<dist::DistEnv> dist, dist::dist_env_from_environment());
  SL_ASSIGN_OR_RETURN(std::unique_ptr<exec::Backend> backend, cuda->make_backend({.dist = dist}));
  BackendChoice choice;
  // The GPU the run uses (the program's device count is recorded apart).
  choice.device_model = cuda->device_name(dist ? dist->local_rank : 0);
  choice.backend = std::move(backend);
  choice.name = "cuda";
  return choice;
}

}  // namespace

Result<BackendChoice> make_backend(const std::string& requested, const std::string& device, bool allow_tf32) {
  if (requested == "sim") return make_sim(device);
  if (requested == "cpu") {
    BackendChoice choice;
    choice.backend = exec::make_cpu_backend();
    choice.name = "cpu";
    choice.device_model = "host";
    return choice;
  }
  if (requested == "cuda") return make_cuda(allow_tf32);
  if (requested != "auto") return usage_error("unknown backend '" + requested + "' (auto, sim, cpu, cuda)");
  Result<BackendChoice> cuda = make_cuda(allow_tf32);
  if (cuda) return cuda;
  SL_ASSIGN_OR_RETURN(BackendChoice sim, make_sim(device));
  sim.note = "note: " + cuda.status().message() + "; using the simulator (" + device + ")";
  return sim;
}

}  // namespace sl::app
