#!/usr/bin/env bash
# Every prefix of the series builds and boots: for N = 1..all, build the
# tree with the first N patches and boot it with a trivial command.
# usage: [BASE=6.1|6.12] scripts/bisect-check.sh   (the series of patches/BASE)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

n=$(series_patches 0 | wc -l)
tests=$("$BPFLOCK_ROOT/scripts/build-tests.sh")
status=0
for i in $(seq 1 "$n"); do
	p=$(basename "$(series_patches "$i" | tail -n 1)")
	if image=$("$BPFLOCK_ROOT/scripts/kernel.sh" "series-$i") &&
		"$BPFLOCK_ROOT/scripts/vm.sh" --kernel "$image" --initrd "$tests/initramfs.cpio" \
			--quiet --name "series-$i" --timeout 120 \
			--cmd 'BPFLOCK_VARIANT=series /tests/bin/absent >/dev/null; true'; then
		echo "ok $i $p builds and boots"
	else
		echo "not ok $i $p"
		status=1
	fi
done
exit $status
