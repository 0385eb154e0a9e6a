#!/usr/bin/env python3
"""Runs `bench/compare --quick` into a fresh directory and checks what it wrote.

    check_compare.py --compare bench/compare --build-dir B --out DIR --mpi-programs "a;b"

--mpi-programs lists the MPI benchmark programs CMake built (braid-bench-mpi,
braid-bench-mpich); when it is empty there is no baseline to compare with and the test is
skipped (exit 77). Otherwise the compare run must succeed and leave:
  - manifest.json with every run "ok", at least one braid transport and one MPI;
  - json/<run>.json for every run, each with the quick sweep's rows and no wrong elements;
  - <collective>_<N>ranks.md for allreduce and broadcast at 2 and 4 ranks, whose latency table
    has the columns size, braid-<t>, auto picks, braid-<t> <algorithm> for every algorithm,
    one per MPI, best MPI and braid-<t> ÷ best MPI, and a row per size with a number in every
    latency column;
  - plots/<collective>_<N>ranks_{latency,busbw}.png, real PNG files;
  - report.md holding every table.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
ALGORITHMS = {
    "allreduce": ["recursive_doubling", "rabenseifner", "ring"],
    "broadcast": ["binomial", "scatter_allgather"],
}
RANKS = [2, 4]
QUICK_SIZES = 14  # 8 B .. 64 KiB, doubling
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
    return cond


def table_after(md, heading_prefix):
    """The first Markdown table after the line starting with heading_prefix (or the first)."""
    lines = md.splitlines()
    start = 0
    if heading_prefix:
        start = next((i for i, l in enumerate(lines) if l.startswith(heading_prefix)), None)
        if start is None:
            return None
    rows = []
    for line in lines[start:]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compare", required=True)
    p.add_argument("--build-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--mpi-programs", default="")
    args = p.parse_args()

    programs = [x for x in args.mpi_programs.split(";") if x]
    if not programs:
        print("SKIPPED: no MPI benchmark program was built (neither braid-bench-mpi nor "
              "braid-bench-mpich: install libopenmpi-dev openmpi-bin and/or libmpich-dev mpich "
              "and reconfigure), so bench/compare has no baseline to compare braid with")
        return SKIP

    shutil.rmtree(args.out, ignore_errors=True)
    cmd = [sys.executable, args.compare, "--quick", "--build-dir", args.build_dir, "--no-build",
           "--no-install", "--out", args.out]
    print("$ " + " ".join(cmd), flush=True)
    rc = subprocess.run(cmd).returncode
    check(rc == 0, f"bench/compare exited {rc}")

    manifest_path = os.path.join(args.out, "manifest.json")
    if not check(os.path.exists(manifest_path), "no manifest.json"):
        return report()
    with open(manifest_path) as f:
        manifest = json.load(f)
    transports = manifest["transports"]
    mpis = [m["label"] for m in manifest["mpi"]]
    check(transports, "no braid transport was run")
    check(mpis, f"no MPI was run although {programs} were built")
    for note in manifest["notes"]:
        print(f"note from compare: {note}")

    for run in manifest["runs"]:
        check(run["status"] == "ok", f"run {run['json']}: {run['status']}")
        path = os.path.join(args.out, run["json"])
        if not check(os.path.exists(path), f"missing {run['json']}"):
            continue
        with open(path) as f:
            data = json.load(f)
        check(len(data["rows"]) == QUICK_SIZES,
              f"{run['json']}: {len(data['rows'])} rows, expected {QUICK_SIZES}")
        check(all(r["errors"] == 0 for r in data["rows"]), f"{run['json']}: wrong elements")
        check(data["check"] is True, f"{run['json']}: not run with --check")
        check(data["ranks"] == run["ranks"], f"{run['json']}: ranks {data['ranks']}")
    expected_runs = manifest["repeat"] * sum(
        len(RANKS) * (len(transports) * (1 + len(ALGORITHMS[c])) + len(mpis)) for c in ALGORITHMS)
    check(len(manifest["runs"]) == expected_runs,
          f"{len(manifest['runs'])} runs, expected {expected_runs}")

    report_path = os.path.join(args.out, "report.md")
    report_md = open(report_path).read() if check(os.path.exists(report_path),
                                                  "no report.md") else ""
    for ranks in RANKS:
        for coll, algos in ALGORITHMS.items():
            name = f"{coll}_{ranks}ranks"
            md_path = os.path.join(args.out, name + ".md")
            if not check(os.path.exists(md_path), f"missing {name}.md"):
                continue
            md = open(md_path).read()
            check(md.strip() in report_md, f"report.md does not hold {name}.md")
            table = table_after(md, "## ")
            if not check(table and len(table) >= 2, f"{name}.md: no table"):
                continue
            header, body = table[0], table[2:]
            expected = ["size"]
            for t in transports:
                expected += [f"braid-{t}", "auto picks"]
            for t in transports:
                expected += [f"braid-{t} {a}" for a in algos]
            expected += mpis + ["best MPI"] + [f"braid-{t} ÷ best MPI" for t in transports]
            check(header == expected, f"{name}.md: columns {header}, expected {expected}")
            check(len(body) == QUICK_SIZES, f"{name}.md: {len(body)} rows, expected "
                  f"{QUICK_SIZES}")
            number = re.compile(r"^\d+(\.\d+)?$")
            for row in body:
                check(len(row) == len(header), f"{name}.md: size {row[0]}: {len(row)} cells")
                for col, cell in zip(header, row):
                    if col == "auto picks":
                        # The node-local paths are picked by topology and not forced by compare.
                        ok = cell in algos + ["shm"] or cell.startswith("hierarchical+")
                    elif col == "best MPI":
                        ok = cell in mpis
                    elif col == "size":
                        ok = re.match(r"^\d+ (B|KiB)$", cell)
                    else:
                        ok = number.match(cell)
                    check(ok, f"{name}.md: size {row[0]}: column '{col}' is '{cell}'")
            for metric in ("latency", "busbw"):
                png = os.path.join(args.out, "plots", f"{name}_{metric}.png")
                if check(os.path.exists(png), f"missing plots/{name}_{metric}.png"):
                    with open(png, "rb") as f:
                        head = f.read(8)
                    check(head == PNG_MAGIC and os.path.getsize(png) > 5000,
                          f"plots/{name}_{metric}.png is not a PNG plot")
    return report()


def report():
    if failures:
        for f in failures:
            print(f"FAIL: {f}")
        return 1
    print("bench/compare --quick: every JSON, table and plot is there")
    return 0


if __name__ == "__main__":
    sys.exit(main())
