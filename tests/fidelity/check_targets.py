#!/usr/bin/env python3
"""Checks a bench/fidelity/run.sh score report against bench/FIDELITY.md's
targets: every scored program within 5% (calibrated model) and 15% (stock
model) of its measured makespan. Every `score` case of cases.txt must have a
row; a row "not measured" fails unless --allow-missing names the label.

    check_targets.py REPORT.md CASES.txt [--allow-missing LABEL,...]
"""
import re
import sys

CALIBRATED_TARGET = 5.0
STOCK_TARGET = 15.0


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    report, cases = argv[1], argv[2]
    allowed = set()
    if len(argv) == 5 and argv[3] == "--allow-missing":
        allowed = set(argv[4].split(","))
    labels = [line.split()[1] for line in open(cases) if line.startswith("score ")]
    rows = {}
    for line in open(report):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 8 or cells[0] in ("program", "---"):
            continue
        rows[cells[0].split(" (`")[0]] = cells
    failures = []
    scored = 0
    for label in labels:
        cells = rows.get(label)
        if cells is None or cells[2] == "not measured":
            if label not in allowed:
                failures.append(f"{label}: not scored")
            continue
        scored += 1
        for model, column, target in (("stock", 4, STOCK_TARGET), ("calibrated", 6, CALIBRATED_TARGET)):
            m = re.fullmatch(r"([+-]?\d+(?:\.\d+)?)%", cells[column])
            if not m:
                failures.append(f"{label}: {model} error '{cells[column]}' is not a percentage")
                continue
            error = float(m.group(1))
            verdict = "ok" if abs(error) <= target else f"FAIL (target at most {target:g}%)"
            print(f"{label:28} {model:10} {error:+6.1f}%  {verdict}")
            if abs(error) > target:
                failures.append(f"{label}: {model} model {error:+.1f}%, target at most {target:g}%")
    if failures:
        print("\n".join(["", f"{report}: {len(failures)} miss(es):"] + failures))
        return 1
    print(f"{report}: {scored} of {len(labels)} programs scored, all within the targets")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
