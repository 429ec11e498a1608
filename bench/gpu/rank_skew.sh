#!/usr/bin/env bash
# How long the first recorded iterations' all-gathers wait for the other rank
# in multi-process mode: two `streamlens run --backend cuda` processes with
# 4 recorded iterations after each warm-up count given, merged; prints each
# merged run's first all-gathers (a long one waited for the other rank). Set
# SL_CUPTI_TAG_ALL=1 to keep CUPTI's API records on throughout. Run from the
# repository root on a 2-GPU machine:
#   bench/gpu/rank_skew.sh BUILD_DIR [WARMUP...]   (default: 0 1 2)
set -u
sl=${1:-build}/app/cli/streamlens
shift || true
warmups=${*:-0 1 2}
s=samples/allgather_overlap_gemm.hlo
tmp=$(mktemp -d)
export NCCL_NVLS_ENABLE=0
for w in $warmups; do
  port=$((29650 + RANDOM % 300))
  rm -f "$tmp"/*.db
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_PORT=$port timeout 120 "$sl" run $s --backend cuda --warmup "$w" \
      --iterations 4 --db "$tmp/r$r.db" > "$tmp/r$r.log" 2>&1 &
  done
  wait
  "$sl" merge "$tmp/job.db" "$tmp/r0.db" "$tmp/r1.db" > /dev/null
  echo "== --warmup $w"
  "$sl" show last --db "$tmp/job.db" | grep -E "AllGather" | head -6
done
rm -rf "$tmp"
