"""Ctrl-C at a terminal during `streamlens capture` of a torch program:
  python3 bench/gpu/ctrl_c_capture.py STREAMLENS DB
runs `STREAMLENS capture -- python3 -c LOOP` on a pseudo-terminal, the loop
doing matmuls until interrupted; once it has done 20 it types Ctrl-C (the
terminal sends SIGINT to streamlens and the program alike) and prints what
streamlens said and its exit status. The run must be saved.
"""
import os
import pty
import sys
import time

LOOP = """
import sys, torch
x = torch.ones(512, 512, device="cuda")
n = 0
try:
    while True:
        y = x @ x
        torch.cuda.synchronize()
        n += 1
        if n == 20:
            print("ready", flush=True)
except KeyboardInterrupt:
    print(f"interrupted after {n} matmuls", flush=True)
"""

streamlens, db = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(streamlens, [streamlens, "capture", "--db", db, "--name", "ctrl-c", "--",
                          sys.executable, "-c", LOOP])
seen = b""
deadline = time.time() + 120
typed = False
while time.time() < deadline:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
    if not typed and b"ready" in seen:
        os.write(fd, b"\x03")
        typed = True
_, status = os.waitpid(pid, 0)
print(seen.decode(errors="replace").replace("\r", ""))
print("typed Ctrl-C:", typed, "| streamlens exit:",
      os.WEXITSTATUS(status) if os.WIFEXITED(status) else f"signal {os.WTERMSIG(status)}")
