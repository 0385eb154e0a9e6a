#!/usr/bin/env python3
"""Runs a braid-bench / braid-bench-mpi command line and checks what it produced.

  run_bench.py [checks] -- COMMAND [ARGS...]

Checks: --expect-exit N (default 0), --stderr-regex RE (with --stderr-matches N: exactly N
matches, e.g. 1 for a message only rank 0 may print), --json FILE (parses it and checks
every key; with --ranks, --rows, --errors N also those values), --csv FILE (header and
field counts), --touch (the JSON's "touch" is true), --algorithms-match-trace (each row's auto(<name>) is what libbraid logged for
that size under BRAID_DEBUG=trace), --zero-copy-from BYTES (rows of at least BYTES say
auto(<name>:zero-copy), smaller ones do not). Exits non-zero with a message on the first failure.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

TOP_KEYS = ["collective", "transport", "ranks", "dtype", "op", "mode", "machine", "build", "rows"]
ROW_KEYS = ["bytes", "count", "algorithm", "avg_us", "min_us", "max_us", "algbw_gbps",
            "busbw_gbps", "errors"]
CSV_HEADER = ROW_KEYS + ["iters", "warmup"]
# libbraid's trace line for a call: "... allreduce #12 (ring, 2 ranks, 1048576 bytes) selected by"
TRACE = re.compile(r"(allreduce|broadcast|barrier) #\d+ \((\w+), (\d+) ranks, (\d+) bytes\) selected by")


def fail(message):
    print(f"run_bench.py: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check_json(path, args):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    for key in TOP_KEYS:
        if key not in doc:
            fail(f"{path}: no '{key}'")
    for key in ["hostname", "nproc", "cpu_model"]:
        if key not in doc["machine"]:
            fail(f"{path}: machine has no '{key}'")
    for key in ["braid_version", "compiler", "build_type"]:
        if key not in doc["build"]:
            fail(f"{path}: build has no '{key}'")
    rows = doc["rows"]
    if not rows:
        fail(f"{path}: no rows")
    for row in rows:
        for key in ROW_KEYS:
            if key not in row:
                fail(f"{path}: row {row} has no '{key}'")
        if not row["avg_us"] > 0:
            fail(f"{path}: row {row['bytes']}: avg_us {row['avg_us']} is not positive")
        if not row["min_us"] <= row["avg_us"] * (1 + 1e-9) <= row["max_us"] * (1 + 2e-9):
            fail(f"{path}: row {row['bytes']}: not min <= avg <= max")
    if args.ranks is not None and doc["ranks"] != args.ranks:
        fail(f"{path}: ranks {doc['ranks']}, expected {args.ranks}")
    if args.rows is not None and len(rows) != args.rows:
        fail(f"{path}: {len(rows)} rows, expected {args.rows}")
    if args.touch and doc.get("touch") is not True:
        fail(f"{path}: touch is not true")
    if args.errors is not None:
        if doc.get("check") is not True:
            fail(f"{path}: check is not true")
        bad = [(r["bytes"], r["errors"]) for r in rows if r["errors"] != args.errors]
        if bad:
            fail(f"{path}: (bytes, errors) with errors != {args.errors}: {bad}")
    print(f"run_bench.py: {path}: {len(rows)} rows, {doc['collective']} on {doc['ranks']} ranks "
          f"over {doc['transport']}: ok")
    return doc


def check_csv(path, args):
    with open(path, newline="") as f:
        lines = list(csv.reader(f))
    if not lines or lines[0] != CSV_HEADER:
        fail(f"{path}: header {lines[:1]} is not {CSV_HEADER}")
    if len(lines) < 2:
        fail(f"{path}: no rows")
    for line in lines[1:]:
        if len(line) != len(CSV_HEADER):
            fail(f"{path}: row {line} has {len(line)} fields")
    if args.rows is not None and len(lines) - 1 != args.rows:
        fail(f"{path}: {len(lines) - 1} rows, expected {args.rows}")
    if args.errors is not None and any(int(line[8]) != args.errors for line in lines[1:]):
        fail(f"{path}: errors column is not all {args.errors}")
    print(f"run_bench.py: {path}: {len(lines) - 1} rows: ok")


def check_algorithms(doc, stderr):
    logged = {}
    for coll, algo, _ranks, nbytes in TRACE.findall(stderr):
        if coll == doc["collective"]:
            logged.setdefault(int(nbytes), set()).add(algo)
    if not logged:
        fail("no libbraid trace lines (is BRAID_DEBUG=trace set?)")
    for row in doc["rows"]:
        m = re.fullmatch(r"auto\((\w+)(?::zero-copy|:single-copy)?\)|(\w+)", row["algorithm"])
        if not m:
            fail(f"algorithm '{row['algorithm']}' is neither auto(<name>) nor a name")
        name = m.group(1) or m.group(2)
        ran = logged.get(row["bytes"], set())
        if name not in ran:
            fail(f"{row['bytes']} bytes: braid-bench says {name}, libbraid ran {sorted(ran)}")
    print(f"run_bench.py: algorithm column matches libbraid's trace for {len(doc['rows'])} sizes")


def check_zero_copy(doc, from_bytes):
    for row in doc["rows"]:
        went = row["algorithm"].endswith(":zero-copy)")
        if went != (row["bytes"] >= from_bytes):
            fail(f"{row['bytes']} bytes: algorithm '{row['algorithm']}', expected "
                 f"{'' if row['bytes'] >= from_bytes else 'no '}zero-copy from {from_bytes} bytes")
    print(f"run_bench.py: zero-copy from {from_bytes} bytes on, as expected")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--expect-exit", type=int, default=0)
    p.add_argument("--stderr-regex")
    p.add_argument("--stderr-matches", type=int)
    p.add_argument("--json")
    p.add_argument("--csv")
    p.add_argument("--ranks", type=int)
    p.add_argument("--rows", type=int)
    p.add_argument("--errors", type=int)
    p.add_argument("--touch", action="store_true", help="the JSON says the send buffers were "
                   "rewritten before every call (braid-bench --touch)")
    p.add_argument("--algorithms-match-trace", action="store_true")
    p.add_argument("--zero-copy-from", type=int)
    p.add_argument("--algorithm", help="every row's algorithm column says this")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        fail("no command")
    for path in (args.json, args.csv):
        if path and os.path.exists(path):
            os.remove(path)

    print("run_bench.py: running:", " ".join(command))
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    sys.stdout.write(proc.stdout)
    # Trace output can be long; show its tail only.
    err_lines = proc.stderr.splitlines()
    if len(err_lines) > 60:
        print(f"[stderr: {len(err_lines)} lines, last 60 shown]")
    print("\n".join(err_lines[-60:]))
    if proc.returncode != args.expect_exit:
        fail(f"exit status {proc.returncode}, expected {args.expect_exit}")
    if args.stderr_regex:
        matches = len(re.findall(args.stderr_regex, proc.stderr, re.MULTILINE))
        if matches == 0:
            fail(f"stderr does not match {args.stderr_regex!r}")
        if args.stderr_matches is not None and matches != args.stderr_matches:
            fail(f"stderr matches {args.stderr_regex!r} {matches} times, expected "
                 f"{args.stderr_matches}")
    doc = check_json(args.json, args) if args.json else None
    if args.csv:
        check_csv(args.csv, args)
    if args.algorithms_match_trace:
        if doc is None:
            fail("--algorithms-match-trace needs --json")
        check_algorithms(doc, proc.stderr)
    if args.algorithm is not None:
        if doc is None:
            fail("--algorithm needs --json")
        for row in doc["rows"]:
            if row["algorithm"] != args.algorithm:
                fail(f"{row['bytes']} bytes: algorithm '{row['algorithm']}', expected "
                     f"'{args.algorithm}'")
        print(f"run_bench.py: every row ran {args.algorithm}")
    if args.zero_copy_from is not None:
        if doc is None:
            fail("--zero-copy-from needs --json")
        check_zero_copy(doc, args.zero_copy_from)
    print("run_bench.py: ok")


if __name__ == "__main__":
    main()
