#pragma once
// While `streamlens capture` waits for its command, signals meant to stop
// the capture stop the command instead, so that what it recorded is saved
// (as `nsys profile` does). A Ctrl-C at the terminal reaches the command
// itself (one process group) and is left to it; SIGINT sent to streamlens
// alone, SIGTERM and SIGHUP are passed on as SIGINT (a Python program then
// ends through KeyboardInterrupt and runs its atexit handlers, the capture's
// flush among them); a second such signal kills the command.

#include <sys/types.h>

namespace sl::cli {

class ForwardSignals {
 public:
  explicit ForwardSignals(pid_t child);  // one at a time
  ~ForwardSignals();                     // the handlers before it
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

  // The signals received (0 when none): the command was stopped when > 0.
  int received() const;
};

}  // namespace sl::cli
