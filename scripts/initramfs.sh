#!/usr/bin/env bash
# Build the guest's base initramfs: busybox, /init and the test binaries.
# usage: scripts/initramfs.sh OUTPUT.cpio TESTS_OUT_DIR  (its bin/, demo/ and sbin/)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: scripts/initramfs.sh OUTPUT.cpio TESTS_OUT_DIR"
output=$1
tests=$2
busybox=/bin/busybox
[ -x "$busybox" ] && file_is_static=$(ldd "$busybox" 2>&1 | grep -c 'not a dynamic' || true)
[ "${file_is_static:-0}" -ge 1 ] || die "$busybox is not a static busybox: apt-get install busybox-static"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,bpflock,tests}
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
install -m 0755 "$BPFLOCK_ROOT/guest/init" "$root/init"
mkdir -p "$root/tests/bin"
cp -a "$tests/bin"/. "$root/tests/bin/"
cp "$tests/demo/demo" "$tests/demo/bench" "$tests/demo/insn_counts" "$root/tests/"
# The tree's bpftool (tests/bpftool.c); not in bin/, whose files all run as tests.
install -m 0755 "$tests/sbin/bpftool" "$root/usr/sbin/bpftool"
install -m 0755 "$tests/sbin/bpflock-check" "$root/usr/sbin/bpflock-check"
install -m 0755 "$BPFLOCK_ROOT/guest/run-suite.sh" "$root/tests/run-suite.sh"
(cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$output.tmp"
mv "$output.tmp" "$output"
