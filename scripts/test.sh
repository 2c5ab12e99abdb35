#!/usr/bin/env bash
# Build the kernel variants and the tests, run the suite booted in QEMU on
# each variant, scan each console for splats, and judge the results.
# usage: scripts/test.sh [stock|baseline|ours ...]   (default: all three)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(stock baseline ours)
results=$BPFLOCK_ROOT/build/results
mkdir -p "$results"
start=$(date +%s)

"$BPFLOCK_ROOT/scripts/deps.sh"
say "linux-source-6.1 $(installed_version) (series tested on $(tested_version))"
declare -A image
for v in "${variants[@]}"; do
	image[$v]=$("$BPFLOCK_ROOT/scripts/kernel.sh" "$v")
done
tests=$("$BPFLOCK_ROOT/scripts/build-tests.sh")
say "$(wc -l <"$tests/manifest.txt") cases"

runs=()
status=0
for v in "${variants[@]}"; do
	say "running the suite on $v"
	rc=0
	"$BPFLOCK_ROOT/scripts/vm.sh" --kernel "${image[$v]}" --initrd "$tests/initramfs.cpio" \
		--name "$v" --cmd "BPFLOCK_VARIANT=$v BPFLOCK_SCALE=${BPFLOCK_SCALE:-100} sh /tests/run-suite.sh ${BPFLOCK_TESTS:-}" \
		--log "$results/$v-console.log" --out "$results/$v-results.txt" \
		$([ -n "${VERBOSE:-}" ] || echo --quiet) || rc=$?
	case $rc in
	0 | 1) ;;	# the suite ran; the report judges it
	*) say "the $v guest failed (status $rc); console: $results/$v-console.log"; status=1 ;;
	esac
	if ! "$BPFLOCK_ROOT/scripts/splats.sh" "$results/$v-console.log"; then
		status=1
	fi
	runs+=("$v=$results/$v-results.txt")
done

"$BPFLOCK_ROOT/scripts/report.sh" "$tests/manifest.txt" "${runs[@]}" | tee "$results/report.txt" || status=1
say "results in $results; took $(($(date +%s) - start)) s"
exit $status
