#!/usr/bin/env bash
# Unpack Debian's linux-source-BASE (BASE=6.1, the default, or 6.12) into
# the cache as a git repository whose first commit is the tarball (tag
# "base"). Prints the repository path.
# usage: [BASE=6.1|6.12] scripts/source.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(installed_version)
[ -n "$ver" ] || die "$SOURCE_PACKAGE is not installed: run scripts/deps.sh (or apt-get install $SOURCE_PACKAGE)"
tarball=/usr/src/$SOURCE_PACKAGE.tar.xz
[ -f "$tarball" ] || die "$tarball is missing: apt-get install --reinstall $SOURCE_PACKAGE"
if [ "$ver" != "$(tested_version)" ]; then
	say "note: apt serves $SOURCE_PACKAGE $ver; the series was tested on $(tested_version)"
fi

repo=$BPFLOCK_CACHE/src/$ver
if [ ! -f "$repo/.bpflock-ready" ]; then
	say "unpacking $SOURCE_PACKAGE $ver into $repo"
	rm -rf "$repo"
	mkdir -p "$repo"
	tar -C "$repo" --strip-components=1 -xf "$tarball"
	say "recording the tarball as git commit 'base'"
	git -C "$repo" init -q
	# no automatic gc: its repack of the whole tree would run in the
	# background beside the first kernel build, on one of its cores
	git -C "$repo" config gc.auto 0
	git -C "$repo" add -f -A >/dev/null  # Debian's .gitignore hides the top level
	git -C "$repo" -c user.name=bpflock -c user.email=dev@bpflock.invalid \
		commit -q -m "Debian $SOURCE_PACKAGE $ver"
	git -C "$repo" tag base
	touch "$repo/.bpflock-ready"
fi
echo "$repo"
