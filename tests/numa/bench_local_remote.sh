#!/bin/bash
# Allreduce bandwidth with the buffers on each rank's own NUMA node vs the other node, in one
# run: braidrun --bind-to numa puts rank i on node i mod nodes. Run it in the 2-node guest:
#   tests/vm/run-in-guest --numa 2 -- tests/numa/bench_local_remote.sh build/bin [extra options]
set -euo pipefail
bin=$1
shift
for where in local remote; do
  echo "== buffers: $where node"
  BRAID_BENCH_BUFFER_NODE=$where "$bin/braidrun" -n 2 --bind-to numa --report-bindings \
    "$bin/braid-bench" allreduce --min-bytes 64K --max-bytes 16M "$@"
done
