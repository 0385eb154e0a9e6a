#!/usr/bin/env bash
# Runs INSIDE a test guest: the verbs plugin with a 64 KiB locked-memory limit and without
# CAP_IPC_LOCK (what an unprivileged user on a badly configured node has). Init must fail with a
# message naming the limit and how to raise it, not crash or hang.
#   memlock_check.sh BIN_DIR
set -uo pipefail
bin=$1
out=$(ulimit -l 64 && BRAID_TRANSPORT=verbs timeout 120 \
      setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock \
      "$bin/braidrun" -n 2 --timeout 60 "$bin/allreduce_c" 2>&1)
rc=$?
echo "$out" | head -n 12
if (( rc == 0 )); then echo "FAIL: the job succeeded with 64 KiB of locked memory"; exit 1; fi
if (( rc == 124 )); then echo "FAIL: the job hung"; exit 1; fi
for want in "ibv_reg_mr" "RLIMIT_MEMLOCK" "ulimit -l unlimited"; do
  grep -qF -- "$want" <<<"$out" || { echo "FAIL: the error does not mention: $want"; exit 1; }
done
if grep -qE 'Segmentation|core dumped|terminate called' <<<"$out"; then echo "FAIL: crashed"; exit 1; fi
echo "PASS: a clear error (exit $rc)"
