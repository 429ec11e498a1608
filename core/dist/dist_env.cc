#include "core/dist/dist_env.h"

#include <charconv>
#include <cstdlib>
#include <limits>

namespace sl::dist {
namespace {

constexpr int kMaxWorldSize = 1 << 20;

std::optional<std::string> value_of(const EnvLookup& lookup, const char* name) {
  const char* value = lookup(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// A whole-string decimal integer in [min, max].
Result<int> parse_int(const char* name, const std::string& text, long long min, long long max) {
  long long value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return invalid_input(std::string(name) + "='" + text + "' is not an integer");
  }
  if (value < min || value > max) {
    return invalid_input(std::string(name) + "=" + text + " is outside [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
  }
  return static_cast<int>(value);
}

}  // namespace

Result<std::optional<DistEnv>> parse_dist_env(const EnvLookup& lookup) {
  std::optional<std::string> world = value_of(lookup, "WORLD_SIZE");
  if (!world) return std::optional<DistEnv>();
  DistEnv env;
  SL_ASSIGN_OR_RETURN(env.world_size, parse_int("WORLD_SIZE", *world, 1, kMaxWorldSize));

  std::optional<std::string> rank = value_of(lookup, "RANK");
  if (!rank && env.world_size > 1) {
    return invalid_input("WORLD_SIZE=" + *world + " but RANK is not set (launch with torchrun or set RANK)");
  }
  if (rank) {
    Result<int> parsed = parse_int("RANK", *rank, 0, std::numeric_limits<int>::max());
    if (!parsed) return parsed.status();
    if (*parsed >= env.world_size) {
      return invalid_input("RANK=" + *rank + " must be below WORLD_SIZE=" + *world);
    }
    env.rank = *parsed;
  }
  env.local_rank = env.rank;
  if (std::optional<std::string> local = value_of(lookup, "LOCAL_RANK")) {
    Result<int> parsed = parse_int("LOCAL_RANK", *local, 0, std::numeric_limits<int>::max());
    if (!parsed) return parsed.status();
    if (*parsed >= env.world_size) {
      return invalid_input("LOCAL_RANK=" + *local + " must be below WORLD_SIZE=" + *world);
    }
    env.local_rank = *parsed;
  }
  if (std::optional<std::string> addr = value_of(lookup, "MASTER_ADDR")) env.master_addr = *addr;
  if (std::optional<std::string> port = value_of(lookup, "MASTER_PORT")) {
    SL_ASSIGN_OR_RETURN(env.master_port, parse_int("MASTER_PORT", *port, 1, 65535));
  }
  if (env.world_size == 1) return std::optional<DistEnv>();
  return std::optional<DistEnv>(env);
}

Result<std::optional<DistEnv>> dist_env_from_environment() {
  return parse_dist_env([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace sl::dist
