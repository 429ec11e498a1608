#!/usr/bin/env bash
# Per call of bench/gpu/host_pace_calls.sh: the median step, its replay, the
# host's cost of a kernel launch estimated from it (sim/host_pace.h) and the
# host's idle time between steps (JAX's dispatch, outside the step).
#   bench/fidelity/host_pace_spread.sh STREAMLENS CAPTURES DB
set -u
SL=$1 ROOT=$2 DB=$3
rm -f "$DB"
echo "| call | median step (us) | replay (us) | host cost of a kernel | idle between steps (us) |"
echo "| --- | ---: | ---: | --- | ---: |"
for d in "$ROOT"/*/; do
  name=$(basename "$d")
  id=$("$SL" import "$d/capture.jsonl" --xla-dump "$d/dump" --db "$DB" --name "$name" 2>&1 |
    sed -n 's/.* as run \([0-9]*\) .*/\1/p' | head -1)
  [ -n "$id" ] || { echo "| $name | import failed | | | |"; continue; }
  module=$(ls "$d"/dump/*jit_*gpu_after_optimizations.txt | head -1)
  host=$("$SL" run "$module" --backend sim --kernel-times "$id" --db "$DB" --name "replay $name" 2>&1 |
    sed -n 's/.*host costs from run [0-9]*: \(kernel [^,]*\),.*/\1/p')
  read -r step replay <<< "$("$SL" compare "$id" last --db "$DB" 2>&1 | awk '
    /^A: /{for(i=1;i<=NF;i++) if($i=="makespan") a=$(i+1)}
    /^B: /{for(i=1;i<=NF;i++) if($i=="makespan") b=$(i+1)}
    END{print a, b}')"
  idle=$("$SL" query --db "$DB" "select iteration, min(start_ns), max(end_ns) from events where run_id = $id
    and iteration >= 0 group by iteration order by iteration" | awk 'NR > 1 { if (e) print $2 - e; e = $3 }' |
    sort -n | awk '{v[NR] = $1} END {printf "%.1f", v[int((NR + 1) / 2)] / 1000}')
  echo "| $name | $step | $replay | $host | $idle |"
done
