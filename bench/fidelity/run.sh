#!/usr/bin/env bash
# Simulator fidelity (issue: calibrate from measured H200 runs, score on
# held-out programs). Two steps of one script; cases.txt lists the programs.
#
#   bench/fidelity/run.sh measure STREAMLENS OUT_DIR   # on the GPU machine:
#       every case on the cuda backend (--warmup 2 --iterations 10) into
#       OUT_DIR/measured.db, plus OUT_DIR/gpu.txt
#   bench/fidelity/run.sh score STREAMLENS MEASURED_DB [REPORT=bench/FIDELITY.md]
#       anywhere: calibrate on the `calib` cases only, simulate every `score`
#       case with the stock h200 model and the calibrated one, compare each
#       with its measured run, and write the report.
set -euo pipefail
step=${1:?measure or score}
sl=${2:?path to the streamlens binary}
here=$(cd "$(dirname "$0")" && pwd)
cases="$here/cases.txt"
overrides() { [ "$1" = "-" ] && return 0; local IFS=,; for o in $1; do printf -- '--stream\n%s\n' "$o"; done; }

if [ "$step" = measure ]; then
  out=${3:?output dir}
  backend=${SL_FIDELITY_MEASURED_BACKEND:-cuda}
  mkdir -p "$out"
  export NCCL_NVLS_ENABLE=0
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>/dev/null || true
  grep -v '^#' "$cases" | while read -r role label program streams; do
    [ -n "$role" ] || continue
    mapfile -t extra < <(overrides "$streams")
    echo "== $label"
    timeout 120 "$sl" run "$program" --backend "$backend" --warmup 2 --iterations 10 --init random --seed 1 \
      --db "$out/measured.db" --name "$label" "${extra[@]}" | tail -3 || echo "measure $label failed (rc=$?)"
  done
  exit 0
fi

[ "$step" = score ] || { echo "unknown step $step" >&2; exit 2; }
measured=${3:?measured database}
report=${4:-bench/FIDELITY.md}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$measured" "$work/fidelity.db"
db="$work/fidelity.db"
runs_json="$work/runs.json"
"$sl" runs --db "$db" --json > "$runs_json"
measured_backend=${SL_FIDELITY_MEASURED_BACKEND:-cuda}  # another backend only to test this script
run_of() {  # latest complete measured run named $1
  python3 - "$runs_json" "$1" "$measured_backend" <<'PY'
import json, sys
runs = [r for r in json.load(open(sys.argv[1])) if r.get("name") == sys.argv[2] and r.get("backend") == sys.argv[3]
        and r.get("status") == "complete"]
print(runs[-1]["id"] if runs else "")
PY
}
calib_runs=()
while read -r role label program streams; do
  [ "$role" = calib ] || continue
  id=$(run_of "$label")
  [ -n "$id" ] && calib_runs+=("$id") || echo "no measured run for $label" >&2
done < <(grep -v '^#' "$cases")
"$sl" calibrate "${calib_runs[@]}" --db "$db" -o "$work/calibrated.json" > "$work/calibrate.raw"
# The report names paths relative to the checkout, and the scratch folder as such.
sed -e "s|$PWD/||g" -e "s|$work/|SCRATCH/|g" "$work/calibrate.raw" > "$work/calibrate.txt"
cp "$work/calibrated.json" "$(dirname "$report")/h200_calibrated.json"

rows="$work/rows.jsonl"
: > "$rows"
while read -r role label program streams; do
  [ "$role" = score ] || continue
  measured_id=$(run_of "$label")
  [ -n "$measured_id" ] || { echo "{\"label\": \"$label\", \"missing\": true}" >> "$rows"; continue; }
  mapfile -t extra < <(overrides "$streams")
  for model in stock calibrated; do
    device=h200
    [ $model = calibrated ] && device="$work/calibrated.json"
    "$sl" run "$program" --backend sim --device "$device" --db "$db" --name "$label-$model" "${extra[@]}" \
      --json > "$work/sim.json"
    sim_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"])' "$work/sim.json")
    "$sl" compare "$measured_id" "$sim_id" --db "$db" --json > "$work/cmp.json"
    python3 - "$work/cmp.json" "$label" "$model" "$program" "$streams" >> "$rows" <<'PY'
import json, statistics, sys
c = json.load(open(sys.argv[1]))
errors = [abs(d["duration_b_ns"] - d["duration_a_ns"]) / d["duration_a_ns"]
          for d in c["deltas"] if d.get("in_a") and d.get("in_b") and d["duration_a_ns"] > 0]
print(json.dumps({"label": sys.argv[2], "model": sys.argv[3], "program": sys.argv[4], "streams": sys.argv[5],
                  "measured_ns": c["makespan_a_ns"], "simulated_ns": c["makespan_b_ns"],
                  "iterations": c["a"].get("iterations"), "matched": c["matched"],
                  "median_instruction_error": statistics.median(errors) if errors else None}))
PY
  done
done < <(grep -v '^#' "$cases")

gpus() {  # the measure step's gpu.txt if it is beside the database, else what the measured runs recorded
  if [ -s "$(dirname "$measured")/gpu.txt" ]; then cat "$(dirname "$measured")/gpu.txt"; return; fi
  python3 - "$runs_json" "$measured_backend" <<'PY'
import json, sys
runs = [r for r in json.load(open(sys.argv[1])) if r.get("backend") == sys.argv[2] and r.get("status") == "complete"]
models = sorted({r.get("device_model") or "unknown GPU" for r in runs})
devices = sorted({r.get("devices", 1) for r in runs})
taken = sorted(r["created_at"] for r in runs if r.get("created_at"))
when = f", measured {taken[0]} to {taken[-1]}" if taken else ""
print(f"{' / '.join(models) or 'unknown GPU'} (as the measured runs record it; {' or '.join(map(str, devices))} per run{when})")
PY
}
python3 - "$rows" "$report" "$(gpus)" \
  "$work/calibrate.txt" "${calib_runs[*]}" <<'PY'
import datetime, json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
report, gpu, calib_txt, calib_runs = sys.argv[2], sys.argv[3], open(sys.argv[4]).read(), sys.argv[5]
by = {}
for r in rows:
    by.setdefault(r["label"], {})[r.get("model", "")] = r
def pct(v): return "n/a" if v is None else f"{100 * v:.1f}%"
lines = ["# Simulator fidelity on H200", "",
         f"Produced by `bench/fidelity/run.sh` on {datetime.date.today().isoformat()}; GPUs: {'; '.join(gpu.strip().splitlines())}.",
         "Reproduce: `bench/fidelity/run.sh measure build/app/cli/streamlens OUT` on a 2-GPU H200 machine, then",
         "`bench/fidelity/run.sh score build/app/cli/streamlens OUT/measured.db` anywhere (the measurements behind",
         "this report are `bench/fidelity/h200_measured.db`).",
         "Measured: cuda backend, 2 warm-up + 10 recorded iterations, the median iteration's makespan (CUPTI",
         "kernel times). Simulated: the same program and stream assignment with the stock `h200` model and with",
         "`bench/h200_calibrated.json`, fitted by `streamlens calibrate` on the calibration programs in",
         f"`bench/fidelity/calibration/` only (measured runs {calib_runs}); no scored program was used to fit.",
         "Both sides run with the default `--comm-sms 32`: GEMMs beside a ring collective leave 32 SMs to NCCL.",
         "Per-instruction error: median over matched instructions of |simulated - measured| / measured duration.",
         "The targets hold per program: CTest `fidelity.score.h200_measured` rescores round 1 with the current code",
         "and fails when any program misses (`-DSTREAMLENS_FIDELITY_ALL_ROUNDS=ON` adds every round).",
         "", "| program | streams | measured (us) | stock (us) | stock error | calibrated (us) | calibrated error | median instr. error stock / calibrated |",
         "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
stock_err, cal_err = [], []
for label, m in by.items():
    s, c = m.get("stock"), m.get("calibrated")
    if not s or not c:
        lines.append(f"| {label} | | not measured | | | | | |")
        continue
    meas = s["measured_ns"]
    es = (s["simulated_ns"] - meas) / meas
    ec = (c["simulated_ns"] - meas) / meas
    stock_err.append(abs(es)); cal_err.append(abs(ec))
    lines.append(f"| {label} (`{s['program']}`) | {s['streams']} | {meas / 1e3:.1f} | {s['simulated_ns'] / 1e3:.1f} | {100 * es:+.1f}% | "
                 f"{c['simulated_ns'] / 1e3:.1f} | {100 * ec:+.1f}% | {pct(s['median_instruction_error'])} / {pct(c['median_instruction_error'])} |")
if stock_err:
    lines += ["", f"Mean |makespan error|: stock {100 * statistics.mean(stock_err):.1f}% (max {100 * max(stock_err):.1f}%), "
              f"calibrated {100 * statistics.mean(cal_err):.1f}% (max {100 * max(cal_err):.1f}%). "
              "Targets: calibrated at most 5%, stock at most 15%, for every program."]
lines += ["", "## Calibration output", "", "```", calib_txt.strip(), "```", ""]
open(report, "w").write("\n".join(lines))
print("\n".join(lines))
PY
