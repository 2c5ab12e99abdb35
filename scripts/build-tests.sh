#!/usr/bin/env bash
# Build the guest test binaries against a tree of the base (its UAPI
# headers and tools/lib/bpf) and pack the base initramfs. Prints the
# output directory ($BPFLOCK_CACHE/tests/VERSION: one per base version).
# The tree is ours where the base has it (its libbpf and bpftool carry
# locked_map and the lock commands), else stock (6.12 today; the tests
# then link tests/lib/no_locked_map.c).
# usage: [BASE=6.1|6.12] scripts/build-tests.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(installed_version)
[ -n "$ver" ] || die "$SOURCE_PACKAGE is not installed: run scripts/deps.sh"
# The UAPI is the same in all variants, so the tests are built once for
# all of them; the tree exists once scripts/kernel.sh built that variant.
variant=$(base_variants | tail -n 1)
[ "$variant" != baseline ] || variant=stock
ksrc=$BPFLOCK_CACHE/trees/$ver/$variant
[ -d "$ksrc" ] || "$BPFLOCK_ROOT/scripts/kernel.sh" "$variant" >/dev/null
out=$BPFLOCK_CACHE/tests/$ver
mkdir -p "$BPFLOCK_CACHE/tests"
# one test build per base at a time: a second run waits, then finds it
# up to date (taken before the tree's lock, as scripts/kernel.sh does)
exec 6>"$out.lock"
if ! flock -n -x 6; then
	say "waiting for another run on this host that builds the tests ($out.lock)"
	flock -x 6
fi
tree_lock -s "$ksrc"
# What was built from another preparation of the tree (its libbpf,
# bpftool, headers) goes: make's timestamps cannot tell, since a tree
# re-prepared while a build read it left objects newer than the patches
# they lack ("undefined reference to locked_map__add").
if [ "$(cat "$out/.tree-key" 2>/dev/null)" != "$(cat "$ksrc.tree-key" 2>/dev/null)" ]; then
	[ ! -d "$out" ] || say "the tree $ksrc changed since the last test build: building everything again"
	rm -rf "$out"
	mkdir -p "$out"
	cat "$ksrc.tree-key" >"$out/.tree-key" 2>/dev/null || true
fi
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
