#!/usr/bin/env bash
# Install the Debian packages the test bed needs (idempotent).
# usage: scripts/deps.sh [debian]   (debian: also what make deb and the
#                                   install test need)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PACKAGES=(
	linux-source-6.1 build-essential bc bison flex libelf-dev libssl-dev
	ccache cpio kmod dwarves rsync python3 clang llvm
	qemu-system-x86 busybox-static zlib1g-dev pkg-config gnuplot-nox spin
)
if [ "${1:-}" = debian ]; then
	PACKAGES+=(linux-config-6.1 dpkg-dev fakeroot debootstrap e2fsprogs xz-utils)
fi

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
mkdir -p "$BPFLOCK_CACHE"
free_gb=$(df -Pk "$BPFLOCK_CACHE" | awk 'NR==2 { print int($4 / 1048576) }')
[ "$free_gb" -ge 8 ] || die "only ${free_gb} GiB free under $BPFLOCK_CACHE; free 8 GiB or set BPFLOCK_CACHE"
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}"
say "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || die "apt-get update failed: check the Debian mirror"
apt-get install -y -qq "${missing[@]}" >/dev/null ||
	die "apt-get install failed for: ${missing[*]}"
