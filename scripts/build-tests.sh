#!/usr/bin/env bash
# Build the guest test binaries against the "ours" tree (UAPI headers and
# tools/lib/bpf) and pack the base initramfs. Prints the initramfs path.
# usage: scripts/build-tests.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(installed_version)
# The ours tree exists once scripts/kernel.sh ours ran; the UAPI is the
# same in all variants, so the tests are built once for all of them.
ksrc=$BPFLOCK_CACHE/trees/$ver/ours
[ -d "$ksrc" ] || "$BPFLOCK_ROOT/scripts/kernel.sh" ours >/dev/null
out=$BPFLOCK_CACHE/tests/$ver
say "building tests against $ksrc"
make -s -C "$BPFLOCK_ROOT/tests" KSRC="$ksrc" OUT="$out" all >&2 ||
	die "test build failed (see above)"
make -s -C "$BPFLOCK_ROOT/tests" KSRC="$ksrc" OUT="$out" list >"$out/manifest.txt"
# Repack only when a guest file is newer than the archive.
if [ ! -f "$out/initramfs.cpio" ] ||
	[ -n "$(find "$out/bin" "$out/demo" "$out/sbin" "$BPFLOCK_ROOT/guest" -newer "$out/initramfs.cpio" -print -quit)" ]; then
	"$BPFLOCK_ROOT/scripts/initramfs.sh" "$out/initramfs.cpio" "$out"
fi
echo "$out"
