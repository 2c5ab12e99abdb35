#!/usr/bin/env bash
# `make test`: every part of the test bed on each base given, in order.
# Each part runs to its end even when an earlier one failed (a red suite
# should not hide a red gate); then one table and one closing line.
#   6.1:  the Spin models, the suite on stock, baseline and ours, the lock
#         suites without the JIT, the tree's selftests gate
#   6.12: the suite on stock, baseline and ours, sched_ext on the three,
#         the tree's selftests gate
# usage: scripts/test-bases.sh BASE...   (make test: 6.1 6.12)
# exit: 0 when every part passed
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: scripts/test-bases.sh BASE... (bases: $BPFLOCK_BASES)"
S=$BPFLOCK_ROOT/scripts

# The parts of a base, one "name command" per line.
parts() {
	case "$1" in
	6.1)
		echo "model $S/model.sh"
		echo "suite $S/test.sh stock baseline ours"
		echo "nojit make -s -C $BPFLOCK_ROOT test-nojit"
		echo "gate $S/upstream.sh"
		;;
	6.12)
		echo "suite $S/test.sh stock baseline ours"
		echo "sched_ext $S/sched-ext.sh stock baseline ours"
		echo "gate $S/upstream.sh"
		;;
	*) die "no parts known for base $1 (bases: $BPFLOCK_BASES)" ;;
	esac
}

rows=() passed=0 failed=0 start=$(date +%s)
for b in "$@"; do
	while read -r name cmd; do
		say "== base $b: $name"
		t0=$(date +%s)
		# shellcheck disable=SC2086
		if BASE=$b $cmd; then
			st=passed passed=$((passed + 1))
		else
			st=FAILED failed=$((failed + 1))
		fi
		rows+=("$(printf '%-5s %-10s %-7s %5d s' "$b" "$name" "$st" $(($(date +%s) - t0)))")
	done < <(parts "$b")
done
echo
echo "base  part       result   time"
printf '%s\n' "${rows[@]}"
echo "make test on $*: $passed passed, $failed failed ($(($(date +%s) - start)) s)"
[ "$failed" -eq 0 ]
