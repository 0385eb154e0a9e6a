#!/usr/bin/env python3
"""Runs `bench/compare --quick` into a fresh directory and checks what it wrote.

    check_compare.py --compare bench/compare --build-dir B --out DIR --mpi-programs "a;b"

--mpi-programs lists the MPI benchmark programs CMake built (braid-bench-mpi,
braid-bench-mpich); when it is empty there is no baseline to compare with and the test is
skipped (exit 77). Otherwise the compare run must succeed and leave:
  - manifest.json with every run "ok", at least one braid transport and one MPI;
  - json/<run>.json for every run, each with the quick sweep's rows and no wrong elements;
  - for every transport a braid-<t>-mem_alloc run with BRAID_BENCH_BUFFER_NODE=local in its
    environment (manifest.json and commands.sh);
  - <collective>_<N>ranks.md for allreduce and broadcast at 2 and 4 ranks, whose latency table
    has the columns size, braid-<t>, auto picks, braid-<t> mem_alloc, auto picks,
    braid-<t> <algorithm> for every algorithm, one per MPI, best MPI, braid-<t> ÷ best MPI and
    braid-<t> mem_alloc ÷ best MPI, and a row per size with a number in every latency column;
    and whose busbw table has a column per system and, when braid-micro-reduce was built,
    memcpy (1 core) (a number at 8 KiB, the one quick size it measures) and <braid auto> ÷
    memcpy ('-' below 1 MiB, i.e. everywhere in the quick sweep);
  - memcpy.json from braid-micro-reduce when it was built; otherwise report.md says it was not;
  - plots/<collective>_<N>ranks_{latency,busbw}.png, real PNG files;
  - report.md holding every table and, last, a Targets section with a met / missed line per
    braid auto system for each target the quick sweep covers, and saying the parts it cannot
    evaluate (the memcpy target: no size of 4 MiB or more; 128 KiB .. 64 MiB) are not evaluated.
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
    "allreduce": ["recursive_doubling", "rabenseifner", "ring", "shm"],
    "broadcast": ["binomial", "scatter_allgather", "shm"],
}
RANKS = [2, 4]
QUICK_SIZES = 14  # 8 B .. 64 KiB, doubling
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

failures = []


def parse_size(text):
    """Bytes of a table's size cell ("16 KiB", "8 B")."""
    number, unit = text.split()
    return int(number) << {"B": 0, "KiB": 10, "MiB": 20}[unit]


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
        len(RANKS) * (len(transports) * (2 + len(ALGORITHMS[c])) + len(mpis)) for c in ALGORITHMS)
    check(len(manifest["runs"]) == expected_runs,
          f"{len(manifest['runs'])} runs, expected {expected_runs}")
    commands = open(os.path.join(args.out, "commands.sh")).read()
    for t in transports:
        mem = [r for r in manifest["runs"] if r["system"] == f"braid-{t}-mem_alloc"]
        check(len(mem) == manifest["repeat"] * len(RANKS) * len(ALGORITHMS),
              f"braid-{t}-mem_alloc: {len(mem)} runs")
        for r in mem:
            check(r["kind"] == "braid-auto" and r["label"] == f"braid-{t} mem_alloc",
                  f"{r['json']}: kind {r['kind']}, label {r['label']}")
            check(r["env"].get("BRAID_BENCH_BUFFER_NODE") == "local",
                  f"{r['json']}: env {r['env']} lacks BRAID_BENCH_BUFFER_NODE=local")
        plain = [r for r in manifest["runs"] if r["system"] == f"braid-{t}"]
        check(all("BRAID_BENCH_BUFFER_NODE" not in r["env"] for r in plain),
              f"braid-{t} runs with BRAID_BENCH_BUFFER_NODE")
    check(commands.count("BRAID_BENCH_BUFFER_NODE=local ") ==
          manifest["repeat"] * len(RANKS) * len(ALGORITHMS) * len(transports),
          "commands.sh: not every mem_alloc run has BRAID_BENCH_BUFFER_NODE=local")

    # The single-core memcpy bandwidth: measured when braid-micro-reduce was built.
    have_memcpy = os.path.exists(os.path.join(args.build_dir, "bin", "braid-micro-reduce"))
    memcpy = manifest.get("memcpy") or {}
    if have_memcpy:
        check(memcpy.get("status") == "ok", f"memcpy measurement: {memcpy.get('status')}")
        check(os.path.exists(os.path.join(args.out, "memcpy.json")), "no memcpy.json")
        sizes = {int(b) for b in memcpy.get("gbps", {})}
        wanted = {8 << 10, 256 << 10} | {1 << k for k in range(20, 27)}
        check(sizes == wanted, f"memcpy measured at {sorted(sizes)}, expected {sorted(wanted)}")
        check("--benchmark_filter=^memcpy/" in commands and "braid-micro-reduce" in commands,
              "commands.sh lacks the memcpy command")
    else:
        print("note: braid-micro-reduce was not built: no memcpy columns expected")
    autos = [lab for t in transports for lab in (f"braid-{t}", f"braid-{t} mem_alloc")]

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
            for a in autos:
                expected += [a, "auto picks"]
            for t in transports:
                expected += [f"braid-{t} {a}" for a in algos]
            expected += mpis + ["best MPI"] + [f"{a} ÷ best MPI" for a in autos]
            expected += [f"braid-{t} ÷ best forced" for t in transports]
            check(header == expected, f"{name}.md: columns {header}, expected {expected}")
            check(re.search(r"^- braid-\S+ is within 1\.10x of its fastest forced algorithm at "
                            r"\d+ of \d+ sizes \(worst [0-9.]+ at ", md, re.M),
                  f"{name}.md: no line on how near the automatic selection is to the forced ones")
            check(len(body) == QUICK_SIZES, f"{name}.md: {len(body)} rows, expected "
                  f"{QUICK_SIZES}")
            number = re.compile(r"^\d+(\.\d+)?$")
            for row in body:
                check(len(row) == len(header), f"{name}.md: size {row[0]}: {len(row)} cells")
                system = None
                for col, cell in zip(header, row):
                    if col in autos:
                        system = col
                    if col == "auto picks":
                        # The node-local paths are picked by topology and not forced by compare.
                        # On braid_mem_alloc buffers the single-node path goes in place from
                        # 16 KiB (collectives/intranode/direct.hpp), and braid-bench says so;
                        # a broadcast's root whose cores are shared by more ranks than they
                        # number (unbound ranks, more than the CPUs) only from 1 MiB
                        # (root_mapped_min), past these sizes.
                        zero_copy_from = 16 << 10
                        if coll == "broadcast" and ranks > len(os.sched_getaffinity(0)):
                            zero_copy_from = 1 << 20
                        zero_copy = (system is not None and system.endswith(" mem_alloc") and
                                     cell.startswith("shm") and
                                     parse_size(row[0]) >= zero_copy_from)
                        # From 4 KiB the node path may copy straight out of a peer's ordinary
                        # buffer (single copy through CMA, when the ranks measured it cheaper),
                        # and braid-bench says so too.
                        single_copy = parse_size(row[0]) >= 4 << 10 and cell == "shm:single-copy"
                        if zero_copy:
                            ok = cell == "shm:zero-copy"
                        else:
                            ok = (cell in algos + ["shm"] or cell.startswith("hierarchical+") or
                                  single_copy)
                    elif col == "best MPI":
                        ok = cell in mpis
                    elif col == "size":
                        ok = re.match(r"^\d+ (B|KiB)$", cell)
                    else:
                        ok = number.match(cell)
                    check(ok, f"{name}.md: size {row[0]}: column '{col}' is '{cell}'")
            check_busbw(name, md, autos, transports, algos, mpis, have_memcpy)
            for metric in ("latency", "busbw"):
                png = os.path.join(args.out, "plots", f"{name}_{metric}.png")
                if check(os.path.exists(png), f"missing plots/{name}_{metric}.png"):
                    with open(png, "rb") as f:
                        head = f.read(8)
                    check(head == PNG_MAGIC and os.path.getsize(png) > 5000,
                          f"plots/{name}_{metric}.png is not a PNG plot")
    check_targets(report_md, autos, have_memcpy, transports)
    return report()


def check_busbw(name, md, autos, transports, algos, mpis, have_memcpy):
    """The busbw table: a number per system; memcpy at 8 KiB only, braid ÷ memcpy nowhere."""
    table = table_after(md, "Bus bandwidth")
    if not check(table and len(table) >= 2, f"{name}.md: no busbw table"):
        return
    header, body = table[0], table[2:]
    expected = ["size"] + autos + [f"braid-{t} {a}" for t in transports for a in algos] + mpis
    if have_memcpy:
        expected += ["memcpy (1 core)"] + [f"{a} ÷ memcpy" for a in autos]
    check(header == expected, f"{name}.md: busbw columns {header}, expected {expected}")
    check(len(body) == QUICK_SIZES, f"{name}.md: {len(body)} busbw rows")
    number = re.compile(r"^\d+(\.\d+)?$")
    for row in body:
        if not check(len(row) == len(header), f"{name}.md: busbw {row[0]}: {len(row)} cells"):
            continue
        for col, cell in zip(header[1:], row[1:]):
            if col == "memcpy (1 core)":
                ok = number.match(cell) if row[0] == "8 KiB" else cell == "-"
            elif col.endswith("÷ memcpy"):
                ok = cell == "-"  # only from 1 MiB up
            else:
                ok = number.match(cell)
            check(ok, f"{name}.md: busbw {row[0]}: column '{col}' is '{cell}'")


def check_targets(report_md, autos, have_memcpy, transports):
    """report.md ends with the Targets section: a met / missed line per braid auto system for
    every target the quick sweep (2 and 4 ranks, 8 B .. 64 KiB) covers."""
    if not check("\n## Targets\n" in report_md, "report.md has no Targets section"):
        return
    targets = report_md.split("\n## Targets\n", 1)[1]
    check("\n## " not in targets, "the Targets section is not the last section of report.md")
    blocks = {}
    for block in targets.split("\n**")[1:]:
        title, _, body = block.partition("**\n")
        blocks[title] = [l for l in body.splitlines() if l.startswith("- ")]
    covered = [t for t in blocks if "memcpy" not in t and "no cliff" not in t]
    # No cliff: one block per collective and rank count, a line per transport's automatic
    # selection (not the mem_alloc variant: the forced runs use ordinary buffers).
    for ranks in RANKS:
        for coll in ALGORITHMS:
            title = next((t for t in blocks if t.startswith(f"{coll}, {ranks} ranks") and
                          "no cliff" in t), None)
            if not check(title, f"Targets: no 'no cliff' target for {coll}, {ranks} ranks"):
                continue
            lines = blocks[title]
            check(len(lines) == len(transports) and all(
                re.match(rf"^- braid-{re.escape(t)}: \*\*(met|missed)\*\* ", l)
                for t, l in zip(transports, lines)),
                f"Targets: '{title}': lines {lines}, expected one met/missed per transport")
    expected = ["allreduce, 2 ranks: 8 B", "allreduce, 2 ranks: every size from 64 KiB",
                "allreduce, 4 ranks", "broadcast, 2 ranks", "broadcast, 4 ranks"]
    for prefix in expected:
        title = next((t for t in covered if t.startswith(prefix)), None)
        if not check(title, f"Targets: no target '{prefix} ...'"):
            continue
        lines = blocks[title]
        check(len(lines) == len(autos), f"Targets: '{title}': {len(lines)} lines, expected "
              f"one per system in {autos}")
        for a, line in zip(autos, lines):
            check(re.match(rf"^- {re.escape(a)}: \*\*(met|met where measured|missed)\*\* ", line),
                  f"Targets: '{title}': line '{line}' is not '- {a}: met/missed ...'")
        if prefix.endswith("64 KiB"):
            check(all("not evaluated at 128 KiB .. 64 MiB" in l for l in lines),
                  f"Targets: '{title}' does not say 128 KiB .. 64 MiB were not evaluated")
    memcpy_title = next((t for t in blocks if "memcpy" in t), None)
    if check(memcpy_title, "Targets: no memcpy target"):
        check(blocks[memcpy_title] == ["- not evaluated: this run's largest size is 64 KiB."],
              f"Targets: memcpy target reads {blocks[memcpy_title]}, expected not evaluated")
    if not have_memcpy:
        check("Not measured: single-core memcpy bandwidth" in report_md,
              "report.md does not say the memcpy bandwidth was not measured")


def report():
    if failures:
        for f in failures:
            print(f"FAIL: {f}")
        return 1
    print("bench/compare --quick: every JSON, table and plot is there")
    return 0


if __name__ == "__main__":
    sys.exit(main())
