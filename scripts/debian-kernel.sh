#!/usr/bin/env bash
# Fetch Debian's own binary kernel of the tree's version (linux-image-amd64
# at linux-source-6.1's version; on Debian 12, 6.12's is the metapackage
# linux-image-6.12-amd64) and print its vmlinuz path: the stock peer of the
# debian flavour, exactly what a Debian user runs today.
# usage: scripts/debian-kernel.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(installed_version)
dir=$BPFLOCK_CACHE/debian-binary/$ver
if [ ! -f "$dir/.ready" ]; then
	case "$BASE" in
	6.1) meta=linux-image-amd64 ;;
	*) meta=linux-image-$BASE-amd64 ;;
	esac
	pkg=$(apt-cache show "$meta=$ver" 2>/dev/null |
		sed -n 's/^Depends: \(linux-image-[^ ]*\) .*/\1/p' | head -n 1)
	[ -n "$pkg" ] || die "apt has no $meta $ver: run apt-get update (or set DEBIAN_STOCK=build to build stock with Debian's config)"
	say "fetching Debian's $pkg $ver"
	rm -rf "$dir"
	mkdir -p "$dir/root"
	(cd "$dir" && apt-get download -q "$pkg=$ver" >/dev/null) ||
		die "apt-get download $pkg=$ver failed: check the Debian mirror"
	dpkg-deb -x "$dir"/*.deb "$dir/root"
	touch "$dir/.ready"
fi
image=$(ls "$dir"/root/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$image" ] || die "no vmlinuz in $dir: remove it and retry"
echo "$image"
