#!/usr/bin/env bash
# The regression gate: the tree's own BPF selftests (test_verifier,
# veristat over every selftest object, test_maps, test_progs), built once
# from the stock tree and run booted on stock and on ours; every
# difference not listed in tests/upstream/BASE/differences.txt fails the
# run. Per base (BASE=6.1, the default, or BASE=6.12) in tests/upstream/BASE:
# progs.list, differences.txt and the harness patches only that tree needs
# (tests/upstream/*.patch serve both); guest.sh, compare.py and extra.mk
# are shared. 6.1's selftests build with clang-14, 6.12's with clang-16.
# usage: [BASE=6.1|6.12] scripts/upstream.sh [--full] [--build-only] [--parallel] [SUITE...]
#   --full        all of test_progs (make test-upstream); default: the tests
#                 named in tests/upstream/BASE/progs.list (make test)
#   --build-only  build (or check the cache) and print the cache directory
#   --parallel    boot stock's and ours's guests at the same time
#   SUITE         test_verifier veristat test_maps test_progs (default: all)
# env: FRESH=1 (run every guest, even where a stored result of the same
#      kernel and selftests could be reused),
#      UPSTREAM_ICOUNT=1 (one vCPU under QEMU's instruction counting, so
#      that veristat's durations are guest instructions: a measurement,
#      never reused nor stored as the gate's result),
#      UPSTREAM_RESULTS (results directory), UPSTREAM_KERNELS ("stock ours"),
#      UPSTREAM_IMAGE_<variant> (use that
#      bzImage, not scripts/kernel.sh's), VM_CPUS, UPSTREAM_PROGS_TIMEOUT,
#      UPSTREAM_MAP_TIMEOUT, UPSTREAM_JOBS (veristat processes per guest)
# Results: build/results/upstream/ on 6.1, build/results/BASE/upstream/ on
# another base (summary.txt, veristat.md, veristat.csv)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

full=0 build_only=0 parallel=${UPSTREAM_PARALLEL:-0} suites=() icount=${UPSTREAM_ICOUNT:-0}
while [ $# -gt 0 ]; do
	case "$1" in
	--full) full=1 ;;
	--build-only) build_only=1 ;;
	--parallel) parallel=1 ;;
	test_verifier | veristat | test_maps | test_progs) suites+=("$1") ;;
	*) die "usage: scripts/upstream.sh [--full] [--build-only] [--parallel] [test_verifier|veristat|test_maps|test_progs ...]" ;;
	esac
	shift
done
[ ${#suites[@]} -gt 0 ] || suites=(test_verifier veristat test_maps test_progs)
read -r -a kernels <<<"${UPSTREAM_KERNELS:-stock ours}"

# Bump when this script changes what it builds (flags, targets, pruning).
UPSTREAM_RECIPE=2
UP=$BPFLOCK_ROOT/tests/upstream
UPB=$UP/$BASE
[ -f "$UPB/progs.list" ] && [ -f "$UPB/differences.txt" ] ||
	die "no tests/upstream/$BASE/progs.list or differences.txt: the gate does not know base $BASE"
# The selftests' BPF compiler: 6.12's need clang >= 16 (6.1's were
# written for 14, the version Debian 12's clang package is).
case "$BASE" in
6.1) llvm=14 ;;
*) llvm=16 ;;
esac
ver=$(installed_version)
cache=$BPFLOCK_CACHE/upstream/$ver
src=$cache/src
st=$src/tools/testing/selftests/bpf
out=$cache/out
results=${UPSTREAM_RESULTS:-$(results_root)/upstream}

# A kernel's image: scripts/kernel.sh (builds it when out of date), or
# UPSTREAM_IMAGE_<variant> (a bzImage beside its vmlinux, as kernel.sh
# leaves them) to judge images already built.
kernel_image() { image_for UPSTREAM "$1"; }

# Debian's clang of the base (the selftests' BPF compiler), lld for
# urandom_read.
need_packages() { need_debs clang-$llvm llvm-$llvm lld-$llvm lld libelf-dev zlib1g-dev libssl-dev rsync python3; }

# The harness patches: the shared ones, then the base's own (one ls each:
# one ls would sort them together).
harness_patches() {
	ls "$UP"/*.patch 2>/dev/null || true
	ls "$UPB"/*.patch 2>/dev/null || true
}

# The selftests' source: the stock tree is linux-source-BASE with no patch,
# commit 'base' of the source repository; its tools/ (and what tools/
# builds from: scripts/, kernel/bpf/disasm.c, include/) are exported once
# per tree version into the cache, where the build may write (generated
# tests.h, pruned sources) without touching the kernel trees.
make_source() {
	local repo commit
	repo=$("$BPFLOCK_ROOT/scripts/source.sh")
	commit=$(git -C "$repo" rev-parse base)
	if [ "$(cat "$cache/.recipe" 2>/dev/null)" != "$commit $UPSTREAM_RECIPE $(harness_patches | xargs cat | sha256sum | cut -c1-16)" ]; then
		say "exporting the stock tree's tools/ into $src"
		rm -rf "$src" "$out" "$cache/pruned.txt"
		mkdir -p "$src"
		git -C "$repo" archive base tools scripts kernel/bpf include arch/x86/include Makefile |
			tar -x -C "$src"
		# what the test bed needs of the harness (each patch says why)
		local p
		for p in $(harness_patches); do
			patch -s -p1 -d "$src" <"$p" || die "$(basename "$p") does not apply to the stock tree's selftests"
		done
		mkdir -p "$out"
		echo "$commit $UPSTREAM_RECIPE $(harness_patches | xargs cat | sha256sum | cut -c1-16)" >"$cache/.recipe"
	fi
}

# The selftests' Makefile, with our additions (extra.mk), static binaries
# for the busybox guest. 6.12's test_progs would link LLVM's disassembler
# statically when llvm-config is there (only the __jited checks of two
# verifier tests use it): left out, those checks skip on both kernels.
# Its test_progs also builds the test modules (bpf_testmod.ko and three
# more) against stock, whose modpost wants vmlinux's symbols (no
# Module.symvers: modules were never built).
selftests_make() {
	local more=()
	[ "$BASE" = 6.1 ] || more=(feature-llvm=0 KBUILD_EXTRA_SYMBOLS="$stock_build/vmlinux.symvers")
	nice make -C "$st" -f Makefile -f "$UP/extra.mk" -j"$JOBS" OUTPUT="$out" \
		VMLINUX_BTF="$cache/vmlinux.btf" KDIR="$stock_build" \
		CLANG=clang-$llvm LLC=llc-$llvm LLVM_STRIP=llvm-strip-$llvm "${more[@]}" \
		LDLIBS="-static -lelf -lz -lrt -lpthread" "$@"
}

# Why progs/NAME.c did not compile: its first error, in the file or in a
# header it includes (6.12's profiler.inc.h).
prune_reason() {
	grep -m1 -o "error: .*" <(grep -A3 -E "progs/$1\.c:" "$cache/progs-build.log") ||
		echo "see $cache/progs-build.log"
}

# 6.12's prog_tests/verifier.c runs one object per one-line test
# ("void test_verifier_bounds(void) { RUN(verifier_bounds); }"): an object
# that does not compile takes out its line and its #include, not the file.
# Succeeds when that is all the file says of it.
prune_one_liner() { # TEST_FILE NAME
	local t=$1 n=$2 refs lines
	refs=$(grep -cE "\b$n\b" "$t" || true)
	lines=$(grep -cE "^#include \"$n\.skel\.h\"$|^void [a-z0-9_]+\(void\) *\{ *RUN(_TESTS)?\($n\); *\}$" "$t" || true)
	[ "$lines" -ge 2 ] && [ "$lines" -eq "$refs" ] || return 1
	sed -i -E "/^#include \"$n\.skel\.h\"$/d; /^void [a-z0-9_]+\(void\) *\{ *RUN(_TESTS)?\($n\); *\}$/d" "$t"
	printf '%s/%s\tits test of progs/%s.c only (the rest of the file runs)\n' \
		"$(basename "$(dirname "$t")")" "$(basename "$t")" "$n" >>"$cache/pruned.txt"
}

# Every progs/*.c into $out/NAME.bpf.o; the ones clang cannot compile
# (and the tests that need them) move out of the build, listed in pruned.txt.
compile_progs() {
	local targets=() f n
	for f in "$st"/progs/*.c; do
		n=$(basename "$f" .c)
		targets+=("$out/$n.bpf.o")
	done
	say "compiling ${#targets[@]} progs/*.c with clang-$llvm (cold: a few minutes)"
	selftests_make -k "${targets[@]}" >"$cache/progs-build.log" 2>&1 || true
	[ -f "$cache/pruned.txt" ] || : >"$cache/pruned.txt"
	for f in "$st"/progs/*.c; do
		n=$(basename "$f" .c)
		[ -f "$out/$n.bpf.o" ] && continue
		mkdir -p "$st/pruned/progs"
		mv "$f" "$st/pruned/progs/"
		printf 'progs/%s.c\tdoes not compile with clang-'"$llvm"' against stock'"'"'s vmlinux.h: %s\n' "$n" \
			"$(prune_reason "$n")" >>"$cache/pruned.txt"
		# the runtime tests that use its skeleton or its object
		local t
		for t in $(grep -lE "\b$n\.(skel|lskel|subskel)\.h|[\"/]$n\.bpf\.o\"" "$st"/prog_tests/*.c "$st"/map_tests/*.c 2>/dev/null); do
			prune_one_liner "$t" "$n" && continue
			mkdir -p "$st/pruned/$(basename "$(dirname "$t")")"
			mv "$t" "$st/pruned/$(basename "$(dirname "$t")")/"
			printf '%s/%s\tneeds progs/%s.c\n' "$(basename "$(dirname "$t")")" "$(basename "$t")" "$n" >>"$cache/pruned.txt"
		done
	done
	prune_orphans
	# the test lists are generated from the files left
	rm -f "$st/prog_tests/tests.h" "$st/map_tests/tests.h"
}

# Runtime tests whose skeleton has no program in the tree: 6.12.118's
# prog_tests/bpf_attr_size.c came with a stable update that left out its
# progs/cgroup_skb_direct_packet_access.c. A linked skeleton (the
# Makefile's "NAME.skel.h-deps") has no source of its own name.
prune_orphans() {
	local t x
	for t in "$st"/prog_tests/*.c "$st"/map_tests/*.c; do
		for x in $(sed -n -E 's/^#include "([a-z0-9_]+)\.(skel|lskel|subskel)\.h".*/\1/p' "$t"); do
			[ ! -f "$st/progs/$x.c" ] && [ ! -f "$st/pruned/progs/$x.c" ] || continue
			grep -q "^$x\.skel\.h-deps" "$st/Makefile" && continue
			mkdir -p "$st/pruned/$(basename "$(dirname "$t")")"
			mv "$t" "$st/pruned/$(basename "$(dirname "$t")")/"
			printf '%s/%s\tincludes %s, but the tree has no progs/%s.c\n' \
				"$(basename "$(dirname "$t")")" "$(basename "$t")" "$x.skel.h" "$x" >>"$cache/pruned.txt"
			break
		done
	done
}

build() {
	need_packages
	make_source
	local img
	img=$(kernel_image stock)
	stock_build=$(cd "$(dirname "$img")/../../.." && pwd)
	[ -f "$stock_build/vmlinux" ] || die "no $stock_build/vmlinux: rebuild stock (scripts/kernel.sh stock)"
	# vmlinux.h comes from stock's BTF; a copy of it, replaced only when it
	# changed, so that make rebuilds the objects only then
	llvm-objcopy-$llvm --dump-section .BTF="$cache/vmlinux.btf.new" "$stock_build/vmlinux" /dev/null ||
		die "stock's vmlinux has no .BTF section: CONFIG_DEBUG_INFO_BTF is required"
	if cmp -s "$cache/vmlinux.btf.new" "$cache/vmlinux.btf"; then
		rm "$cache/vmlinux.btf.new"
	else
		mv "$cache/vmlinux.btf.new" "$cache/vmlinux.btf"
	fi
	local t0=$(date +%s)
	say "building the selftests' tools (libbpf, bpftool, test_verifier, veristat)"
	selftests_make "$out/test_verifier" "$out/veristat" "$out/tools/sbin/bpftool" \
		>"$cache/tools-build.log" 2>&1 || { tail -n 30 "$cache/tools-build.log" >&2; die "selftests tools failed to build; log: $cache/tools-build.log"; }
	compile_progs
	# urandom_read links "liburandom_read.so" from the current directory,
	# which is the source directory, not OUTPUT, in this make
	ln -sf "$out/liburandom_read.so" "$st/liburandom_read.so"
	# test_progs' own copy of the module wants stock's prepared build
	build_testmod stock
	say "building test_progs and test_maps_one (test_progs' bpf_testmod against $stock_build)"
	selftests_make "$out/test_progs" "$out/test_maps_one" >"$cache/runners-build.log" 2>&1 ||
		{ tail -n 30 "$cache/runners-build.log" >&2; die "test_progs/test_maps_one failed to build; log: $cache/runners-build.log"; }
	say "selftests built in $(($(date +%s) - t0)) s; $(ls "$out"/*.bpf.o | wc -l) objects, $(grep -c '^progs/' "$cache/pruned.txt" || true) sources left out"
}


# bpf_testmod.ko for one kernel: the stock tree's module source built
# against that kernel's build directory (module BTF is split BTF on the
# kernel's own vmlinux BTF, so one module does not load on both kernels).
build_testmod() {
	local v=$1 img build dir key
	img=$(kernel_image "$v")
	build=$(cd "$(dirname "$img")/../../.." && pwd)
	dir=$cache/testmod/$v
	# the build's own key (scripts/kernel.sh): a rebuilt kernel, a new module
	key=$(cat "$build/.bpflock-key" 2>/dev/null || date +%s)
	if [ -f "$dir/bpf_testmod.ko" ] && [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ]; then
		return
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$st"/bpf_testmod/*.[ch] "$st/bpf_testmod/Makefile" "$dir/"
	# scripts/module.lds and the like: the kernel build made the image only
	make -C "$build" -s modules_prepare >"$dir.prepare.log" 2>&1 ||
		{ tail -n 20 "$dir.prepare.log" >&2; die "make modules_prepare failed in $build; log: $dir.prepare.log"; }
	# no Module.symvers (modules were never built): vmlinux's symbols
	make -C "$build" M="$dir" -j"$JOBS" KBUILD_EXTRA_SYMBOLS="$build/vmlinux.symvers" \
		modules >"$dir/build.log" 2>&1 ||
		{ tail -n 20 "$dir/build.log" >&2; die "bpf_testmod does not build against $build; log: $dir/build.log"; }
	echo "$key" >"$dir/.key"
}

# What the guests get in /bpflock: the binaries (debug info stripped,
# symbols kept: uprobe tests look up test_progs' own functions), every
# object, test_progs' extra files, and the loader and libraries of the
# two dynamic helpers (urandom_read, liburandom_read.so) under rootfs/.
make_ship() {
	local ship=$cache/ship f lib
	if [ -f "$ship/.done" ] && [ -f "$ship/.key" ] && [ -z "$(find "$out" -maxdepth 1 -newer "$ship/.done" -print -quit)" ] &&
		[ -z "$(find "$UP" -newer "$ship/.done" -print -quit)" ]; then
		return
	fi
	say "packing the guests' files"
	rm -rf "$ship"
	mkdir -p "$ship/rootfs"
	for f in test_verifier veristat test_maps_one test_progs urandom_read xdp_synproxy sign-file uprobe_multi; do
		# uprobe_multi: 6.12's uprobe_multi_test runs it
		[ -f "$out/$f" ] || [ "$f" != uprobe_multi ] || continue
		strip --strip-debug -o "$ship/$f" "$out/$f"
	done
	cp "$out"/*.bpf.o "$out"/liburandom_read.so "$st"/ima_setup.sh "$st"/verify_sig_setup.sh "$ship/"
	cp "$st"/progs/btf_dump_test_case_*.c "$ship/" 2>/dev/null || true
	for lib in $(ldd "$out/urandom_read" "$out/sign-file" | awk '/=> \//{ print $3 } /^\t\/[^ ]*ld-linux/{ print $1 }' | sort -u); do
		mkdir -p "$ship/rootfs$(dirname "$lib")"
		cp -L "$lib" "$ship/rootfs$lib"
	done
	# test_verifier's number of cases, for the guest to split them in
	# ranges: the size of its tests[] over the size of struct bpf_test
	local size one
	size=$(nm -S "$out/test_verifier" | awk '$4 == "tests" { print $2 }')
	one=$(pahole -C bpf_test "$out/test_verifier" | sed -n 's/.*size: \([0-9]*\),.*/\1/p')
	if [ -n "$size" ] && [ -n "$one" ]; then
		echo $((16#$size / one)) >"$ship/tv.count"
	fi
	install -m 0755 "$UP/guest.sh" "$ship/guest.sh"
	cp "$UPB/progs.list" "$ship/progs.list"
	# what a stored result was produced from (see run_guest)
	(cd "$ship" && find . -type f ! -name .key -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
		sha256sum | cut -c1-24 >"$ship/.key"
	touch "$ship/.done"
}

# A kernel's stored result: the suites are the verifier's verdicts on
# fixed objects and fixed runtime tests, so an unchanged kernel image run
# on unchanged selftests and settings gives what it gave before. A result
# is stored only from a gate that passed; FRESH=1 runs both guests.
result_key() { # VARIANT
	(sha256sum "$(kernel_image "$1")" "$cache/testmod/$1/bpf_testmod.ko" | cut -d' ' -f1
		cat "$cache/ship/.key"; echo "$guest_env ${suites[*]} ${VM_CPUS:-4} ${VM_MEM:-2G} ${VM_APPEND:-}"
		"$BPFLOCK_ROOT/scripts/vm.sh" --print-accel --kernel "$(kernel_image "$1")" \
			--initrd "$tests/initramfs.cpio") | sha256sum | cut -c1-24
}

# One guest per kernel: the common files hard-linked, plus the kernel's
# own bpf_testmod.ko and .config.
run_guest() {
	local v=$1 img run t0 rc=0 key
	img=$(kernel_image "$v")
	# just before the boot: a kernel rebuilt since, a module rebuilt
	build_testmod "$v"
	key=$(result_key "$v")
	if [ "${FRESH:-0}" = 0 ] && [ "$icount" = 0 ] && [ -f "$cache/results/$v.$key/raw.txt" ]; then
		say "$v: kernel and selftests unchanged since the last passing gate: its results reused (FRESH=1 runs it)"
		cp "$cache/results/$v.$key/raw.txt" "$results/$v-raw.txt"
		cp "$cache/results/$v.$key/console.log" "$results/$v-console.log"
		return 0
	fi
	[ "$icount" = 1 ] || echo "$key" >"$results/$v.fresh"
	say "running ${suites[*]} on $v"
	run=$cache/run/$v
	rm -rf "$run"
	mkdir -p "$(dirname "$run")"
	cp -al "$cache/ship" "$run"
	cp "$cache/testmod/$v/bpf_testmod.ko" "$run/"
	cp "$(dirname "$img")/../../../.config" "$run/kconfig"
	t0=$(date +%s)
	"$BPFLOCK_ROOT/scripts/vm.sh" --kernel "$img" --initrd "$tests/initramfs.cpio" --name "$v" \
		$([ "$icount" = 0 ] || echo --icount --cpus 1) \
		--add "$run" --cmd "$guest_env sh ./guest.sh ${suites[*]}" \
		--timeout "$vm_timeout" --log "$results/$v-console.log" --out "$results/$v-raw.txt" \
		$([ -n "${VERBOSE:-}" ] || echo --quiet) || rc=$?
	say "$v: guest ran for $(($(date +%s) - t0)) s (status $rc)"
	rm -rf "$run"
	return $rc
}

main() {
# one gate at a time on a machine: they share the cache and build/results
mkdir -p "$BPFLOCK_CACHE"
exec 9>"$BPFLOCK_CACHE/upstream.lock"
if ! flock -n 9; then
	say "another upstream gate is running (lock $BPFLOCK_CACHE/upstream.lock): waiting for it"
	flock 9
fi
start=$(date +%s)
build
if [ "$build_only" -eq 1 ]; then
	echo "$cache"
	exit 0
fi
make_ship
tests=$("$BPFLOCK_ROOT/scripts/build-tests.sh")
mkdir -p "$results"
rm -f "$results"/*.fresh
# make test: the listed test_progs tests, test_maps without its two
# 100-process stress tests (each over 5 minutes under TCG) and 120 s per
# test; make test-upstream: everything, longer limits.
progs=list vm_timeout=${UPSTREAM_VM_TIMEOUT:-3600}
UPSTREAM_MAP_SKIP=${UPSTREAM_MAP_SKIP-map_parallel map_stress}
UPSTREAM_MAP_TIMEOUT=${UPSTREAM_MAP_TIMEOUT:-120}
if [ "$full" -eq 1 ]; then
	progs=all vm_timeout=${UPSTREAM_VM_TIMEOUT:-14400}
	UPSTREAM_MAP_SKIP=
	UPSTREAM_MAP_TIMEOUT=900
fi
guest_env="UPSTREAM_PROGS=$progs UPSTREAM_MAP_SKIP='$UPSTREAM_MAP_SKIP'"
for e in UPSTREAM_PROGS_TIMEOUT UPSTREAM_MAP_TIMEOUT UPSTREAM_JOBS; do
	[ -z "${!e:-}" ] || guest_env+=" $e=${!e}"
done
status=0
if [ "$parallel" -eq 1 ]; then
	say "running ${suites[*]} on ${kernels[*]} at the same time"
	pids=()
	for v in "${kernels[@]}"; do
		run_guest "$v" & pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || status=1
	done
else
	for v in "${kernels[@]}"; do
		run_guest "$v" || status=1
	done
fi
for v in "${kernels[@]}"; do
	if ! "$BPFLOCK_ROOT/scripts/splats.sh" "$results/$v-console.log"; then
		say "kernel splat on $v: $results/$v-console.log"
		status=1
	fi
done
# what could not be built here, with the reason, in the summary too
cp "$cache/pruned.txt" "$results/left-out.txt"
echo "upstream build: $(ls "$st"/progs/*.c | wc -l) of $(($(ls "$st"/progs/*.c | wc -l) + $(grep -c '^progs/' "$results/left-out.txt" || true))) progs/*.c compiled; left out ($results/left-out.txt):"
sed 's/^/  /' "$results/left-out.txt"
python3 "$UP/compare.py" "$results/stock-raw.txt" "$results/ours-raw.txt" \
	"$UPB/differences.txt" "$results" || status=1
if [ "$status" -eq 0 ]; then
	for v in "${kernels[@]}"; do
		[ -f "$results/$v.fresh" ] || continue
		key=$(cat "$results/$v.fresh")
		rm -rf "$cache/results/$v".*
		mkdir -p "$cache/results/$v.$key"
		cp "$results/$v-raw.txt" "$cache/results/$v.$key/raw.txt"
		cp "$results/$v-console.log" "$cache/results/$v.$key/console.log"
	done
fi
say "upstream gate took $(($(date +%s) - start)) s; results in $results"
return $status
}

# the whole script is read before it runs: editing it meanwhile is safe
main "$@"; exit
