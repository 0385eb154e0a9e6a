#!/usr/bin/env bash
# bench/compare over every collective (--collectives all): a short sweep (8 B .. 1 KiB, braid's
# automatic selection, 2 ranks) against every MPI built, and for each collective a table
# <collective>_2ranks.md with a row per size, a number in every latency column and the
# braid ÷ best MPI ratio; manifest.json with every run ok; the report's machine profile
# (braid-tune, before and after the runs). Then the same in --touch mode for allreduce and
# broadcast: every system (braid-bench and its MPI twins) runs with --touch, and the tables say so.
#   check_compare_all.sh COMPARE BUILD_DIR OUT
set -euo pipefail
compare=$1 build=$2 out=$3
rm -rf "$out"
python3 "$compare" --quick --collectives all --ranks 2 --no-algorithms --no-mem-alloc \
  --max-bytes 1K --no-plots --build-dir "$build" --no-build --no-install --out "$out"
touch_out="$out/touch"
python3 "$compare" --quick --collectives allreduce,broadcast --ranks 2 --no-algorithms \
  --no-mem-alloc --max-bytes 1K --no-plots --build-dir "$build" --no-build --no-install \
  --touch --repeat 2 --out "$touch_out"
status=0
python3 - "$out" "$touch_out" <<'PY' || status=1
import json, os, re, sys
out, touch_out = sys.argv[1], sys.argv[2]
for d in (out, touch_out):
    manifest = json.load(open(os.path.join(d, "manifest.json")))
    bad = [r for r in manifest["runs"] if r.get("status") != "ok"]
    if bad:
        sys.exit(f"FAIL: runs in {d} not ok: {bad}")
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
report = open(os.path.join(out, "report.md")).read()
if len(re.findall(r"cache-line round trip: [0-9]+ ns", report)) != 2:
    sys.exit("FAIL: report.md lacks the machine profile before and after the runs")
print("PASS: a table for every collective, and the machine profile")
runs = [l for l in open(os.path.join(touch_out, "commands.sh"))
        if "braid-bench" in l and not l.lstrip().startswith("#")]
if not runs or any("--touch" not in l for l in runs):
    sys.exit(f"FAIL: a run without --touch: {[l for l in runs if '--touch' not in l]}")
programs = {re.search(r"braid-bench[-a-z]*", l).group(0) for l in runs}
print(f"--touch runs of {sorted(programs)}")
for c in ["allreduce", "broadcast"]:
    text = open(os.path.join(touch_out, f"{c}_2ranks.md")).read()
    if "(`--touch`)" not in text:
        sys.exit(f"FAIL: {c}_2ranks.md does not say its send buffers were rewritten")
print("PASS: --touch mode over braid and every MPI")
# Two runs of each: the run-to-run spread section holds a row per system, each counting the
# cells where its first run was slower than its second (and the other way), as recomputed
# here from the runs' JSON.
manifest = json.load(open(os.path.join(touch_out, "manifest.json")))
report = open(os.path.join(touch_out, "report.md")).read()
if "\n## Run-to-run spread: each system against itself\n" not in report:
    sys.exit("FAIL: --repeat 2 report has no run-to-run spread section")
section = report.split("\n## Run-to-run spread: each system against itself\n", 1)[1]
section = section.split("\n## ", 1)[0]
table = {}
for line in section.splitlines():
    cells = [x.strip() for x in line.strip().strip("|").split("|")]
    if line.startswith("| ") and len(cells) == 9 and cells[1].isdigit():
        table[cells[0]] = cells
systems = {}
for r in manifest["runs"]:
    if r["status"] == "ok":
        systems.setdefault(r["label"], {}).setdefault((r["collective"], r["rep"]), r["json"])
for label, jsons in systems.items():
    if label not in table:
        sys.exit(f"FAIL: no spread row for {label}: {sorted(table)}")
    slower = faster = cells = 0
    for c in ["allreduce", "broadcast"]:
        rows = [{row["bytes"]: row["avg_us"]
                 for row in json.load(open(os.path.join(touch_out, jsons[(c, rep)])))["rows"]}
                for rep in (1, 2)]
        for size, first in rows[0].items():
            cells += 1
            slower += first > rows[1][size]
            faster += rows[1][size] > first
    row = table[label]
    if [int(row[1]), int(row[2]), int(row[5])] != [cells, slower, faster]:
        sys.exit(f"FAIL: spread row {row}: expected {cells} cells, {slower} slower in run 1, "
                 f"{faster} in run 2")
    n = [int(x) for x in row[2:8]]
    if not n[2] <= n[1] <= n[0] or not n[5] <= n[4] <= n[3]:
        sys.exit(f"FAIL: spread row {row}: counts above 1.25 / 1.10 / 1 do not nest")
braid_rows = [k for k in table if k.endswith("÷ best MPI")]
if not braid_rows:
    sys.exit(f"FAIL: no braid ÷ best MPI row in the spread section: {sorted(table)}")
print(f"PASS: run-to-run spread, {len(table)} rows: {sorted(table)}")
PY
exit $status
