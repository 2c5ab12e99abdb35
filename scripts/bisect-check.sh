#!/usr/bin/env bash
# Every prefix of the series builds and boots: for N = 1..all, build the
# tree with the first N patches and boot it with a trivial command.
# usage: [BASE=6.1|6.12] [FROM=N] scripts/bisect-check.sh   (the series of
#        patches/BASE; FROM: start at the prefix of N patches, default 1)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

n=$(series_patches 0 | wc -l)
from=${FROM:-1}
case "$from" in '' | *[!0-9]*) die "FROM=$from: give the number of the first prefix, 1..$n" ;; esac
[ "$from" -ge 1 ] && [ "$from" -le "$n" ] || die "FROM=$from: the series has $n patches; give 1..$n"
tests=$("$BPFLOCK_ROOT/scripts/build-tests.sh")
status=0
for i in $(seq "$from" "$n"); do
	say "prefix $i of $n: building and booting"
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
