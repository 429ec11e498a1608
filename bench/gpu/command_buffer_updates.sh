#!/usr/bin/env bash
# Runs JAX programs of tests/corpus/jax/make_dumps.py with XLA's command
# buffer logging on and summarizes its "Updated command buffer in N us;
# num_commands=K" lines: how long XLA's host takes to re-record a CUDA graph
# before launching it (CommandBufferThunk::ExecuteOnStream), by K.
#   bench/gpu/command_buffer_updates.sh OUT_DIR PROGRAM ...
set -u
OUT=$1
shift
export XLA_PYTHON_CLIENT_PREALLOCATE=false TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=command_buffer_thunk=3
for prog in "$@"; do
  d="$OUT/$prog"
  mkdir -p "$d"
  timeout 120 python3 tests/corpus/jax/make_dumps.py --child-single "$prog" "$d" --size large > "$d/vlog.txt" 2>&1
  echo "$prog rc=$? $(grep -c 'Updated command buffer' "$d/vlog.txt") updates, $(grep -c 'Execute command buffer' "$d/vlog.txt") executions"
  grep -o 'Updated command buffer in [0-9]* .*s; num_commands=[0-9]*' "$d/vlog.txt" |
    sed 's/Updated command buffer in \([0-9]*\) .*num_commands=\([0-9]*\)/\2 \1/' | sort -n -k1,1 -k2,2 > "$d/updates.txt"
  for k in $(cut -d' ' -f1 "$d/updates.txt" | uniq); do
    awk -v k="$k" '$1 == k {print $2}' "$d/updates.txt" > "$d/us.txt"
    n=$(wc -l < "$d/us.txt")
    echo "  num_commands=$k: $n re-records, median $(sed -n "$(( (n + 1) / 2 ))p" "$d/us.txt") us"
  done
done
