#!/usr/bin/env bash
# bench/compare over every collective (--collectives all): a short sweep (8 B .. 1 KiB, braid's
# automatic selection, 2 ranks) against every MPI built, and for each collective a table
# <collective>_2ranks.md with a row per size, a number in every latency column and the
# braid ÷ best MPI ratio; manifest.json with every run ok.
#   check_compare_all.sh COMPARE BUILD_DIR OUT
set -euo pipefail
compare=$1 build=$2 out=$3
rm -rf "$out"
python3 "$compare" --quick --collectives all --ranks 2 --no-algorithms --no-mem-alloc \
  --max-bytes 1K --no-plots --build-dir "$build" --no-build --no-install --out "$out"
status=0
python3 - "$out" <<'PY' || status=1
import json, os, re, sys
out = sys.argv[1]
manifest = json.load(open(os.path.join(out, "manifest.json")))
bad = [r for r in manifest["runs"] if r.get("status") != "ok"]
if bad:
    sys.exit(f"FAIL: runs not ok: {bad}")
colls = ["allreduce", "broadcast", "reduce", "allgather", "allgatherv", "reduce_scatter",
         "alltoall", "alltoallv", "gather", "scatter", "barrier"]
for c in colls:
    path = os.path.join(out, f"{c}_2ranks.md")
    if not os.path.exists(path):
        sys.exit(f"FAIL: no {path}")
    rows = [l for l in open(path) if re.match(r"^\| *[0-9]", l)]
    head = [l for l in open(path) if l.startswith("| size")]
    if not rows or not head:
        sys.exit(f"FAIL: {path} has no latency table")
    if "best MPI" not in head[0]:
        sys.exit(f"FAIL: {path}: no ratio to the best MPI in {head[0].strip()}")
    cells = [x.strip() for x in rows[0].strip().strip("|").split("|")]
    if sum(bool(re.match(r"^[0-9.]+$", x)) for x in cells) < 3:
        sys.exit(f"FAIL: {path}: first row lacks numbers: {rows[0].strip()}")
    print(f"{c}: {len(rows)} rows; {rows[0].strip()}")
print("PASS: a table for every collective")
PY
exit $status
