// RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT parsing, through
// the real process environment.

#include "core/dist/dist_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

namespace sl::dist {
namespace {

constexpr const char* kVars[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"};

// Sets exactly `vars` (the others unset) and restores the old values after.
class Env : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) {
      if (const char* old = std::getenv(v)) saved_[v] = old;
      ::unsetenv(v);
    }
  }
  void TearDown() override {
    for (const char* v : kVars) ::unsetenv(v);
    for (const auto& [k, v] : saved_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  void set(const std::map<std::string, std::string>& vars) {
    for (const auto& [k, v] : vars) ::setenv(k.c_str(), v.c_str(), 1);
  }
  // The error message, or "" when parsing succeeded.
  std::string error_of() {
    Result<std::optional<DistEnv>> env = dist_env_from_environment();
    if (env) return "";
    EXPECT_EQ(env.status().code(), ErrorCode::kInvalidInput);
    return env.status().message();
  }

  std::map<std::string, std::string> saved_;
};

TEST_F(Env, UnsetOrWorldOfOneIsSingleProcess) {
  Result<std::optional<DistEnv>> none = dist_env_from_environment();
  ASSERT_TRUE(none) << none.status().message();
  EXPECT_FALSE(none->has_value());

  set({{"WORLD_SIZE", "1"}, {"RANK", "0"}});
  Result<std::optional<DistEnv>> one = dist_env_from_environment();
  ASSERT_TRUE(one) << one.status().message();
  EXPECT_FALSE(one->has_value());

  set({{"WORLD_SIZE", ""}});  // some launchers export empty variables
  Result<std::optional<DistEnv>> empty = dist_env_from_environment();
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->has_value());
}

TEST_F(Env, ReadsEveryVariable) {
  set({{"WORLD_SIZE", "8"},
       {"RANK", "5"},
       {"LOCAL_RANK", "1"},
       {"MASTER_ADDR", "10.0.0.1"},
       {"MASTER_PORT", "12345"}});
  Result<std::optional<DistEnv>> env = dist_env_from_environment();
  ASSERT_TRUE(env) << env.status().message();
  ASSERT_TRUE(env->has_value());
  const DistEnv& e = **env;
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.master_addr, "10.0.0.1");
  EXPECT_EQ(e.master_port, 12345);
}

TEST_F(Env, DefaultsForOptionalVariables) {
  set({{"WORLD_SIZE", "2"}, {"RANK", "1"}});
  Result<std::optional<DistEnv>> env = dist_env_from_environment();
  ASSERT_TRUE(env) << env.status().message();
  ASSERT_TRUE(env->has_value());
  EXPECT_EQ((*env)->local_rank, 1) << "LOCAL_RANK defaults to RANK";
  EXPECT_EQ((*env)->master_addr, "127.0.0.1");
  EXPECT_EQ((*env)->master_port, 29500);
}

TEST_F(Env, MalformedValuesNameTheVariable) {
  set({{"WORLD_SIZE", "two"}, {"RANK", "0"}});
  EXPECT_NE(error_of().find("WORLD_SIZE='two' is not an integer"), std::string::npos) << error_of();

  set({{"WORLD_SIZE", "0"}});
  EXPECT_NE(error_of().find("WORLD_SIZE=0 is outside"), std::string::npos) << error_of();

  set({{"WORLD_SIZE", "4"}, {"RANK", "4"}});
  EXPECT_NE(error_of().find("RANK=4 must be below WORLD_SIZE=4"), std::string::npos) << error_of();

  set({{"RANK", "-1"}});
  EXPECT_NE(error_of().find("RANK=-1 is outside"), std::string::npos) << error_of();

  set({{"RANK", "1x"}});
  EXPECT_NE(error_of().find("RANK='1x' is not an integer"), std::string::npos) << error_of();

  set({{"RANK", "1"}, {"LOCAL_RANK", "9"}});
  EXPECT_NE(error_of().find("LOCAL_RANK=9"), std::string::npos) << error_of();

  set({{"LOCAL_RANK", "0"}, {"MASTER_PORT", "70000"}});
  EXPECT_NE(error_of().find("MASTER_PORT=70000 is outside [1, 65535]"), std::string::npos) << error_of();

  set({{"MASTER_PORT", "0"}});
  EXPECT_NE(error_of().find("MASTER_PORT=0"), std::string::npos) << error_of();

  set({{"MASTER_PORT", "http"}});
  EXPECT_NE(error_of().find("MASTER_PORT='http' is not an integer"), std::string::npos) << error_of();
}

TEST_F(Env, MissingRankIsAnError) {
  set({{"WORLD_SIZE", "4"}});
  EXPECT_NE(error_of().find("RANK is not set"), std::string::npos) << error_of();
}

TEST(ParseDistEnv, TakesAnyLookup) {
  std::map<std::string, std::string> vars{{"WORLD_SIZE", "3"}, {"RANK", "2"}, {"MASTER_ADDR", "node0"}};
  auto lookup = [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  Result<std::optional<DistEnv>> env = parse_dist_env(lookup);
  ASSERT_TRUE(env) << env.status().message();
  ASSERT_TRUE(env->has_value());
  EXPECT_EQ((*env)->rank, 2);
  EXPECT_EQ((*env)->master_addr, "node0");
}

}  // namespace
}  // namespace sl::dist
