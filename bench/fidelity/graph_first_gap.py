"""The wait after a CUDA graph's first node, in captures made with XLA's
command buffers on (bench/FIDELITY-real.md, "The wait after a graph's first
node"). Per capture in the databases whatif_score.sh wrote (runs named
*_def, *_cbfusion, *_notriton): its graph launches a step, their median
node count, and, over the launches whose first node is short (< 2.5 us, so
that the wait is not hidden behind it), the median time from the first
node's start to the second's and the idle time between them.
  python3 bench/fidelity/graph_first_gap.py STREAMLENS DB...
"""
import collections
import statistics
import subprocess
import sys


def query(streamlens, db, sql):
    out = subprocess.run([streamlens, "query", "--db", db, sql], capture_output=True, text=True).stdout.splitlines()
    if not out:
        return []
    head = out[0].split("\t")
    return [dict(zip(head, line.split("\t"))) for line in out[1:]]


def main():
    streamlens, dbs = sys.argv[1], sys.argv[2:]
    print("| capture | graph launches a step | nodes (median) | first node short | first -> second start (us) | idle between (us) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for db in dbs:
        runs = query(streamlens, db, "select id, name from runs where name not like '%from%' and (name like '%_def' "
                     "or name like '%_cbfusion' or name like '%_notriton')")
        for run in runs:
            events = query(streamlens, db, f"select iteration, correlation, start_ns, end_ns from events where "
                           f"run_id = {run['id']} and iteration >= 0 order by start_ns")
            launches = collections.defaultdict(list)
            for e in events:
                launches[(e["iteration"], e["correlation"])].append(e)
            steps = len({e["iteration"] for e in events}) or 1
            graphs = [v for v in launches.values() if len(v) >= 2]
            short = []
            for v in graphs:
                first, second = v[0], v[1]
                if int(first["end_ns"]) - int(first["start_ns"]) < 2500:
                    short.append(((int(second["start_ns"]) - int(first["start_ns"])) / 1e3,
                                  (int(second["start_ns"]) - int(first["end_ns"])) / 1e3))
            if not graphs:
                continue
            nodes = statistics.median(len(v) for v in graphs)
            if short:
                print(f"| {run['name']} | {len(graphs) / steps:.0f} | {nodes:.0f} | {len(short) / steps:.0f} | "
                      f"{statistics.median(s for s, _ in short):.2f} | {statistics.median(g for _, g in short):.2f} |")
            else:
                print(f"| {run['name']} | {len(graphs) / steps:.0f} | {nodes:.0f} | 0 | - | - |")


if __name__ == "__main__":
    main()
