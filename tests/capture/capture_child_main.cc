// A CUDA program for the capture tests (tests/capture): its GPU work is
// memsets, so it needs no kernel compiled.
//   capture_child N                 N memsets on one stream
//   capture_child N --fork          ... then forks a copy that exits at once
//                                   through exit() (no CUDA in the copy)
//   capture_child N --spawn A B     ... then runs itself twice, with A and B
//   capture_child N --nvtx-early R  pushes NVTX range R before CUDA starts,
//                                   pops it after the N memsets, then 3 more
//   capture_child N --until-sigint F  ... then creates file F and waits (60 s
//                                   at most) for SIGINT, to exit normally as
//                                   a Python program does on KeyboardInterrupt
//   capture_child N --killed-after-ms T  ... then waits T ms and kills
//                                   itself with SIGKILL (no exit handler runs)
// Exits 0, or 1 on a CUDA error (said on stderr).

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

volatile sig_atomic_t g_interrupted = 0;

bool memsets(int n, void* buffer, cudaStream_t stream) {
  for (int i = 0; i < n; ++i) {
    if (cudaMemsetAsync(buffer, i, 1 << 20, stream) != cudaSuccess) return false;
  }
  return cudaStreamSynchronize(stream) == cudaSuccess;
}

int run_self(const char* self, const std::string& count) {
  std::vector<char*> argv = {const_cast<char*>(self), const_cast<char*>(count.c_str()), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, self, nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: capture_child N [--fork | --spawn A B | --nvtx-early RANGE | --until-sigint FILE | "
                 "--killed-after-ms T]\n");
    return 2;
  }
  const int n = std::atoi(argv[1]);
  const std::string mode = argc > 2 ? argv[2] : "";
  if (mode == "--nvtx-early" && argc > 3) nvtxRangePushA(argv[3]);
  void* buffer = nullptr;
  cudaStream_t stream = nullptr;
  if (cudaMalloc(&buffer, 1 << 20) != cudaSuccess || cudaStreamCreate(&stream) != cudaSuccess ||
      !memsets(n, buffer, stream)) {
    std::fprintf(stderr, "capture_child: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  if (mode == "--nvtx-early") {
    nvtxRangePop();
    if (!memsets(3, buffer, stream)) return 1;
  }
  if (mode == "--fork") {
    const pid_t copy = fork();
    if (copy == 0) std::exit(0);  // atexit handlers run in the copy
    int status = 0;
    if (copy < 0 || waitpid(copy, &status, 0) < 0) return 1;
  }
  if (mode == "--killed-after-ms" && argc > 3) {
    usleep(static_cast<useconds_t>(std::atoi(argv[3])) * 1000);
    std::raise(SIGKILL);
  }
  if (mode == "--until-sigint" && argc > 3) {
    std::signal(SIGINT, [](int) { g_interrupted = 1; });
    if (std::FILE* ready = std::fopen(argv[3], "w")) std::fclose(ready);
    for (int waited = 0; !g_interrupted && waited < 6000; ++waited) usleep(10000);
  }
  if (mode == "--spawn" && argc > 4) {
    if (run_self(argv[0], argv[3]) != 0 || run_self(argv[0], argv[4]) != 0) return 1;
  }
  return 0;
}
