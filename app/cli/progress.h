#pragma once
// A progress bar on a terminal; silent when stderr is piped (docs/cli.md).

#include <cstdint>
#include <string>

namespace sl::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  void update(int64_t done, int64_t total);
  bool enabled() const { return enabled_; }

 private:
  std::string label_;
  bool enabled_ = false;
  int last_percent_ = -1;
};

}  // namespace sl::cli
