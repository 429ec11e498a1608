#pragma once
// Picks and builds the backend a run asks for (CLI runs and GUI reruns).

#include <memory>
#include <string>

#include "core/common/status.h"
#include "core/exec/backend.h"

namespace sl::app {

struct BackendChoice {
  std::unique_ptr<exec::Backend> backend;
  std::string name;          // sim | cpu | cuda
  std::string device_model;  // what to store as the run's device model
  std::string note;          // why auto chose what it chose (empty otherwise)
};

// `requested` is auto | sim | cpu | cuda. auto = cuda when built with CUDA and
// a GPU answers, else sim. An explicit cuda without a GPU is kRuntime.
Result<BackendChoice> make_backend(const std::string& requested, const std::string& device, bool allow_tf32);

}  // namespace sl::app
