#!/usr/bin/env bash
# Build the kernel variants and the tests, run the suite booted in QEMU on
# each variant, scan each console for splats, and judge the results.
# usage: scripts/test.sh [stock|baseline|ours ...]   (default: all three)
# env:   FLAVOUR=plain|debug|kcsan|debian  kernel config flavour (default plain)
#        DEBIAN_STOCK=binary|build  the debian flavour's stock: Debian's own
#                              linux-image of the tree version (default), or
#                              stock built like ours from Debian's config
#        BPFLOCK_TESTS="a b"    only these test binaries
#        BPFLOCK_SCALE, BPFLOCK_TORTURE_SECONDS, BPFLOCK_TEST_TIMEOUT,
#        BPFLOCK_FUZZ_N, BPFLOCK_FUZZ_SEED, BPFLOCK_BIN_TIMEOUT (per binary)
#                              passed to the guest (see README)
#        BPFLOCK_JIT=0         run with bpf_jit_enable=0 (the interpreter
#                              and the helpers instead of the JIT's inline
#                              lock); results in build/results/FLAVOUR-nojit
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(stock baseline ours)
flavour=${FLAVOUR:-plain}
jit=${BPFLOCK_JIT:-1}
results=$BPFLOCK_ROOT/build/results/$flavour$([ "$jit" = 1 ] || echo -nojit)
mkdir -p "$results"
start=$(date +%s)

"$BPFLOCK_ROOT/scripts/deps.sh"
say "linux-source-6.1 $(installed_version) (series tested on $(tested_version)), $flavour kernels"
declare -A image
for v in "${variants[@]}"; do
	if [ "$flavour/$v" = debian/stock ] && [ "${DEBIAN_STOCK:-binary}" = binary ]; then
		image[$v]=$("$BPFLOCK_ROOT/scripts/debian-kernel.sh")
	else
		image[$v]=$("$BPFLOCK_ROOT/scripts/kernel.sh" "$v" "$flavour")
	fi
done
tests=$("$BPFLOCK_ROOT/scripts/build-tests.sh")

# The cases of the selected binaries (suite name = binary name).
manifest=$results/manifest.txt
if [ -n "${BPFLOCK_TESTS:-}" ]; then
	pattern=$(printf '^%s/\n' $BPFLOCK_TESTS)
	grep -f <(printf '%s\n' "$pattern") "$tests/manifest.txt" >"$manifest" ||
		die "no cases in BPFLOCK_TESTS='$BPFLOCK_TESTS'; binaries: $(ls "$tests/bin" | tr '\n' ' ')"
else
	cp "$tests/manifest.txt" "$manifest"
fi
say "$(wc -l <"$manifest") cases"

guest_env="BPFLOCK_SCALE=${BPFLOCK_SCALE:-100} BPFLOCK_FLAVOUR=$flavour"
guest_env+=" BPFLOCK_TORTURE_SECONDS=${BPFLOCK_TORTURE_SECONDS:-5}"
guest_env+=" BPFLOCK_TEST_TIMEOUT=${BPFLOCK_TEST_TIMEOUT:-300}"
for v in BPFLOCK_FUZZ_N BPFLOCK_FUZZ_SEED BPFLOCK_BIN_TIMEOUT BPFLOCK_JIT; do
	[ -z "${!v:-}" ] || guest_env+=" $v=${!v}"
done
runs=()
status=0
for v in "${variants[@]}"; do
	say "running the suite on $v ($flavour)"
	t0=$(date +%s)
	rc=0
	"$BPFLOCK_ROOT/scripts/vm.sh" --kernel "${image[$v]}" --initrd "$tests/initramfs.cpio" \
		--name "$v" --cmd "BPFLOCK_VARIANT=$v $guest_env sh /tests/run-suite.sh ${BPFLOCK_TESTS:-}" \
		--log "$results/$v-console.log" --out "$results/$v-results.txt" \
		$([ -n "${VERBOSE:-}" ] || echo --quiet) || rc=$?
	case $rc in
	0 | 1) ;;	# the suite ran; the report judges it
	*) say "the $v guest failed (status $rc); console: $results/$v-console.log"; status=1 ;;
	esac
	say "$v: guest ran for $(($(date +%s) - t0)) s"
	if ! KCSAN_REPORTS=$([ "$flavour" = kcsan ] && echo separate || echo fail) \
		"$BPFLOCK_ROOT/scripts/splats.sh" "$results/$v-console.log"; then
		status=1
	fi
	runs+=("$v=$results/$v-results.txt")
done

"$BPFLOCK_ROOT/scripts/report.sh" "$manifest" "${runs[@]}" | tee "$results/report.txt" || status=1
# Where the guests' time went: seconds per test binary and variant.
for v in "${variants[@]}"; do
	sed -n 's/^# time \([^ ]*\) \([0-9]*\)$/'"$v"' \1 \2/p' "$results/$v-results.txt"
done | awk '{ t[$2] = t[$2] sprintf(" %s=%ss", $1, $3) } END { for (b in t) printf "[bpflock] time %-14s%s\n", b, t[b] }' |
	sort >&2
say "results in $results; took $(($(date +%s) - start)) s"
exit $status
