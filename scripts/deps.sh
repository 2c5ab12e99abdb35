#!/usr/bin/env bash
# Install the Debian packages the test bed needs (idempotent): the kernel
# source of every base (linux-source-6.1 and linux-source-6.12, each at
# the version pinned in config/BASE/debian-version when apt still serves
# it, else apt's candidate with a note), the toolchain and QEMU.
# usage: scripts/deps.sh [debian]   (debian: also what make deb and the
#                                   install test need)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PACKAGES=(
	build-essential bc bison flex libelf-dev libssl-dev
	ccache cpio kmod dwarves rsync python3 clang llvm
	qemu-system-x86 busybox-static zlib1g-dev pkg-config gnuplot-nox spin
)
SOURCES=()
for b in $BPFLOCK_BASES; do
	SOURCES+=("linux-source-$b")
	if [ "${1:-}" = debian ]; then
		SOURCES+=("linux-config-$b")
	fi
done
if [ "${1:-}" = debian ]; then
	# debhelper: 6.12's bindeb-pkg checks its debian/control's
	# Build-Depends (debhelper-compat 12) before it packages.
	PACKAGES+=(dpkg-dev fakeroot debhelper debootstrap e2fsprogs xz-utils)
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }

missing=()
for p in "${SOURCES[@]}" "${PACKAGES[@]}"; do
	installed "$p" || missing+=("$p")
done
mkdir -p "$BPFLOCK_CACHE"
free_gb=$(df -Pk "$BPFLOCK_CACHE" | awk 'NR==2 { print int($4 / 1048576) }')
[ "$free_gb" -ge 8 ] || die "only ${free_gb} GiB free under $BPFLOCK_CACHE; free 8 GiB or set BPFLOCK_CACHE"
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
say "updating apt's lists"
apt-get update -qq >/dev/null || die "apt-get update failed: check the Debian mirror"
# A base's source and config packages at the version its series was
# tested on, where apt still has it (the security archive keeps a few).
args=()
for p in "${missing[@]}"; do
	case "$p" in
	linux-source-* | linux-config-*)
		b=${p#linux-*-}
		pin=$(cat "$BPFLOCK_ROOT/config/$b/debian-version")
		if apt-cache show "$p=$pin" >/dev/null 2>&1; then
			args+=("$p=$pin")
		else
			say "note: apt no longer serves $p $pin (the version patches/$b was tested on); installing $(apt-cache policy "$p" | sed -n 's/ *Candidate: //p')"
			args+=("$p")
		fi
		;;
	*) args+=("$p") ;;
	esac
done
say "installing ${args[*]}"
apt-get install -y -qq "${args[@]}" >/dev/null ||
	die "apt-get install failed for: ${args[*]}"
