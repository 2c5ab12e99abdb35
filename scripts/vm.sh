#!/usr/bin/env bash
# Boot a kernel under QEMU with the bpflock initramfs, run one command in the
# guest and exit with the guest command's status. The status comes back on a
# second serial port, never from console text; no status means failure.
#
# usage: scripts/vm.sh --kernel BZIMAGE --initrd BASE.cpio [--cmd 'CMD' | --shell]
#                      [--add DIR] [--cpus N] [--timeout SEC] [--log FILE] [--quiet]
#                      [--name LABEL] [--out FILE] [--icount]
#   --out FILE  save what the guest wrote to /dev/ttyS1 (results, status)
#   --print-accel  print the accelerator that would be used (kvm, tcg) and exit
#   --add DIR   copy DIR's files into the guest's /bpflock (its working directory)
#   --quiet     do not stream the console; it is still written to --log
#   --icount    TCG with instruction counting (-icount shift=0,sleep=off): guest
#               time advances one nanosecond per instruction executed, so
#               in-guest timings are instruction counts, whatever the host's load
# env:   VM_TIMEOUT (1800 s, the whole run), VM_BOOT_TIMEOUT (120 s, to the
#        guest's init); either watchdog says whether the guest was still
#        writing (slow) or silent (stuck) when it fired
# exit: the command's status; 124 timeout; 125 no status (crash, panic, hang)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kernel= initrd= cmd= shell=0 add= cpus=${VM_CPUS:-4} timeout=${VM_TIMEOUT:-1800}
boot_timeout=${VM_BOOT_TIMEOUT:-120} log= quiet=0 mem=${VM_MEM:-2G} name=guest out= print_accel=0
icount=0
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	--cmd) cmd=$2; shift 2 ;;
	--shell) shell=1; shift ;;
	--add) add=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	--quiet) quiet=1; shift ;;
	--name) name=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--print-accel) print_accel=1; shift ;;
	--icount) icount=1; shift ;;
	*) die "unknown argument '$1' (see the usage line in $0)" ;;
	esac
done
[ -f "$kernel" ] || die "--kernel: no such image '$kernel'"
[ -f "$initrd" ] || die "--initrd: no such archive '$initrd'"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: apt-get install qemu-system-x86"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$BPFLOCK_ROOT/build"
log=${log:-$BPFLOCK_ROOT/build/last-console.log}
status=$work/status

# Per-run archive appended to the base one: the kernel unpacks both.
make_run_archive() {
	local root=$work/root
	mkdir -p "$root/bpflock"
	if [ -n "$add" ]; then
		[ -d "$add" ] || die "--add: '$add' is not a directory"
		cp -a "$add"/. "$root/bpflock/"
	fi
	printf '%s\n' "$cmd" >"$root/bpflock/cmd"
	[ "$shell" -eq 0 ] || touch "$root/bpflock/interactive"
	(cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$work/run.cpio"
	cat "$initrd" "$work/run.cpio" >"$work/initrd.cpio"
}

# KVM only when a short probe boot works; the answer is cached per host.
choose_accel() {
	local cache=$BPFLOCK_CACHE/accel-$(uname -r)-$(qemu-system-x86_64 --version | head -1 | tr -cd '0-9.')
	if [ -n "${VM_ACCEL:-}" ]; then
		echo "$VM_ACCEL"
		return
	fi
	if [ -f "$cache" ]; then
		cat "$cache"
		return
	fi
	local accel=tcg
	if [ ! -e /dev/kvm ]; then
		say "no /dev/kvm: using TCG (load kvm_intel or kvm_amd, or enable nested virtualisation, for KVM)"
	elif [ -w /dev/kvm ]; then
		say "probing KVM with a 20 s boot (result cached in $cache)"
		if VM_ACCEL=kvm timeout 40 "$0" --kernel "$kernel" --initrd "$initrd" \
			--cmd true --cpus 1 --timeout 20 --quiet >/dev/null 2>&1; then
			accel=kvm
		else
			say "KVM probe failed: using TCG"
		fi
	fi
	mkdir -p "$BPFLOCK_CACHE"
	echo "$accel" >"$cache"
	echo "$accel"
}

accel=$(choose_accel)
if [ "$print_accel" -eq 1 ]; then
	echo "$accel"
	exit 0
fi
if [ "$icount" -eq 1 ]; then
	# instruction counting needs single-threaded TCG, even where KVM works
	accel_args=(-accel tcg -icount shift=0,sleep=off -cpu max)
elif [ "$accel" = kvm ]; then
	accel_args=(-accel kvm -cpu max)
else
	accel_args=(-accel tcg,thread=multi -cpu max)
fi
make_run_archive
: >"$log"
: >"$status"

if [ "$shell" -eq 1 ]; then
	serial0=(-serial mon:stdio)
else
	serial0=(-serial "file:$log")
fi
qemu_args=(
	qemu-system-x86_64 "${accel_args[@]}" -smp "$cpus" -m "$mem"
	-display none -vga none -monitor none -no-reboot -net none
	-kernel "$kernel" -initrd "$work/initrd.cpio"
	-append "console=ttyS0 panic=-1 oops=panic rdinit=/init ${VM_APPEND:-}"
	"${serial0[@]}" -serial "file:$status"
)

# Why a watchdog fired, from when FILE last grew: output up to the end
# means a slow guest (a busy host runs its vCPUs less), none for longer
# than the guest can be quiet (LIMIT s) a stuck one. While booting the
# console never pauses long; a test case prints its result within its own
# timeout (BPFLOCK_TEST_TIMEOUT, 300 s).
last_output() { # FILE WHAT LIMIT
	local idle=$(($(date +%s) - $(stat -c %Y "$1")))
	if [ ! -s "$1" ]; then
		echo "no $2 at all: stuck"
	elif [ "$idle" -le "$3" ]; then
		echo "$2 last written ${idle} s before: slow, not stuck; raise the timeout on a busy host"
	else
		echo "no $2 for the last ${idle} s: stuck"
	fi
}

[ "$quiet" -eq 1 ] || say "booting $name ($accel, $cpus vCPUs)"
if [ "$shell" -eq 1 ]; then
	"${qemu_args[@]}" || true
else
	timeout -k 5 "$timeout" "${qemu_args[@]}" &
	qpid=$!
	if [ "$quiet" -eq 0 ]; then
		tail -n +1 -f "$log" --pid "$qpid" &
	fi
	# Boot watchdog: the guest's init announces itself on the console.
	waited=0
	while kill -0 "$qpid" 2>/dev/null && ! grep -q '^bpflock-guest:' "$log"; do
		if [ "$waited" -ge "$boot_timeout" ]; then
			say "guest did not boot within ${boot_timeout} s ($(last_output "$log" console 30)); killing QEMU"
			kill "$qpid" 2>/dev/null || true
			break
		fi
		sleep 1
		waited=$((waited + 1))
	done
	rc=0
	wait "$qpid" || rc=$?
	sleep 0.2
	[ -z "$out" ] || tr -d '\r' <"$status" >"$out"
	if [ "$rc" -eq 124 ]; then
		say "guest timed out after ${timeout} s ($(last_output "$status" results $((${BPFLOCK_TEST_TIMEOUT:-300} + 30)))); console log: $log"
		exit 124
	fi
fi
guest_rc=$(tr -d '\r' <"$status" | sed -n 's/^BPFLOCK_STATUS=\([0-9]*\)$/\1/p' | tail -n 1)
if [ -z "$guest_rc" ]; then
	[ "$shell" -eq 1 ] && exit 0
	say "guest reported no status (crash, panic or hang); console log: $log"
	exit 125
fi
exit "$guest_rc"
