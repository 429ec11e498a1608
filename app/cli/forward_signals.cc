#include "app/cli/forward_signals.h"

#include <signal.h>

#include <atomic>

namespace sl::cli {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<pid_t> g_child{0};
std::atomic<int> g_received{0};
struct sigaction g_before[3];

void on_signal(int sig, siginfo_t* info, void*) {
  // The terminal's Ctrl-C went to the command too (SI_KERNEL): not again.
  if (sig == SIGINT && info != nullptr && info->si_code == SI_KERNEL) return;
  const pid_t child = g_child.load();
  if (child <= 0) return;
  kill(child, g_received.fetch_add(1) == 0 ? SIGINT : SIGKILL);
}

}  // namespace

ForwardSignals::ForwardSignals(pid_t child) {
  g_child = child;
  g_received = 0;
  struct sigaction forward = {};
  forward.sa_sigaction = on_signal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &forward, &g_before[i]);
}

ForwardSignals::~ForwardSignals() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_before[i], nullptr);
  g_child = 0;
}

int ForwardSignals::received() const { return g_received.load(); }

}  // namespace sl::cli
