# shellcheck shell=bash
# Common settings and helpers for the bpflock scripts. Sourced, not run.

BPFLOCK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BPFLOCK_CACHE=${BPFLOCK_CACHE:-/var/cache/bpflock}
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$BPFLOCK_CACHE/ccache}

say() { printf '[bpflock] %s\n' "$*" >&2; }
die() { printf '[bpflock] error: %s\n' "$*" >&2; exit 1; }

# A kernel tree's lock, held on fd 8 until the script exits: exclusive
# (-x) while scripts/kernel.sh checks out, cleans and patches the tree,
# shared (-s) while a kernel, a package or the tests build from it, so
# that no build reads a tree that another run on the host is preparing
# (make deb's first build of a flavour once reset ours under make test's
# test build). Each call opens the lock file again, which drops what
# the script held before it waits: two holders of -s that both ask for
# -x do not deadlock.
tree_lock() {
	exec 8>"$2.lock"
	if ! flock -n "$1" 8; then
		say "waiting for the tree $2 (another run on this host holds $2.lock)"
		flock "$1" 8
	fi
}

# The base: which of Debian's kernel source packages (linux-source-BASE)
# the scripts work on, with its series in patches/BASE and its pinned
# version and own config fragments in config/BASE. 6.1 unless told.
BPFLOCK_BASES="6.1 6.12"
BASE=${BASE:-6.1}
case " $BPFLOCK_BASES " in
*" $BASE "*) ;;
*) die "BASE=$BASE is not a base of bpflock: use one of $BPFLOCK_BASES (BASE=6.1, the default, or BASE=6.12)" ;;
esac
export BASE
BPFLOCK_SERIES=$BPFLOCK_ROOT/patches/$BASE
SOURCE_PACKAGE=linux-source-$BASE

# The Debian version the base's series was last tested against.
tested_version() { cat "$BPFLOCK_ROOT/config/$BASE/debian-version"; }

# The version apt installed (dpkg's view), empty if not installed.
installed_version() {
	dpkg-query -W -f='${Version}' "$SOURCE_PACKAGE" 2>/dev/null || true
}

# Where a run's results go in the clone: build/results/FLAVOUR for 6.1
# (as before there were two bases), build/results/BASE/FLAVOUR for others.
results_root() {
	if [ "$BASE" = 6.1 ]; then
		echo "$BPFLOCK_ROOT/build/results"
	else
		echo "$BPFLOCK_ROOT/build/results/$BASE"
	fi
}

# Where make deb leaves a base's packages: build/deb on 6.1,
# build/BASE/deb on another base, so that the bases' packages coexist.
deb_dir() {
	if [ "$BASE" = 6.1 ]; then
		echo "$BPFLOCK_ROOT/build/deb"
	else
		echo "$BPFLOCK_ROOT/build/$BASE/deb"
	fi
}

# Patches of the base's series in order; with a count, only the first N.
# No series file: no patch yet.
series_patches() {
	local n=${1:-0} i=0 p
	[ -f "$BPFLOCK_SERIES/series" ] || return 0
	while read -r p; do
		case "$p" in '' | '#'*) continue ;; esac
		i=$((i + 1))
		if [ "$n" -gt 0 ] && [ "$i" -gt "$n" ]; then
			break
		fi
		printf '%s\n' "$BPFLOCK_SERIES/$p"
	done <"$BPFLOCK_SERIES/series"
}

# The variants a base has: stock always, baseline once the series has its
# removal patch, ours once it has more than that.
base_variants() {
	local n
	n=$(series_patches 0 | grep -c . || true)
	echo stock
	[ "$n" -lt 1 ] || echo baseline
	[ "$n" -lt 2 ] || echo ours
}

# How many patches belong to a variant: stock none, baseline the
# removal patch (the first one), ours all, series-N the first N.
variant_patch_count() {
	case "$1" in
	stock) echo none ;;
	baseline) if [ -n "$(series_patches 1)" ]; then echo 1; else echo none; fi ;;
	ours)
		[ "$(series_patches 2 | grep -c . || true)" -ge 2 ] ||
			die "there is no ours on base $BASE yet: patches/$BASE/series holds no patch beyond the removal (use stock or baseline, or BASE=6.1)"
		echo all ;;
	series-[1-9] | series-[1-9][0-9]) echo "${1#series-}" ;;
	*) die "unknown kernel variant '$1' (use stock, baseline, ours or series-N)" ;;
	esac
}

variant_patches() {
	case "$(variant_patch_count "$1")" in
	none) ;;
	all) series_patches 0 ;;
	*) series_patches "$(variant_patch_count "$1")" ;;
	esac
}

# Config fragments of a flavour: plain, debug, kcsan or debian (Debian's
# config with our few changes, not base.config). The fragments are shared
# by the bases; config/BASE/*.config adds what one base needs (6.12:
# sched_ext) to every flavour built from base.config.
config_fragments() {
	if [ "${1:-plain}" = debian ]; then
		echo "$BPFLOCK_ROOT/config/debian.config"
		return
	fi
	echo "$BPFLOCK_ROOT/config/base.config"
	local f
	for f in "$BPFLOCK_ROOT/config/$BASE"/*.config; do
		[ ! -f "$f" ] || echo "$f"
	done
	case "${1:-plain}" in
	debug) echo "$BPFLOCK_ROOT/config/debug.config" ;;
	kcsan) echo "$BPFLOCK_ROOT/config/kcsan.config" ;;
	esac
}

# The debian flavour starts from Debian's own configuration for the tree
# version (package linux-config-BASE), not from base.config.
# DEBIAN_CONFIG picks one of /usr/src/linux-config-BASE/config.*.xz.
debian_config_file() {
	local f=/usr/src/linux-config-$BASE/config.${DEBIAN_CONFIG:-amd64_none_amd64}.xz
	[ -f "$f" ] || die "$f is missing: apt-get install linux-config-$BASE (DEBIAN_CONFIG names one of its config.*.xz)"
	echo "$f"
}

# The modules the debian flavour keeps (make localmodconfig): the file in
# BPFLOCK_MODULES, or else the list the QEMU guest and the install test need.
debian_modules_file() {
	local f=${BPFLOCK_MODULES:-$BPFLOCK_ROOT/config/debian-guest.modules}
	[ -f "$f" ] || die "module list $f not found: give an lsmod output or one module per line"
	echo "$f"
}

# Module names of a list: lsmod output or one per line, # comments allowed.
module_names() {
	sed -e 's/#.*//' "$1" | awk '$1 != "" && $1 != "Module" { print $1 }' | LC_ALL=C sort -u
}

# Release suffix and Debian package version of a debian-flavour kernel:
# uname -r says bpflock, and ours carries the series length.
debian_localversion() {
	case "$1" in
	ours) echo "-bpflock" ;;
	*) echo "-bpflock-$1" ;;
	esac
}
debian_pkgversion() {
	local base n
	base=$(installed_version)
	n=$(variant_patches "$1" | grep -c . || true)
	echo "${base%%-*}-${base#*-}+bpflock$n"
}

# Does a patch change the kernel image, not only tools/ (libbpf, bpftool)?
patch_builds_kernel() {
	grep '^diff --git a/' "$1" | grep -qv '^diff --git a/tools/'
}

# The patches of a variant that change its kernel image.
kernel_patches() {
	local p
	variant_patches "$1" | while read -r p; do
		if patch_builds_kernel "$p"; then
			printf '%s\n' "$p"
		fi
	done
}

# Patch text without what does not change the tree (git sha, "n/m").
normalized_patches() {
	xargs -r sed -s -e '1{/^From [0-9a-f]\{40\} /d}' \
		-e 's/^Subject: \[PATCH [0-9]*\/[0-9]*\]/Subject: [PATCH]/'
}

# Key of a variant's tree: every patch, tools/ ones included.
tree_key() {
	{
		installed_version
		variant_patches "$1" | normalized_patches
	} | sha256sum | cut -c1-16
}

# Bump when scripts/kernel.sh changes what it builds (flags, targets).
KERNEL_RECIPE=1

# Key of a kernel build: tree version + kernel patches + config + recipe.
kernel_key() {
	local variant=$1 flavour=$2
	{
		installed_version
		# a patch that only changes tools/ does not change the image
		kernel_patches "$variant" | normalized_patches
		config_fragments "$flavour" | xargs cat
		if [ "$flavour" = debian ]; then
			xz -dc "$(debian_config_file)"
			module_names "$(debian_modules_file)"
			debian_localversion "$variant"
		fi
		echo "recipe $KERNEL_RECIPE"
	} | sha256sum | cut -c1-16
}

# A kernel's image: the bzImage named by ${PREFIX}_IMAGE_<variant> (to
# judge images already built, e.g. UPSTREAM_IMAGE_ours), else
# scripts/kernel.sh's (built when out of date).
image_for() { # PREFIX VARIANT
	local var=${1}_IMAGE_$2
	if [ -n "${!var:-}" ]; then
		[ -f "${!var}" ] || die "$var: no such image '${!var}'"
		echo "${!var}"
	else
		"$BPFLOCK_ROOT/scripts/kernel.sh" "$2"
	fi
}

# Install the Debian packages given that are missing (root), or say how.
need_debs() { # PACKAGE...
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	[ "$(id -u)" -eq 0 ] || die "missing packages: ${missing[*]}; run: sudo apt-get install ${missing[*]}"
	say "installing ${missing[*]}"
	apt-get update -qq >/dev/null || die "apt-get update failed: check the Debian mirror"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
		die "apt-get install failed for: ${missing[*]}"
}
