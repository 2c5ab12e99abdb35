#!/usr/bin/env bash
# sched_ext on the 6.12 kernels: the four schedulers of the stock tree's
# tools/sched_ext (scx_simple, scx_qmap, scx_central, scx_flatcg), built
# once, static, and run one after the other in one guest per kernel under
# a small mixed load in three cgroups of different cpu.weight. Each must
# attach (state "enabled"), schedule (its own counters move), let the load
# finish, and detach on SIGINT ("unregistered from user space", state
# "disabled"), with no splat on the console. baseline-6.12 has no lock, so
# scx_flatcg (a bpf_rb_root under a global lock) must be refused there,
# cleanly; the other three take no lock and run on all three kernels.
# usage: BASE=6.12 scripts/sched-ext.sh [--build-only] [stock|baseline|ours ...]
#   KERNEL        default: stock ours; ours is compared with stock
#   --build-only  build (or check the cache) and print the binaries' directory
# env: SCX_IMAGE_<variant> (use that bzImage, not scripts/kernel.sh's),
#      SCX_INITRD (the guests' base initramfs: scripts/build-tests.sh's
#      unless given), SCX_LOAD_SECONDS (the load's duration per scheduler, 10),
#      SCX_WAIT_SECONDS (bound on each wait in the guest: enable, samples,
#      load, detach; 300), VM_CPUS (4), VERBOSE=1 (stream the consoles)
# Results: build/results/6.12/sched_ext/ (table.md, KERNEL-results.txt,
#          KERNEL-console.log)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$BASE" = 6.12 ] || die "sched_ext is a 6.12 class (6.1 has none): run BASE=6.12 scripts/sched-ext.sh"

build_only=0 kernels=()
while [ $# -gt 0 ]; do
	case "$1" in
	--build-only) build_only=1 ;;
	stock | baseline | ours) kernels+=("$1") ;;
	*) die "usage: BASE=6.12 scripts/sched-ext.sh [--build-only] [stock|baseline|ours ...]" ;;
	esac
	shift
done
[ ${#kernels[@]} -gt 0 ] || kernels=(stock ours)

# Bump when this script changes what it builds (flags, targets, files).
SCX_RECIPE=1
SCHEDULERS="scx_simple scx_qmap scx_central scx_flatcg"
ver=$(installed_version)
cache=$BPFLOCK_CACHE/sched_ext/$ver
src=$cache/src
out=$cache/out
ship=$cache/ship
results=$(results_root)/sched_ext

# A kernel's image: SCX_IMAGE_<variant> (a bzImage, to judge images
# already built), or scripts/kernel.sh (builds it when out of date).
kernel_image() { image_for SCX "$1"; }

# tools/sched_ext's Makefile with LLVM=-16: its README asks for clang >= 16
# (Debian 12's default clang is 14).
need_packages() { need_debs clang-16 llvm-16 lld-16 libelf-dev zlib1g-dev; }

# The schedulers' source: tools/ of the stock tree (commit 'base' of the
# source repository) and what tools/ builds from, exported once per tree
# version, recipe and fix, so that no kernel tree is written to. The fix
# (tests/sched_ext/migration-disabled.patch) makes scx_central and
# scx_qmap keep migration-disabled tasks on their CPU, as their later
# versions do: without it the kernel may eject them at any run, on any
# kernel, as timing falls.
make_source() {
	local repo commit key fix=$BPFLOCK_ROOT/tests/sched_ext/migration-disabled.patch
	repo=$("$BPFLOCK_ROOT/scripts/source.sh")
	commit=$(git -C "$repo" rev-parse base)
	key="$commit $SCX_RECIPE $(sha1sum <"$fix" | cut -c1-16)"
	if [ "$(cat "$cache/.recipe" 2>/dev/null)" != "$key" ]; then
		say "exporting the stock tree's tools/ into $src"
		rm -rf "$src" "$out" "$ship"
		mkdir -p "$src"
		git -C "$repo" archive base tools scripts kernel/bpf include arch/x86/include Makefile |
			tar -x -C "$src"
		patch -d "$src" -p1 --quiet --no-backup-if-mismatch <"$fix" ||
			die "$fix does not apply to the tree's tools/sched_ext: refresh it"
		echo "$key" >"$cache/.recipe"
	fi
}

# vmlinux.h from stock-6.12's BTF; the copy is replaced only when the BTF
# changed, so that make rebuilds the schedulers only then.
stock_btf() {
	local img build
	img=$(kernel_image stock)
	build=$(cd "$(dirname "$img")/../../.." && pwd)
	[ -f "$build/vmlinux" ] || die "no vmlinux beside $img: rebuild stock (BASE=6.12 scripts/kernel.sh stock)"
	llvm-objcopy-16 --dump-section .BTF="$cache/vmlinux.btf.new" "$build/vmlinux" /dev/null ||
		die "stock's vmlinux has no .BTF section: CONFIG_DEBUG_INFO_BTF is required"
	if cmp -s "$cache/vmlinux.btf.new" "$cache/vmlinux.btf"; then
		rm "$cache/vmlinux.btf.new"
	else
		mv "$cache/vmlinux.btf.new" "$cache/vmlinux.btf"
	fi
}

# The four schedulers, linked -static for the busybox guest, and what the
# guests get in /bpflock (the binaries, debug info stripped, and guest.sh).
build() {
	local t0 s
	need_packages
	mkdir -p "$cache"
	make_source
	stock_btf
	mkdir -p "$out"
	t0=$(date +%s)
	say "building $SCHEDULERS (make -C tools/sched_ext LLVM=-16; cold: a few minutes)"
	nice make -C "$src/tools/sched_ext" -j"$JOBS" O="$out" LLVM=-16 \
		VMLINUX_BTF="$cache/vmlinux.btf" $SCHEDULERS >"$cache/build.log" 2>&1 ||
		{ tail -n 30 "$cache/build.log" >&2; die "tools/sched_ext failed to build; log: $cache/build.log"; }
	# the Makefile links against the host's shared libraries (LDFLAGS on
	# its command line would reach libbpf's shared library too): relink
	# each scheduler -static from its object, as the Makefile does
	mkdir -p "$ship"
	for s in $SCHEDULERS; do
		[ "$ship/$s" -nt "$out/build/bin/$s" ] && continue
		nice clang-16 --target=x86_64-linux-gnu -static -o "$out/$s.static" \
			"$out/build/obj/sched_ext/$s.o" "$out/build/obj/libbpf/libbpf.a" -lelf -lz -lpthread \
			>>"$cache/build.log" 2>&1 || die "$s does not link -static; log: $cache/build.log"
		strip --strip-debug -o "$ship/$s" "$out/$s.static"
	done
	install -m 0755 "$BPFLOCK_ROOT/tests/sched_ext/guest.sh" "$ship/guest.sh"
	say "schedulers built in $(($(date +%s) - t0)) s: $ship"
}

# One guest per kernel, every scheduler in turn.
run_guest() {
	local v=$1 img t0 rc=0
	img=$(kernel_image "$v")
	say "running $SCHEDULERS on $v-6.12 (${SCX_LOAD_SECONDS:-10} s of load each)"
	t0=$(date +%s)
	"$BPFLOCK_ROOT/scripts/vm.sh" --kernel "$img" --initrd "$initrd" --name "$v" \
		--add "$ship" --cmd "$guest_env sh ./guest.sh $v $SCHEDULERS" \
		--timeout "${VM_TIMEOUT:-3600}" --log "$results/$v-console.log" --out "$results/$v-raw.txt" \
		$([ -n "${VERBOSE:-}" ] || echo --quiet) || rc=$?
	grep -E '^scx(-first)? ' "$results/$v-raw.txt" >"$results/$v-results.txt" || true
	say "$v: guest ran for $(($(date +%s) - t0)) s (status $rc)"
	[ "$rc" -eq 0 ] || say "$v: the guest failed (status $rc); console: $results/$v-console.log"
	return $rc
}

# A field of a scheduler's result line: field KERNEL SCHEDULER KEY
# (reason, the last field, runs to the end of the line).
field() {
	awk -v s="$2" -v k="$3" '$0 ~ "^scx " && index($0, " sched=" s " ") {
		if (k == "reason") { i = index($0, " reason="); print substr($0, i + 8); exit }
		n = split($0, f, " ")
		for (i = 1; i <= n; i++) if (index(f[i], k "=") == 1) { print substr(f[i], length(k) + 2); exit }
	}' "$results/$1-results.txt" 2>/dev/null
}

# What a kernel should do with a scheduler: run it, or refuse it cleanly
# (scx_flatcg on baseline-6.12: its cgroup tree needs the lock).
expected() {
	if [ "$1" = baseline ] && [ "$2" = scx_flatcg ]; then echo refused; else echo runs; fi
}

# The verdict the guest gave (runs, refused, or what went wrong).
verdict() { field "$1" "$2" verdict; }

# Why the kernel ejected a scheduler's first run, when it did (the guest
# then ran it again: slow once, stuck or wrong twice).
first_ejection() {
	awk -v s="$2" '$0 ~ "^scx-first " && index($0, " sched=" s " ") {
		i = index($0, " reason="); print substr($0, i + 8); exit }' "$results/$1-results.txt" 2>/dev/null
}

# One table cell: enabled?, counters (first -> last), load, detach.
cell() {
	local v=$1 s=$2 vd
	vd=$(verdict "$v" "$s")
	case "$vd" in
	'') echo "no result" ;;
	refused) echo "refused cleanly: \`$(field "$v" "$s" reason)\`" ;;
	*) printf 'enabled %s (%s s); %s %s -> %s (moved: %s); load %s in %s s (rounds %s); detach %s' \
		"$(field "$v" "$s" enabled)" "$(field "$v" "$s" enable_s)" "$(field "$v" "$s" counters)" \
		"$(field "$v" "$s" first)" "$(field "$v" "$s" last)" "$(field "$v" "$s" moved)" \
		"$(field "$v" "$s" load)" "$(field "$v" "$s" load_s)" "$(field "$v" "$s" rounds | tr ',' ' ')" \
		"$(field "$v" "$s" detach)"
		[ "$vd" = runs ] || printf '; **%s** %s' "$vd" "$(field "$v" "$s" reason)"
		[ -z "$(first_ejection "$v" "$s")" ] ||
			printf '; second run: the first was ejected (%s)' "$(first_ejection "$v" "$s")" ;;
	esac
}

# The table, and the judgement: each (kernel, scheduler) as expected, and
# ours as stock.
judge() {
	local v s row header sep bad=0 e got first
	header="| scheduler |" sep="|---|"
	for v in "${kernels[@]}"; do
		header+=" $v-6.12 |" sep+="---|"
	done
	{
		echo "$header"
		echo "$sep"
		for s in $SCHEDULERS; do
			row="| $s |"
			for v in "${kernels[@]}"; do
				row+=" $(cell "$v" "$s") |"
			done
			echo "$row"
		done
		echo
		echo "enabled: state \"enabled\" (seconds from the start); the scheduler's own counters at its"
		echo "first and last sample; load: ${SCX_LOAD_SECONDS:-10} s of 6 busy and 3 sleeping processes in cgroups"
		echo "a, b, c of cpu.weight 100, 300, 50 (rounds: the busy processes' rounds per cgroup);"
		echo "detach: SIGINT, \"unregistered from user space\", state \"disabled\"."
	} >"$results/table.md"
	for v in "${kernels[@]}"; do
		for s in $SCHEDULERS; do
			e=$(expected "$v" "$s") got=$(verdict "$v" "$s")
			first=$(first_ejection "$v" "$s")
			if [ "$got" = "$e" ]; then
				echo "ok $v $s: $got${first:+ (second run: the first was ejected, $first; slow, not stuck)}"
			else
				echo "not ok $v $s: expected $e, got ${got:-no result}"
				bad=1
			fi
			if [ "$v" = ours ] && [ -f "$results/stock-results.txt" ] && [ "$got" != "$(verdict stock "$s")" ]; then
				echo "not ok ours $s: stock-6.12 gave $(verdict stock "$s"), ours-6.12 $got"
				bad=1
			fi
		done
	done
	return $bad
}

main() {
	mkdir -p "$BPFLOCK_CACHE"
	exec 9>"$BPFLOCK_CACHE/sched_ext.lock"
	if ! flock -n 9; then
		say "another sched_ext run is going on (lock $BPFLOCK_CACHE/sched_ext.lock): waiting for it"
		flock 9
	fi
	local start v status=0
	start=$(date +%s)
	build
	if [ "$build_only" -eq 1 ]; then
		echo "$ship"
		return 0
	fi
	# the guests' base initramfs (busybox, /init): build-tests.sh's, or
	# SCX_INITRD (one already built, as with the images)
	if [ -n "${SCX_INITRD:-}" ]; then
		[ -f "$SCX_INITRD" ] || die "SCX_INITRD: no such archive '$SCX_INITRD'"
		initrd=$SCX_INITRD
	else
		initrd=$("$BPFLOCK_ROOT/scripts/build-tests.sh")/initramfs.cpio
	fi
	guest_env="SCX_LOAD_SECONDS=${SCX_LOAD_SECONDS:-10} SCX_WAIT_SECONDS=${SCX_WAIT_SECONDS:-300}"
	mkdir -p "$results"
	rm -f "$results"/*-results.txt "$results"/*-raw.txt "$results"/*-console.log "$results/table.md"
	for v in "${kernels[@]}"; do
		run_guest "$v" || status=1
	done
	for v in "${kernels[@]}"; do
		if ! "$BPFLOCK_ROOT/scripts/splats.sh" "$results/$v-console.log"; then
			say "kernel splat on $v-6.12: $results/$v-console.log"
			status=1
		fi
	done
	judge || status=1
	cat "$results/table.md"
	say "sched_ext took $(($(date +%s) - start)) s; results in $results"
	[ "$status" -eq 0 ] || say "sched_ext: not as expected (above); consoles: $results/KERNEL-console.log"
	return $status
}

# the whole script is read before it runs: editing it meanwhile is safe
main "$@"; exit
