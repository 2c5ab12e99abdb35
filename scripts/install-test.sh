#!/usr/bin/env bash
# The install test: a Debian 12 root made with debootstrap from Debian's
# packages (systemd as init, bpftrace, bpftool), our linux-image .deb
# installed in it with dpkg -i (its postinst makes the initramfs-tools
# initramfs), booted in QEMU from that disk to multi-user.target; then the
# same root with Debian's own linux-image of the tree version. On each,
# bpflock-install-test.service (guest/install/) checks systemd and its BPF
# programs, runs every bpftrace tool and one-liner under a small load,
# shows a tracing program skipped inside lock regions, runs
# bpflock-check, and prints one result line per row. The rows of both
# boots are compared: a different outcome fails unless it is listed with
# its reason in config/install-differences.txt.
#
# usage: [BASE=6.1|6.12] scripts/install-test.sh   (after make deb of that base;
#        results in build/results/install, or build/results/BASE/install)
# env:   SUITE (bookworm), MIRROR (the apt source of this machine),
#        CONTROL=0 to skip the Debian-kernel boot (and the comparison),
#        BOOT_TIMEOUT (2400 s per boot), RUN_SECONDS (2 s per tool, after one round of load)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$BPFLOCK_ROOT/scripts/deps.sh" debian
[ "$(id -u)" -eq 0 ] || die "the install test needs root (debootstrap, chroot, mounts): run it with sudo"
debs=$(deb_dir)
[ -f "$debs/RELEASE" ] || die "no packages in $debs: run BASE=$BASE make deb first"
release=$(cat "$debs/RELEASE")
(cd "$debs" && sha256sum --quiet -c SHA256SUMS) || die "$debs/SHA256SUMS does not match: run BASE=$BASE make deb again"

suite=${SUITE:-bookworm}
mirror=${MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}
results=$(results_root)/install
differences=$BPFLOCK_ROOT/config/install-differences.txt
[ -f "$differences" ] || die "$differences is missing: it lists the intended differences (restore it from git)"
mkdir -p "$results"
rm -f "$results"/*-results.txt "$results"/table.md "$results"/times.txt
work=$BPFLOCK_CACHE/install-test
start=$(date +%s)

# The test binary that shows a tracing program skipped inside lock
# regions (guard's nmi_no_lock case), built with the tests.
guard=$BPFLOCK_CACHE/tests/$(installed_version)/bin/guard
[ -x "$guard" ] || guard=$("$BPFLOCK_ROOT/scripts/build-tests.sh")/bin/guard
[ -x "$guard" ] || die "no guard test binary at $guard: run scripts/build-tests.sh"

# The debootstrap root is kept between runs, one per package list; every
# run installs into a copy. Debian's linux-image packages depend on
# linux-base; systemd-sysv makes systemd PID 1; dbus for logind;
# bpftrace and bpftool are what the checks run (bpftrace's tcp* tools and
# runqlat include libc6-dev's headers); iproute2, procps and
# netcat-openbsd make the load.
include=initramfs-tools,kmod,udev,linux-base,systemd,systemd-sysv,dbus,bpftrace,bpftool,libc6-dev,iproute2,procps,netcat-openbsd
base=$work/base-$suite-$(echo "$include" | sha256sum | cut -c1-12)
if [ "$(cat "$base/.bpflock-ready" 2>/dev/null)" != "$include" ]; then
	say "debootstrap $suite from $mirror into $base (~2 min)"
	t=$(date +%s)
	rm -rf "$base"
	mkdir -p "$work"
	debootstrap --variant=minbase --include="$include" \
		"$suite" "$base" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		die "debootstrap failed; log: $work/debootstrap.log"
	echo "$include" >"$base/.bpflock-ready"
	echo "debootstrap $(($(date +%s) - t)) s" >>"$results/times.txt"
fi

mounted=()
cleanup() {
	local m
	for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT

# Copy the root, install the given .deb files with dpkg -i inside it, add
# the check, the checks' units and guard, and make an ext4 disk from it.
make_disk() {
	local name=$1 root=$work/root-$1 d
	shift
	rm -rf "$root"
	cp -a "$base" "$root"
	for d in proc sys dev; do
		mount --bind "/$d" "$root/$d"
		mounted=("$root/$d" "${mounted[@]}")
	done
	mkdir -p "$root/tmp/debs"
	cp "$@" "$root/tmp/debs/"
	say "$name: dpkg -i $(cd "$root/tmp/debs" && echo *.deb)"
	chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
		dpkg -i $(cd "$root/tmp/debs" && printf '/tmp/debs/%s ' *.deb) \
		>"$results/$name-dpkg.log" 2>&1 || die "dpkg -i failed in the $name root; log: $results/$name-dpkg.log"
	for d in dev sys proc; do umount -l "$root/$d"; done
	mounted=()
	rm -rf "$root/tmp/debs"
	install -m 0755 "$debs/bpflock-check" "$root/usr/local/sbin/bpflock-check"
	install -D -m 0755 "$guard" "$root/usr/local/libexec/bpflock/guard"
	install -m 0755 "$BPFLOCK_ROOT/guest/install/bpflock-install-check" "$root/usr/local/sbin/"
	install -m 0644 "$BPFLOCK_ROOT"/guest/install/*.service "$root/etc/systemd/system/"
	systemctl --root="$root" --quiet enable bpflock-install-test.service bpflock-bpf-demo.service
	# The checks print on ttyS0: no login prompt there.
	systemctl --root="$root" --quiet mask serial-getty@ttyS0.service
	ls "$root"/boot/vmlinuz-* "$root"/boot/initrd.img-* >"$results/$name-boot.txt" ||
		die "$name: the package left no kernel or initramfs in /boot"
	rm -f "$work/$name.img"
	mke2fs -q -t ext4 -L root -d "$root" "$work/$name.img" 3G ||
		die "mke2fs -d failed for $name"
	rm -rf "$root"
}

# Boot a disk with the kernel and initramfs it holds, systemd as PID 1;
# keep the result rows in $results/<name>-results.txt.
boot_disk() {
	local name=$1 rel=$2 log=$results/$1-console.log accel t rows
	local mnt=$work/boot-$name
	# The kernel and initrd QEMU loads, taken out of the disk image.
	rm -rf "$mnt"
	mkdir -p "$mnt"
	debugfs -R "dump /boot/vmlinuz-$rel $mnt/vmlinuz" "$work/$name.img" >/dev/null 2>&1
	debugfs -R "dump /boot/initrd.img-$rel $mnt/initrd" "$work/$name.img" >/dev/null 2>&1
	[ -s "$mnt/vmlinuz" ] && [ -s "$mnt/initrd" ] || die "$name: no /boot/vmlinuz-$rel or initrd on $work/$name.img"
	accel=$("$BPFLOCK_ROOT/scripts/vm.sh" --print-accel --kernel "$mnt/vmlinuz" --initrd "$mnt/initrd")
	[ "$accel" = kvm ] && accel=kvm || accel=tcg,thread=multi
	say "$name: booting $rel from its disk with systemd; the checks take ~15 min under TCG (console: $log)"
	t=$(date +%s)
	timeout -k 5 "${BOOT_TIMEOUT:-2400}" qemu-system-x86_64 -accel "$accel" -cpu max \
		-smp 4 -m 2G -nographic -no-reboot -nic none \
		-kernel "$mnt/vmlinuz" -initrd "$mnt/initrd" \
		-drive "file=$work/$name.img,if=virtio,format=raw" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 loglevel=4 systemd.setenv=RUN_SECONDS=${RUN_SECONDS:-2}" \
		</dev/null >"$log" 2>&1 || true
	echo "boot $name $(($(date +%s) - t)) s" >>"$results/times.txt"
	rm -rf "$mnt"
	tr -d '\r' <"$log" | grep -a '^install-test: ' >"$results/$name-lines.txt" || true
	sed -n 's/^install-test: \(unit\|tool\|oneliner\|check\) /\1 /p' "$results/$name-lines.txt" >"$results/$name-results.txt"
	if "$BPFLOCK_ROOT/scripts/splats.sh" "$log" 2>"$results/$name-splats.txt"; then
		echo "check console-splats ok none in the console log" >>"$results/$name-results.txt"
	else
		echo "check console-splats fail $(grep -a -m 1 -v '^\[bpflock\]' "$results/$name-splats.txt")" >>"$results/$name-results.txt"
	fi
	grep -q '^install-test: info done' "$results/$name-lines.txt" ||
		echo "check finished fail the checks did not finish in ${BOOT_TIMEOUT:-2400} s" >>"$results/$name-results.txt"
	grep '^install-test: info \|^install-test: bpftool' "$results/$name-lines.txt" | sed 's/^install-test: /  /' >&2 || true
	rows=$(wc -l <"$results/$name-results.txt")
	say "$name: $rows rows, $(grep -c '^[^ ]* [^ ]* fail ' "$results/$name-results.txt") fail, in $(($(date +%s) - t)) s"
}

# The outcome of a row (kind/name) on a kernel, "missing" if absent.
outcome() {
	awk -v k="${2%%/*}" -v n="${2#*/}" '$1 == k && $2 == n { print $3; f = 1; exit } END { if (!f) print "missing" }' \
		"$results/$1-results.txt"
}
detail() {
	awk -v k="${2%%/*}" -v n="${2#*/}" '$1 == k && $2 == n { $1 = $2 = $3 = ""; sub(/^ +/, ""); print; exit }' \
		"$results/$1-results.txt" | sed 's/|/\\|/g'
}

# The intended difference of a row: "<Debian's outcome> <ours> <reason>".
intended() {
	awk -v r="$1" '$1 == r { $1 = ""; sub(/^ +/, ""); print; exit }' <(grep -v '^#' "$differences")
}

# One table row per check, Debian's kernel against ours; a different
# outcome that is not listed fails, and so does a unit that failed on
# either kernel.
compare() {
	local drel=$1 row d o why status=0 same
	{
		echo "| row | Debian's $drel | ours $release | |"
		echo "|---|---|---|---|"
	} >"$results/table.md"
	for row in $(cat "$results/debian-results.txt" "$results/ours-results.txt" | awk '{ print $1 "/" $2 }' | awk '!s[$0]++'); do
		d=$(outcome debian "$row")
		o=$(outcome ours "$row")
		why=$(intended "$row")
		if [ "$d" = "$o" ]; then
			same=same
		elif [ -n "$why" ] && [ "$(echo "$why" | cut -d' ' -f1-2)" = "$d $o" ]; then
			same="intended: $(echo "$why" | cut -d' ' -f3-)"
		else
			same="**DIFFERS**"
			say "DIFFERENCE $row: Debian's $d ($(detail debian "$row")), ours $o ($(detail ours "$row"))"
			status=1
		fi
		case "$row:$d:$o" in
		unit/*:fail:* | unit/*:*:fail | unit/*:missing:* | unit/*:*:missing | check/console-splats:*:fail | check/finished:*)
			say "FAIL $row: Debian's $d, ours $o"
			status=1
			;;
		esac
		echo "| $row | $d: $(detail debian "$row") | $o: $(detail ours "$row") | $same |" >>"$results/table.md"
	done
	return $status
}

status=0
make_disk ours "$debs"/linux-image-"$release"_*.deb
boot_disk ours "$release"
if grep -q '^check bpflock-check ok ' "$results/ours-results.txt" &&
	grep -aq "^install-test: info running $release" "$results/ours-lines.txt"; then
	say "PASS ours: $release installed with dpkg -i, booted from disk with systemd, bpflock-check found our lock"
else
	say "FAIL ours: bpflock-check: $(grep '^check bpflock-check ' "$results/ours-results.txt" || echo missing); console: $results/ours-console.log"
	status=1
fi

if [ "${CONTROL:-1}" = 1 ]; then
	deb=$("$BPFLOCK_ROOT/scripts/debian-kernel.sh")
	deb=$(ls "$(dirname "$(dirname "$(dirname "$deb")")")"/*.deb)
	drel=$(dpkg-deb -f "$deb" Package | sed 's/^linux-image-//')
	make_disk debian "$deb"
	boot_disk debian "$drel"
	if compare "$drel"; then
		say "PASS compare: every row of Debian's $drel and ours has the same outcome or an intended difference ($results/table.md)"
	else
		say "FAIL compare: see the lines above and $results/table.md; the guests' logs: $results/*-console.log"
		status=1
	fi
elif awk '$3 == "fail" && ($1 == "unit" || $2 == "console-splats" || $2 == "finished")' \
	"$results/ours-results.txt" | grep -q .; then
	say "FAIL ours: a unit failed, a splat, or the checks did not finish: $results/ours-results.txt"
	status=1
fi
echo "install-test $(($(date +%s) - start)) s" >>"$results/times.txt"
say "install test took $(($(date +%s) - start)) s ($(paste -sd, "$results/times.txt" | sed 's/,/, /g'))"
exit $status
