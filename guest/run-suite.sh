#!/bin/sh
# Runs in the guest: every test binary (or the ones named), each under a
# timeout. Results go to the console and, for the host, to /dev/ttyS1.
# usage: run-suite.sh [TEST...]
set -o pipefail
# guard may have to power the guest off (a CPU deadlocked on a kernel
# without the lock-region guard): it runs after everything else.
last=guard
tests=${*:-$(ls /tests/bin | grep -vx "$last") $last}
# BPFLOCK_JIT=0: programs run in the interpreter, locks through the helpers
if [ "${BPFLOCK_JIT:-1}" = 0 ]; then
	echo 0 >/proc/sys/net/core/bpf_jit_enable || exit 1
	echo "# bpf_jit_enable=0"
fi
rc=0
for t in $tests; do
	[ -f "/tests/bin/$t" ] || continue
	echo "# binary $t"
	t0=$(cut -d. -f1 /proc/uptime)
	timeout "${BPFLOCK_BIN_TIMEOUT:-1200}" "/tests/bin/$t" 2>&1 | tee /dev/ttyS1 || rc=1
	# for the host's per-binary timing table (scripts/test.sh)
	echo "# time $t $(($(cut -d. -f1 /proc/uptime) - t0))" | tee /dev/ttyS1
done
exit $rc
