#pragma once
// The launcher's view of a multi-process job (docs/architecture.md): one process
// per GPU, configured like torchrun through RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR and MASTER_PORT.

#include <functional>
#include <optional>
#include <string>

#include "core/common/status.h"

namespace sl::dist {

struct DistEnv {
  int rank = 0;  // global rank, 0 <= rank < world_size
  int world_size = 1;
  int local_rank = 0;                     // rank on this host: picks the GPU
  std::string master_addr = "127.0.0.1";  // where rank 0 listens
  int master_port = 29500;
};

// Looks a variable up; nullptr when unset. Empty values count as unset.
using EnvLookup = std::function<const char*(const char* name)>;

// std::nullopt when WORLD_SIZE is unset or 1 (a single-process run). Otherwise
// RANK is required; LOCAL_RANK defaults to RANK, MASTER_ADDR and MASTER_PORT
// to the DistEnv defaults. kInvalidInput naming the variable for malformed
// values: not an integer, RANK or LOCAL_RANK outside [0, WORLD_SIZE), a port
// outside [1, 65535].
Result<std::optional<DistEnv>> parse_dist_env(const EnvLookup& lookup);

// parse_dist_env over the process environment (std::getenv).
Result<std::optional<DistEnv>> dist_env_from_environment();

}  // namespace sl::dist
