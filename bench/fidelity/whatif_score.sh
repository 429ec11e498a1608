#!/usr/bin/env bash
# Scores the trace-driven simulator on captures of real JAX programs, without
# a GPU. CAPTURES holds one folder per capture, NAME/{capture.jsonl,dump/},
# as bench/gpu/capture_jax.sh writes them; names are PROGRAM_SETTING, where
# SETTING "def" is XLA's default and the others (cboff, cbfusion, notriton)
# change one XLA flag.
#   bench/fidelity/whatif_score.sh STREAMLENS CAPTURES DB > report.md
# (a) replay: each capture's module simulated with its own kernel times.
# (b) what-if: each non-default setting's module simulated with the kernel
#     times of the same program's default capture, against the setting's own
#     measured median step; and the default's module from each such capture.
#     Where the host costs came from the device file, the last column is the
#     step at the fastest and slowest host pace measured between calls, "(in)"
#     when the measured step lies inside.
# The device file is the one of the GPU each capture names (h200 for
# captures that name none); DEVICE=NAME_OR_FILE takes that one for all.
set -u
SL=$1 ROOT=$2 DB=$3
rm -f "$DB"
declare -A run_of linked_of
for d in "$ROOT"/*/; do
  name=$(basename "$d")
  out=$("$SL" import "$d/capture.jsonl" --xla-dump "$d/dump" --db "$DB" --name "$name" 2>&1) || {
    echo "import $name failed: $out" >&2; continue; }
  run_of[$name]=$(sed -n 's/.* as run \([0-9]*\) .*/\1/p' <<< "$out" | head -1)
  linked_of[$name]=$(sed -n 's/^linked: [0-9]* steps of \([^,]*\),.*/\1/p' <<< "$out" | head -1)
done
# The module the capture was linked to (a dump can hold others: flax's
# jax.random.key(0) compiles jit__threefry_seed before the step).
module_of() {
  local m=${linked_of[$1]:-}
  if [ -n "$m" ] && ls "$ROOT/$1"/dump/*."$m".*gpu_after_optimizations.txt > /dev/null 2>&1; then
    ls "$ROOT/$1"/dump/*."$m".*gpu_after_optimizations.txt | head -1
  else
    ls "$ROOT/$1"/dump/*jit_*gpu_after_optimizations.txt | head -1
  fi
}
# Prints "measured simulated error range" for module of $1 costed with run $2,
# against run $3; range: the step at the fastest and slowest host pace when the
# host costs came from the device file (run's note), with "in" when the
# measured step lies inside it, else "-".
score() {
  local sim range
  sim=$("$SL" run "$(module_of "$1")" --backend sim --kernel-times "$2" ${DEVICE:+--device "$DEVICE"} --db "$DB" --name "$1 from $2" 2>&1) || {
    echo "- - failed -"; return; }
  range=$(sed -n 's/.* us as simulated, \([0-9.]*\) to \([0-9.]*\) us at the fastest.*/\1 \2/p' <<< "$sim")
  "$SL" compare "$3" last --db "$DB" 2>&1 | awk -v range="$range" '
    /^A: /{for(i=1;i<=NF;i++) if($i=="makespan") a=$(i+1)}
    /^B: /{for(i=1;i<=NF;i++) if($i=="makespan") b=$(i+1)}
    END{ if (a=="" || b=="") { print "- - failed -"; exit }
         r="-"; if (split(range, lh, " ") == 2) r=sprintf("%s-%s%s", lh[1], lh[2], (a>=lh[1] && a<=lh[2]) ? "_(in)" : "")
         printf "%.1f %.1f %+.1f%% %s\n", a, b, (b-a)/a*100, r }'
}
# The capture's host probe (ns) at "start" or "end", empty when it has none
# (captures made before the injection library timed its host).
probe() {
  grep '"k":"host"' "$ROOT/$1/capture.jsonl" 2>/dev/null | grep "\"at\":\"$2\"" |
    sed -n 's/.*"probe_ns":\([0-9]*\).*/\1/p' | head -1
}
# "alike" when A's and B's probes are within 1.3x of each other at the start
# and at the end, else "apart"; "-" without probes (FIDELITY-real, set 23).
hosts() {
  local sa ea sb eb
  sa=$(probe "$1" start) ea=$(probe "$1" end) sb=$(probe "$2" start) eb=$(probe "$2" end)
  [ -n "$sa" ] && [ -n "$ea" ] && [ -n "$sb" ] && [ -n "$eb" ] || { echo "-"; return; }
  awk -v sa="$sa" -v ea="$ea" -v sb="$sb" -v eb="$eb" 'function apart(x, y) { return x > 1.3 * y || y > 1.3 * x }
    END { printf "%s_%.2f/%.2f_%.2f/%.2f\n", (apart(sa, sb) || apart(ea, eb)) ? "apart" : "alike",
          sa / 1e6, ea / 1e6, sb / 1e6, eb / 1e6 }' < /dev/null
}
echo "## (a) Replay: kernel times from the same capture"
echo
echo "| capture | measured median step (us) | simulated (us) | error |"
echo "| --- | ---: | ---: | ---: |"
for name in $(printf '%s\n' "${!run_of[@]}" | sort); do
  read -r m s e _ <<< "$(score "$name" "${run_of[$name]}" "${run_of[$name]}")"
  echo "| $name | $m | $s | $e |"
done
echo
echo "## (b) What-if: another XLA setting's module, kernel times from the first capture"
echo
echo "| program | times from | module of | measured (us) | predicted (us) | error | at the fastest-slowest host (us) | hosts, probes A start/end B start/end (ms) |"
echo "| --- | --- | --- | ---: | ---: | ---: | --- | --- |"
rows=()  # "setting hosts error" per what-if, for the summary
for name in $(printf '%s\n' "${!run_of[@]}" | sort); do
  prog=${name%_*} setting=${name##*_}
  [ "$setting" = def ] && continue
  base=${prog}_def
  [ -n "${run_of[$base]:-}" ] || continue
  h=$(hosts "$base" "$name")
  read -r m s e r <<< "$(score "$name" "${run_of[$base]}" "${run_of[$name]}")"
  echo "| $prog | def | $setting | $m | $s | $e | ${r//_/ } | ${h//_/ } |"
  rows+=("$setting ${h%%_*} $e")
  read -r m s e r <<< "$(score "$base" "${run_of[$name]}" "${run_of[$base]}")"
  echo "| $prog | $setting | def | $m | $s | $e | ${r//_/ } | ${h//_/ } |"
  rows+=("$setting ${h%%_*} $e")
done
echo
echo "By setting and by the hosts' probes (alike: within 1.3x at the start and the end):"
echo
echo "| setting | hosts | what-ifs | within 5% | mean \|error\| |"
echo "| --- | --- | ---: | ---: | ---: |"
printf '%s\n' "${rows[@]}" | awk '$3 ~ /%$/ { e = $3; sub("%", "", e); e += 0; if (e < 0) e = -e
    for (k = 0; k < 2; ++k) { key = $1 " | " (k ? "all" : $2); n[key]++; sum[key] += e; if (e <= 5) in5[key]++ } }
  END { for (key in n) printf "| %s | %d | %d | %.1f%% |\n", key, n[key], in5[key], sum[key] / n[key] }' | sort
