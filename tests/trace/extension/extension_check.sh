#!/usr/bin/env bash
# libstreamlens_sqlite in real hosts: the sqlite3 shell (.load) or python3's
# sqlite3 module (load_extension) must count every event of a recorded
# database, as the store itself reports them.
#   extension_check.sh shell|python|pandas STREAMLENS EXTENSION SAMPLE
# Exit 77 (skipped) when the host is missing or cannot load extensions.
set -euo pipefail
host=$1 bin=$2 ext=${3%.so} sample=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db=$dir/s.db
"$bin" run "$sample" --backend sim --db "$db" >/dev/null
"$bin" run "$sample" --backend sim --db "$db" --stream gemm1=1 >/dev/null
expected=$("$bin" runs --db "$db" --json | python3 -c 'import json,sys; print(sum(r["events"] for r in json.load(sys.stdin)))')
[ "$expected" -gt 0 ] || { echo "no events recorded" >&2; exit 1; }

case $host in
  shell)
    command -v sqlite3 >/dev/null || { echo "no sqlite3 shell (scripts/install-deps installs it)"; exit 77; }
    got=$(sqlite3 -readonly "$db" ".load $ext" "select count(*) from events;")
    by_run=$(sqlite3 -readonly "$db" ".load $ext" "select count(*) from events where run_id = 2;")
    ;;
  python)
    py=""
    for p in /usr/bin/python3 python3; do
      if "$p" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension' 2>/dev/null; then py=$p; break; fi
    done
    [ -n "$py" ] || { echo "no python3 with sqlite3 extension loading"; exit 77; }
    read -r got by_run < <("$py" - "$db" "$ext" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.enable_load_extension(True)
c.load_extension(sys.argv[2])
print(c.execute("select count(*) from events").fetchone()[0],
      c.execute("select count(*) from events where run_id = 2").fetchone()[0])
PY
)
    ;;
  pandas)  # the README's example
    /usr/bin/python3 -c 'import pandas' 2>/dev/null || { echo "no pandas for /usr/bin/python3"; exit 77; }
    read -r got by_run < <(/usr/bin/python3 - "$db" "$ext" <<'PY'
import sqlite3, sys
import pandas as pd
conn = sqlite3.connect(sys.argv[1])
conn.enable_load_extension(True)
conn.load_extension(sys.argv[2])
df = pd.read_sql_query("select * from events", conn)
busy = df.groupby(["device", "stream"]).dur_ns.sum()
assert (busy > 0).all(), busy
print(len(df), len(df[df.run_id == 2]))
PY
)
    ;;
  *) echo "unknown host $host" >&2; exit 2 ;;
esac
echo "store: $expected events; $host: $got (run 2: $by_run)"
[ "$got" = "$expected" ] || { echo "count differs" >&2; exit 1; }
[ "$by_run" -gt 0 ] && [ "$by_run" -lt "$got" ] || { echo "run_id filter wrong" >&2; exit 1; }
