#!/usr/bin/env bash
# Build one kernel variant from the cached tree and print its bzImage path.
# Rebuilds only when the tree version, the variant's patches or the config
# fragments changed (the key); compiles through ccache.
# usage: [BASE=6.1|6.12] scripts/kernel.sh stock|baseline|ours|series-N [plain|debug|kcsan|debian]
# The debian flavour also builds the modules and prints the same path.
# BASE picks the tree (linux-source-BASE) and the series (patches/BASE).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: [BASE=6.1|6.12] scripts/kernel.sh stock|baseline|ours [plain|debug|kcsan|debian]"
variant=$1
flavour=${2:-plain}
variant_patch_count "$variant" >/dev/null

repo=$("$BPFLOCK_ROOT/scripts/source.sh")
ver=$(installed_version)
tree=$BPFLOCK_CACHE/trees/$ver/$variant
# The series-N prefixes (bisect check) take turns in one tree.
case "$variant" in series-*) tree=$BPFLOCK_CACHE/trees/$ver/bisect ;; esac
# The build directory sits right inside the tree, so kbuild names every
# source and include path relative to it ("../kernel/bpf/..."): the same
# file compiles to the same ccache entry in every variant's tree.
out=$tree/.out-$flavour
key=$(kernel_key "$variant" "$flavour")
image=$out/arch/x86/boot/bzImage

# Which patches the tree holds; kept beside the tree (git clean spares
# only the build directories inside it).
tree_stamp=$tree.tree-key
tkey=$(tree_key "$variant")

prepare_tree() {
	# no stamp until every patch is in: an interrupted run prepares again
	rm -f "$tree_stamp"
	if [ ! -e "$tree/.git" ]; then
		git -C "$repo" worktree prune
		git -C "$repo" worktree add -q --detach "$tree" base
	fi
	git -C "$tree" am --abort >/dev/null 2>&1 || true
	git -C "$tree" checkout -q -f --detach base
	git -C "$tree" clean -q -f -d -e '/.out-*'
	local p
	while read -r p; do
		[ -n "$p" ] || continue
		if ! git -C "$tree" -c user.name=bpflock -c user.email=dev@bpflock.invalid \
			am -q "$p" >/dev/null 2>&1; then
			git -C "$tree" am --abort >/dev/null 2>&1 || true
			die "patch $(basename "$p") does not apply to $SOURCE_PACKAGE $ver: rebase patches/$BASE on this version"
		fi
	done < <(variant_patches "$variant")
	say "tree $variant: $(git -C "$tree" rev-list --count base..HEAD) patch(es) on $SOURCE_PACKAGE $ver"
	echo "$tkey" >"$tree_stamp"
}

# An option this tree does not define (ours adds CONFIG_BPF_LOCK_DEBUG;
# stock and baseline lack it) cannot be set here; all others must stick.
defined_here() {
	local sym=${1%%=*}
	git -C "$tree" grep -q "^config ${sym#CONFIG_}\$" -- '*Kconfig*'
}

check_config() {
	local frag line opt missing=()
	while read -r frag; do
		while read -r line; do
			case "$line" in
			CONFIG_*=*)
				grep -qx -- "$line" "$out/.config" || ! defined_here "$line" ||
					missing+=("$line") ;;
			'# CONFIG_'*' is not set')
				opt=${line#\# }
				opt=${opt%% *}
				! grep -q "^$opt=" "$out/.config" || missing+=("$line") ;;
			esac
		done <"$frag"
	done < <(config_fragments "$flavour")
	if [ ${#missing[@]} -gt 0 ]; then
		die "options lost by olddefconfig (check their dependencies): ${missing[*]}"
	fi
}

# Debian's config, our few changes, then make localmodconfig against the
# module list: every built-in option stays as Debian has it.
configure_debian() {
	mkdir -p "$out"
	xz -dc "$(debian_config_file)" >"$out/.config"
	"$tree/scripts/config" --file "$out/.config" \
		--set-str SYSTEM_TRUSTED_KEYS "" --disable LOCALVERSION_AUTO \
		--set-str LOCALVERSION "$(debian_localversion "$variant")"
	make -s -C "$tree" O="$out" olddefconfig >/dev/null
	module_names "$(debian_modules_file)" >"$out/bpflock.modules"
	make -s -C "$tree" O="$out" LSMOD="$out/bpflock.modules" localmodconfig </dev/null >/dev/null 2>&1
	say "debian config: $(grep -c '=y$' "$out/.config") built in, $(grep -c '=m$' "$out/.config") modules ($(wc -l <"$out/bpflock.modules") listed)"
	check_config
}

configure() {
	if [ "$flavour" = debian ]; then
		configure_debian
		return
	fi
	mkdir -p "$out"
	make -s -C "$tree" O="$out" tinyconfig >/dev/null
	# shellcheck disable=SC2046
	KCONFIG_CONFIG=$out/.config "$tree/scripts/kconfig/merge_config.sh" -m -O "$out" \
		"$out/.config" $(config_fragments "$flavour") >/dev/null
	make -s -C "$tree" O="$out" olddefconfig >/dev/null
	check_config
}

# Prepares the tree (under the tree's lock, exclusive) unless it holds
# this variant's patches already.
tree_ready() {
	[ "$(cat "$tree_stamp" 2>/dev/null)" = "$tkey" ] && return 0
	tree_lock -x "$tree"
	[ "$(cat "$tree_stamp" 2>/dev/null)" = "$tkey" ] || prepare_tree
	tree_lock -s "$tree"
}

mkdir -p "$(dirname "$tree")"
# one build of a variant's flavour at a time: a second run waits, then
# finds the image up to date (taken before the tree's lock, so that a
# run waiting here holds nothing another run waits for)
exec 7>"$tree.$flavour.lock"
if ! flock -n -x 7; then
	say "waiting for another run on this host that builds $variant/$flavour ($tree.$flavour.lock)"
	flock -x 7
fi
tree_lock -s "$tree"
if [ -f "$image" ] && [ "$(cat "$out/.bpflock-key" 2>/dev/null)" = "$key" ]; then
	# a tools/-only patch changed: the tests need it, the image does not
	tree_ready
	say "kernel $variant/$flavour is up to date ($key)"
	echo "$image"
	exit 0
fi

tree_ready
configure
say "building kernel $variant/$flavour in $out (ccache, $JOBS jobs; cold: ~10 min)"
start=$(date +%s)
targets=(bzImage)
extra=()
if [ "$flavour" = debian ]; then
	# modules too; the build version is the one `make deb` packages with,
	# so packaging relinks nothing
	targets+=(modules)
	pkgver=$(debian_pkgversion "$variant")
	# LOCALVERSION= (empty, not unset): no "+" after the release
	extra=(KBUILD_BUILD_VERSION="${pkgver##*-}" LOCALVERSION=)
fi
# The variants' trees differ in a few files, and kbuild names every path
# relative to the build directory: without the directory in ccache's hash
# (it is there by default for -g builds), a file no patch reaches compiles
# once for all variants. Only DW_AT_comp_dir then names the first tree.
CCACHE_NOHASHDIR=1 make -s -C "$tree" O="$out" -j"$JOBS" CC="ccache gcc" "${extra[@]}" \
	KBUILD_BUILD_TIMESTAMP="2026-01-01 00:00 UTC" KBUILD_BUILD_USER=bpflock KBUILD_BUILD_HOST=bpflock \
	"${targets[@]}" >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	die "kernel $variant/$flavour failed to build; full log: $out/build.log"
}
echo "$key" >"$out/.bpflock-key"
say "kernel $variant/$flavour built in $(($(date +%s) - start)) s"
echo "$image"
