#!/usr/bin/env python3
"""Runs a Google Benchmark micro benchmark (bench/micro/) with JSON output and checks it.

    check_micro.py --json FILE --expect reduce|p2p|cma -- PROGRAM [benchmark flags...]

The program must exit 0 and report no benchmark with an error. reduce: every dtype x op at
each of the 4 buffer sizes, and memcpy at those and every power of two from 1 MiB to 64 MiB
(bench/compare's single-core memcpy bandwidth). p2p: for at least one transport plugin,
pingpong and stream at every size from 8 B to 4 MiB. cma: cma_read at 256 KiB, 4 MiB and 64 MiB
in 64 KiB and 256 KiB calls, and memcpy at those sizes.
"""

import argparse
import json
import subprocess
import sys

DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
          "float32", "float64"]
OPS = ["sum", "prod", "min", "max"]
REDUCE_SIZES = [8 << 10, 256 << 10, 4 << 20, 64 << 20]
MEMCPY_SIZES = sorted(set(REDUCE_SIZES + [1 << k for k in range(20, 27)]))  # + 1 .. 64 MiB
P2P_SIZES = [8 << i for i in range(20)]  # 8 B .. 4 MiB


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json", required=True)
    p.add_argument("--expect", choices=["reduce", "p2p", "cma"], required=True)
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    command += [f"--benchmark_out={args.json}", "--benchmark_out_format=json"]
    print("$ " + " ".join(command), flush=True)
    rc = subprocess.run(command).returncode
    failures = [] if rc == 0 else [f"exit status {rc}"]
    try:
        with open(args.json) as f:
            benchmarks = json.load(f)["benchmarks"]
    except (OSError, ValueError, KeyError) as e:
        print(f"FAIL: no benchmark JSON: {e}")
        return 1
    names = set()
    for b in benchmarks:
        name = b["name"].removesuffix("/real_time")
        names.add(name)
        if b.get("error_occurred"):
            failures.append(f"{name}: {b.get('error_message')}")
    if args.expect == "reduce":
        expected = [f"memcpy/{s}" for s in MEMCPY_SIZES]
        expected += [f"kernels/{d}/{o}/{s}" for d in DTYPES for o in OPS for s in REDUCE_SIZES]
    elif args.expect == "cma":
        sizes = [256 << 10, 4 << 20, 64 << 20]
        expected = [f"cma_read/{s}/{c}" for s in sizes for c in (64 << 10, 256 << 10)]
        expected += [f"memcpy/{s}" for s in sizes]
    else:
        transports = sorted({n.split("/")[1] for n in names if n.startswith("pingpong/")})
        if not transports:
            failures.append("no transport was measured")
        expected = [f"{k}/{t}/{s}" for t in transports for k in ("pingpong", "stream")
                    for s in P2P_SIZES]
    failures += [f"missing benchmark {n}" for n in expected if n not in names]
    for f in failures:
        print(f"FAIL: {f}")
    if not failures:
        print(f"{len(names)} benchmarks, all present and without errors")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
