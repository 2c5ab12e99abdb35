#!/usr/bin/env bash
# Unpack Debian's linux-source-6.1 into the cache as a git repository whose
# first commit is the tarball (tag "base"). Prints the repository path.
# usage: scripts/source.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ver=$(installed_version)
[ -n "$ver" ] || die "linux-source-6.1 is not installed: run scripts/deps.sh (or apt-get install linux-source-6.1)"
tarball=/usr/src/linux-source-6.1.tar.xz
[ -f "$tarball" ] || die "$tarball is missing: apt-get install --reinstall linux-source-6.1"
if [ "$ver" != "$(tested_version)" ]; then
	say "note: apt serves linux-source-6.1 $ver; the series was tested on $(tested_version)"
fi

repo=$BPFLOCK_CACHE/src/$ver
if [ ! -f "$repo/.bpflock-ready" ]; then
	say "unpacking linux-source-6.1 $ver into $repo"
	rm -rf "$repo"
	mkdir -p "$repo"
	tar -C "$repo" --strip-components=1 -xf "$tarball"
	say "recording the tarball as git commit 'base'"
	git -C "$repo" init -q
	git -C "$repo" add -f -A >/dev/null  # Debian's .gitignore hides the top level
	git -C "$repo" -c user.name=bpflock -c user.email=dev@bpflock.invalid \
		commit -q -m "Debian linux-source-6.1 $ver"
	git -C "$repo" tag base
	touch "$repo/.bpflock-ready"
fi
echo "$repo"
