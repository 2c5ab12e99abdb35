#!/usr/bin/env bash
# `make deb`: installable Debian packages of a kernel variant (default ours)
# built from Debian's own config for the tree version, reduced with make
# localmodconfig. Leaves linux-image, linux-headers (and linux-libc-dev,
# linux-image-dbg), SHA256SUMS and the static bpflock-check in build/deb
# (6.1) or build/BASE/deb.
#
# usage: [BASE=6.1|6.12] scripts/deb.sh [ours|stock|baseline]
# env:   MODULES=file   the modules to keep (lsmod output or one name per
#                       line); default: the modules loaded on this machine,
#                       or, when it has none (a container), the QEMU guest's
#                       list config/debian-guest.modules
#        DEBIAN_CONFIG  which of /usr/src/linux-config-BASE/config.*.xz
#                       (default amd64_none_amd64, Debian's linux-image-amd64)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

variant=${1:-ours}
case "$variant" in ours | stock | baseline) ;; *) die "usage: scripts/deb.sh [ours|stock|baseline]" ;; esac
"$BPFLOCK_ROOT/scripts/deps.sh" debian

if [ -n "${MODULES:-}" ]; then
	[ -f "$MODULES" ] || die "MODULES=$MODULES: no such file (give lsmod output or one module per line)"
	BPFLOCK_MODULES=$(realpath "$MODULES")
elif [ -r /proc/modules ] && [ -s /proc/modules ]; then
	BPFLOCK_MODULES=$BPFLOCK_CACHE/deb-modules.$(hostname)
	lsmod >"$BPFLOCK_MODULES"
	say "keeping the $(($(wc -l <"$BPFLOCK_MODULES") - 1)) modules loaded here (MODULES=file to choose)"
else
	BPFLOCK_MODULES=$BPFLOCK_ROOT/config/debian-guest.modules
	say "no modules loaded here: keeping the QEMU guest's list $BPFLOCK_MODULES (MODULES=file to choose)"
fi
export BPFLOCK_MODULES

start=$(date +%s)
image=$("$BPFLOCK_ROOT/scripts/kernel.sh" "$variant" debian)
out=$(dirname "$(dirname "$(dirname "$(dirname "$image")")")")
tree=$(dirname "$out")
tree_lock -s "$tree"
pkgver=$(debian_pkgversion "$variant")
release=$(make -s -C "$tree" O="$out" LOCALVERSION= kernelrelease)
say "packaging $release as $pkgver"
rm -f "$tree"/*.deb "$tree"/*.buildinfo "$tree"/*.changes
# Same flags as scripts/kernel.sh's build, so packaging compiles nothing.
make -s -C "$tree" O="$out" -j"$JOBS" CC="ccache gcc" \
	KBUILD_BUILD_TIMESTAMP="2026-01-01 00:00 UTC" KBUILD_BUILD_USER=bpflock KBUILD_BUILD_HOST=bpflock \
	LOCALVERSION= KDEB_PKGVERSION="$pkgver" KDEB_COMPRESS=gzip bindeb-pkg >"$out/deb.log" 2>&1 || {
	tail -n 30 "$out/deb.log" >&2
	die "make bindeb-pkg failed; full log: $out/deb.log"
}

dest=$(deb_dir)
rm -rf "$dest"
mkdir -p "$dest"
mv "$tree"/*.deb "$dest/"
rm -f "$tree"/*.buildinfo "$tree"/*.changes
tests=$("$BPFLOCK_ROOT/scripts/build-tests.sh")
install -m 0755 "$tests/sbin/bpflock-check" "$dest/bpflock-check"
(cd "$dest" && sha256sum -- *.deb bpflock-check >SHA256SUMS)
echo "$release" >"$dest/RELEASE"
say "packages of $variant ($release, $pkgver) in $dest, $(($(date +%s) - start)) s:"
(cd "$dest" && ls -s --block-size=M -- *.deb bpflock-check) >&2
