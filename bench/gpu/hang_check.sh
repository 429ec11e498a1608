#!/usr/bin/env bash
# --nccl-timeout on 2 GPUs, with device 1 stopped before its all-gather
# (SL_CUDA_HANG_THUNK): one process, then two processes (rank 1 waiting
# forever, rank 0 timing out), then a healthy run. Prints exit codes, times
# and the runs' status. Run from the repository root on the GPU machine:
#   bench/gpu/hang_check.sh BUILD_DIR
set -u
sl=${1:-build}/app/cli/streamlens
s=samples/allgather_overlap_gemm.hlo  # thunk 2 of device 1 is its all-gather
tmp=$(mktemp -d)
export NCCL_NVLS_ENABLE=0
echo "== one process, device 1 hung, --nccl-timeout 3"
start=$SECONDS
SL_CUDA_HANG_THUNK=1:2 timeout 120 "$sl" run $s --backend cuda --iterations 3 --nccl-timeout 3 --db "$tmp/one.db"
echo "exit $? after $((SECONDS - start)) s"
"$sl" runs --db "$tmp/one.db"
echo "== two processes, rank 1 hung (--nccl-timeout 0), rank 0 --nccl-timeout 3"
start=$SECONDS
RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_PORT=29631 timeout 120 "$sl" run $s --backend cuda --iterations 3 \
  --nccl-timeout 3 --db "$tmp/r0.db" > "$tmp/r0.log" 2>&1 &
p0=$!
RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MASTER_PORT=29631 SL_CUDA_HANG_THUNK=1:2 timeout 120 "$sl" run $s --backend cuda \
  --iterations 3 --nccl-timeout 0 --db "$tmp/r1.db" > "$tmp/r1.log" 2>&1 &
p1=$!
wait $p0; e0=$?; wait $p1; e1=$?
echo "rank 0 exit $e0, rank 1 exit $e1, after $((SECONDS - start)) s"
tail -n 3 "$tmp/r0.log" "$tmp/r1.log"
"$sl" runs --db "$tmp/r0.db"; "$sl" runs --db "$tmp/r1.db"
echo "== healthy, default timeout, 2 + 10 iterations"
timeout 120 "$sl" run $s --backend cuda --warmup 2 --iterations 10 --db "$tmp/ok.db" | tail -4
echo "exit ${PIPESTATUS[0]}"
rm -rf "$tmp"
