#!/usr/bin/env bash
# Build the kernel variants and the tests, run the suite booted in QEMU on
# each variant, scan each console for splats, and judge the results.
# usage: [BASE=6.1|6.12] scripts/test.sh [stock|baseline|ours ...]
#        (default: the base's variants: stock, baseline, ours)
# env:   BASE=6.1|6.12         the base (default 6.1); results of 6.12 in
#                              build/results/6.12/FLAVOUR
#        FLAVOUR=plain|debug|kcsan|debian  kernel config flavour (default plain)
#        DEBIAN_STOCK=binary|build  the debian flavour's stock: Debian's own
#                              linux-image of the tree version (default), or
#                              stock built like ours from Debian's config
#        BPFLOCK_TESTS="a b"    only these test binaries
#        BPFLOCK_SCALE, BPFLOCK_TORTURE_SECONDS, BPFLOCK_TEST_TIMEOUT,
#        BPFLOCK_FUZZ_N, BPFLOCK_FUZZ_SEED, BPFLOCK_BIN_TIMEOUT (per binary)
#                              passed to the guest (see README)
#        FRESH=1               run every binary on every variant, even
#                              where a stored passing result could be reused
#        BPFLOCK_JIT=0         run with bpf_jit_enable=0 (the interpreter
#                              and the helpers instead of the JIT's inline
#                              lock); results in build/results/FLAVOUR-nojit
set -euo pipefail
. "$(dirname "$0")/lib.sh"

main() {
variants=("$@")
[ ${#variants[@]} -gt 0 ] || mapfile -t variants < <(base_variants)
flavour=${FLAVOUR:-plain}
jit=${BPFLOCK_JIT:-1}
results=$(results_root)/$flavour$([ "$jit" = 1 ] || echo -nojit)
mkdir -p "$results"
start=$(date +%s)

"$BPFLOCK_ROOT/scripts/deps.sh"
say "$SOURCE_PACKAGE $(installed_version) (series tested on $(tested_version)), $flavour kernels"
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

# The binaries of the selection, in the guest's order (guard last: it may
# have to power a deadlocked guest off).
binaries=$(cut -d/ -f1 "$manifest" | uniq | grep -vx guard || true)
! grep -q '^guard/' "$manifest" || binaries+=" guard"

# Stored results: a test binary that met every expectation on a kernel
# is not run again on that kernel until something it depends on changes:
# the kernel image, the binary (its BPF objects are linked in), the
# guest's tools and scripts, the guest's settings, vCPUs, memory, kernel
# command line and accelerator. A change to one test
# file reruns that binary on every kernel; a patch of the series reruns
# every binary on ours. A failure is never stored. FRESH=1 runs
# everything (CI does). BPFLOCK_REUSE names the variants that reuse.
reuse=$BPFLOCK_CACHE/results/$(installed_version)/$flavour$([ "$jit" = 1 ] || echo -nojit)
# KCSAN's report reads every guest's console: there, everything runs.
reusing=" ${BPFLOCK_REUSE-$([ "$flavour" = kcsan ] || echo stock baseline ours)} "
common_key=$( (cd "$tests" && sha256sum sbin/* bin/upstream.d/* 2>/dev/null
	sha256sum "$BPFLOCK_ROOT/guest/run-suite.sh" "$BPFLOCK_ROOT/guest/init" /bin/busybox
	echo "$guest_env" "${VM_CPUS:-4}" "${VM_MEM:-2G}" "${VM_APPEND:-}"
	"$BPFLOCK_ROOT/scripts/vm.sh" --print-accel --kernel "${image[${variants[0]}]}" \
		--initrd "$tests/initramfs.cpio") | sha256sum | cut -c1-16)
# each image and binary hashed once, not once per (variant, binary) lookup
declare -A sum
for f in "${image[@]}" "$tests"/bin/*; do
	[ -f "$f" ] && sum[$f]=$(sha256sum "$f" | cut -d' ' -f1)
done
binary_key() { # VARIANT BINARY
	printf '%s\n' "${sum[${image[$1]}]}" "${sum[$tests/bin/$2]}" "$common_key" |
		sha256sum | cut -c1-24
}
reused() { # VARIANT BINARY: a stored result, or nothing
	local f=$reuse/$1/$2.$(binary_key "$1" "$2")
	[ "${FRESH:-0}" = 0 ] && [[ "$reusing" == *" $1 "* ]] && [ -f "$f" ] && echo "$f"
	return 0
}
# One binary's lines of a results file: its KTAP block to its "# time"
# line, or to the end for a binary the guest did not survive (guard resets
# a deadlocked stock guest and reports through the drained tty).
segment() { # RESULTS BINARY
	awk -v b="$2" '/^BPFLOCK_STATUS=/ { next }
		{ l[++n] = $0 }
		$0 == "# suite: " b || index($0, " " b "/") { mine = 1 }
		/^# time / { if (index($0, "# time " b " ") == 1) for (i = 1; i <= n; i++) print l[i]; n = mine = 0 }
		END { if (mine) for (i = 1; i <= n; i++) print l[i] }' "$1"
}
# A binary's fresh result is kept when every case met its expectation.
keep_result() { # VARIANT BINARY SEGMENT
	local f=$reuse/$1/$2.$(binary_key "$1" "$2")
	grep "^$2/" "$manifest" >"$3.manifest"
	if "$BPFLOCK_ROOT/scripts/report.sh" "$3.manifest" "$1=$3" >/dev/null 2>&1; then
		mkdir -p "$reuse/$1"
		rm -f "$reuse/$1/$2".*
		cp "$3" "$f"
	fi
	rm -f "$3.manifest"
}

declare -A todo
for v in "${variants[@]}"; do
	todo[$v]=
	n=0
	for b in $binaries; do
		if [ -n "$(reused "$v" "$b")" ]; then
			n=$((n + 1))
		else
			todo[$v]+="$b "
		fi
	done
	[ "$n" -eq 0 ] || say "$v: $n binaries unchanged since they passed on this kernel: results reused (FRESH=1 runs them)"
done

# One guest per variant, in turn: guests at the same time on a small host
# make each other's spinning vCPUs slower, not the run shorter.
status=0
declare -A rcs
for v in "${variants[@]}"; do
	rm -f "$results/$v-fresh.txt" "$results/$v-console.log"
	[ -n "${todo[$v]}" ] || continue
	say "running $(wc -w <<<"${todo[$v]}") test binaries on $v ($flavour): ${todo[$v]}"
	t0=$(date +%s)
	rcs[$v]=0
	"$BPFLOCK_ROOT/scripts/vm.sh" --kernel "${image[$v]}" --initrd "$tests/initramfs.cpio" \
		--name "$v" --cmd "BPFLOCK_VARIANT=$v $guest_env sh /tests/run-suite.sh ${todo[$v]}" \
		--log "$results/$v-console.log" --out "$results/$v-fresh.txt" \
		$([ -n "${VERBOSE:-}" ] || echo --quiet) || rcs[$v]=$?
	say "$v: guest ran for $(($(date +%s) - t0)) s"
done
runs=()
for v in "${variants[@]}"; do
	out=$results/$v-results.txt
	: >"$out"
	clean=0
	if [ -n "${todo[$v]}" ]; then
		rc=${rcs[$v]} clean=1
		case $rc in
		0 | 1) ;;	# the suite ran; the report judges it
		*) say "the $v guest failed (status $rc); console: $results/$v-console.log"; status=1 clean=0 ;;
		esac
		if ! KCSAN_REPORTS=$([ "$flavour" = kcsan ] && echo separate || echo fail) \
			"$BPFLOCK_ROOT/scripts/splats.sh" "$results/$v-console.log"; then
			status=1 clean=0
		fi
	fi
	[ -f "$results/$v-fresh.txt" ] || : >"$results/$v-fresh.txt"
	for b in $binaries; do
		f=$(reused "$v" "$b")
		if [ -n "$f" ]; then
			cat "$f" >>"$out"
			continue
		fi
		segment "$results/$v-fresh.txt" "$b" >"$results/$v-$b.seg"
		[ "$clean" = 0 ] || [[ "$reusing" != *" $v "* ]] || keep_result "$v" "$b" "$results/$v-$b.seg"
		cat "$results/$v-$b.seg" >>"$out"
		rm -f "$results/$v-$b.seg"
	done
	runs+=("$v=$out")
done

"$BPFLOCK_ROOT/scripts/report.sh" "$manifest" "${runs[@]}" | tee "$results/report.txt" || status=1
# Where the guests' time went: seconds per test binary and variant.
for v in "${variants[@]}"; do
	[ ! -f "$results/$v-fresh.txt" ] ||
		sed -n 's/^# time \([^ ]*\) \([0-9]*\)$/'"$v"' \1 \2/p' "$results/$v-fresh.txt"
done | awk '{ t[$2] = t[$2] sprintf(" %s=%ss", $1, $3) } END { for (b in t) printf "[bpflock] time %-14s%s\n", b, t[b] }' |
	sort >&2
say "results in $results; took $(($(date +%s) - start)) s"
return $status
}

# the whole script is read before it runs: editing it meanwhile is safe
main "$@"; exit
