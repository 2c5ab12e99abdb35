#!/usr/bin/env bash
# Export a base's series from a kernel git tree whose commits since tag
# "base" are the series, into patches/BASE/ (patches, series file and,
# where the base has its text, the cover letter: docs/cover-letter.txt
# for 6.1, docs/cover-letter-BASE.txt for the others; first line: subject,
# after the '---' line: body).
# usage: scripts/export-series.sh BASE KERNEL_TREE   (BASE: 6.1 or 6.12)
# e.g.   scripts/export-series.sh 6.1 /var/cache/bpflock/dev
set -euo pipefail
if [ $# -ne 2 ]; then
	echo "usage: scripts/export-series.sh BASE KERNEL_TREE   (BASE: 6.1 or 6.12; e.g. scripts/export-series.sh 6.1 /var/cache/bpflock/dev)" >&2
	exit 2
fi
BASE=$1
. "$(dirname "$0")/lib.sh"

tree=$2
dir=$BPFLOCK_SERIES
git -C "$tree" rev-parse -q --verify base >/dev/null || die "$tree has no tag 'base'"
# The tree must be of this base: its Makefile's version against the base.
kv=$(sed -n -e 's/^VERSION = //p' -e 's/^PATCHLEVEL = //p' "$tree/Makefile" 2>/dev/null | head -n 2 | paste -sd.)
[ -n "$kv" ] || die "$tree/Makefile: no VERSION and PATCHLEVEL: is it a kernel tree?"
case "$kv" in
"$BASE") ;;
*) die "$tree is Linux $kv, not base $BASE: give the base of that tree (scripts/export-series.sh $kv $tree)" ;;
esac
if [ "$BASE" = 6.1 ]; then
	letter=$BPFLOCK_ROOT/docs/cover-letter.txt
else
	letter=$BPFLOCK_ROOT/docs/cover-letter-$BASE.txt
fi
mkdir -p "$dir"
rm -f "$dir"/*.patch
if [ -f "$letter" ]; then
	git -C "$tree" format-patch -q --cover-letter -o "$dir" base..HEAD
	subject=$(head -n 1 "$letter")
	sed '1,/^---$/d' "$letter" >"$dir/.blurb"
	python3 - "$dir/0000-cover-letter.patch" "$subject" "$dir/.blurb" <<'PY'
import sys
path, subject, blurb = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().rstrip()
s = open(path).read().replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", blurb)
open(path, "w").write(s)
PY
	rm -f "$dir/.blurb"
else
	say "no $letter: exporting without a cover letter"
	git -C "$tree" format-patch -q -o "$dir" base..HEAD
fi
(cd "$dir" && ls 0*.patch | grep -v '^0000-' >series)
say "exported $(wc -l <"$dir/series") patches$([ ! -f "$letter" ] || echo ' and the cover letter') to $dir"
# patches/series: every base's series in one list, each patch named by
# its base's folder (the scripts read patches/BASE/series; this one is for
# quilt-style readers of the whole project)
{
	echo "# every base's series; the build reads patches/<base>/series"
	for b in "$BPFLOCK_ROOT"/patches/*/; do
		[ -f "$b/series" ] && sed "s|^|$(basename "$b")/|" "$b/series"
	done
} >"$BPFLOCK_ROOT/patches/series"
