#!/usr/bin/env bash
# The install test: a minimal Debian root made with debootstrap from
# Debian's packages, our linux-image .deb installed in it with dpkg -i (its
# postinst makes the initramfs-tools initramfs), booted in QEMU from that
# disk, where bpflock-check must find our lock. As a control, the same root
# with Debian's own linux-image of the tree version must boot and be told
# "NOT bpflock".
#
# usage: scripts/install-test.sh     (after make deb; results in build/results/install)
# env:   SUITE (bookworm), MIRROR (the apt source of this machine),
#        CONTROL=0 to skip the Debian-kernel control boot
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$BPFLOCK_ROOT/scripts/deps.sh" debian
[ "$(id -u)" -eq 0 ] || die "the install test needs root (debootstrap, chroot, mounts): run it with sudo"
debs=$BPFLOCK_ROOT/build/deb
[ -f "$debs/RELEASE" ] || die "no packages in $debs: run make deb first"
release=$(cat "$debs/RELEASE")
(cd "$debs" && sha256sum --quiet -c SHA256SUMS) || die "$debs/SHA256SUMS does not match: run make deb again"

suite=${SUITE:-bookworm}
mirror=${MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}
results=$BPFLOCK_ROOT/build/results/install
mkdir -p "$results"
work=$BPFLOCK_CACHE/install-test
base=$work/base-$suite
start=$(date +%s)

# The debootstrap root is kept between runs; every run installs into a copy.
# Debian's linux-image packages depend on linux-base.
include=initramfs-tools,kmod,udev,linux-base
if [ "$(cat "$base/.bpflock-ready" 2>/dev/null)" != "$include" ]; then
	say "debootstrap $suite from $mirror into $base (~2 min)"
	rm -rf "$base"
	mkdir -p "$work"
	debootstrap --variant=minbase --include="$include" \
		"$suite" "$base" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		die "debootstrap failed; log: $work/debootstrap.log"
	echo "$include" >"$base/.bpflock-ready"
fi

mounted=()
cleanup() {
	local m
	for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT

# Copy the root, install the given .deb files with dpkg -i inside it, add
# the check and an init that runs it, and make an ext4 disk from it.
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
	cat >"$root/usr/local/sbin/bpflock-install-init" <<'INIT'
#!/bin/sh
# PID 1 of the install test: say what booted, run the check, power off.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
echo "install-test: running $(uname -r): $(uname -v)"
echo "install-test: root $(awk '$2 == "/" { print $1, $3 }' /proc/mounts)"
echo "install-test: modules the initramfs loaded: $(awk '{ print $1 }' /proc/modules | sort | tr '\n' ' ')"
/usr/local/sbin/bpflock-check
echo "install-test: bpflock-check status $?"
sync
echo o >/proc/sysrq-trigger
sleep 10
INIT
	chmod 0755 "$root/usr/local/sbin/bpflock-install-init"
	ls "$root"/boot/vmlinuz-* "$root"/boot/initrd.img-* >"$results/$name-boot.txt" ||
		die "$name: the package left no kernel or initramfs in /boot"
	rm -f "$work/$name.img"
	mke2fs -q -t ext4 -L root -d "$root" "$work/$name.img" 3G ||
		die "mke2fs -d failed for $name"
}

# Boot a disk with the kernel and initramfs it holds; print the check's status.
boot_disk() {
	local name=$1 rel=$2 root=$work/root-$1 log=$results/$1-console.log
	say "$name: booting $rel from its disk (virtio, ext4) with its initramfs-tools initramfs"
	local accel
	accel=$("$BPFLOCK_ROOT/scripts/vm.sh" --print-accel --kernel "$root/boot/vmlinuz-$rel" \
		--initrd "$root/boot/initrd.img-$rel")
	[ "$accel" = kvm ] && accel=kvm || accel=tcg,thread=multi
	timeout -k 5 600 qemu-system-x86_64 -accel "$accel" -cpu max \
		-smp 4 -m 2G -nographic -no-reboot \
		-kernel "$root/boot/vmlinuz-$rel" -initrd "$root/boot/initrd.img-$rel" \
		-drive "file=$work/$name.img,if=virtio,format=raw" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 init=/usr/local/sbin/bpflock-install-init" \
		</dev/null >"$log" 2>&1 || true
	grep -a '^install-test:\|^bpflock-check:' "$log" | tr -d '\r' >&2 || true
	sed -n 's/^install-test: bpflock-check status \([0-9]*\).*/\1/p' "$log" | tr -d '\r' | tail -n 1
}

status=0
make_disk ours "$debs"/linux-image-"$release"_*.deb
rc=$(boot_disk ours "$release")
if [ "$rc" = 0 ] && grep -aq "^install-test: running $release" "$results/ours-console.log"; then
	say "PASS ours: $release installed with dpkg -i, booted from disk, bpflock-check found our lock"
else
	say "FAIL ours: bpflock-check status '${rc:-none}'; console: $results/ours-console.log"
	status=1
fi

if [ "${CONTROL:-1}" = 1 ]; then
	deb=$("$BPFLOCK_ROOT/scripts/debian-kernel.sh")
	deb=$(ls "$(dirname "$(dirname "$(dirname "$deb")")")"/*.deb)
	drel=$(dpkg-deb -f "$deb" Package | sed 's/^linux-image-//')
	make_disk debian "$deb"
	rc=$(boot_disk debian "$drel")
	if [ "$rc" = 1 ]; then
		say "PASS control: Debian's $drel booted the same way and bpflock-check said NOT bpflock"
	else
		say "FAIL control: on Debian's $drel bpflock-check status was '${rc:-none}' (want 1); console: $results/debian-console.log"
		status=1
	fi
fi
say "install test took $(($(date +%s) - start)) s"
exit $status
