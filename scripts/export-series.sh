#!/usr/bin/env bash
# Export the series from a kernel git tree whose commits since tag "base"
# are the series, with the cover letter from docs/cover-letter.txt (first
# line: subject; after the '---' line: body).
# usage: scripts/export-series.sh KERNEL_TREE
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: scripts/export-series.sh KERNEL_TREE"
tree=$1
dir=$BPFLOCK_ROOT/patches
git -C "$tree" rev-parse -q --verify base >/dev/null || die "$tree has no tag 'base'"
rm -f "$dir"/*.patch
git -C "$tree" format-patch -q --cover-letter -o "$dir" base..HEAD
subject=$(head -n 1 "$BPFLOCK_ROOT/docs/cover-letter.txt")
sed '1,/^---$/d' "$BPFLOCK_ROOT/docs/cover-letter.txt" >"$dir/.blurb"
python3 - "$dir/0000-cover-letter.patch" "$subject" "$dir/.blurb" <<'PY'
import sys
path, subject, blurb = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().rstrip()
s = open(path).read().replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", blurb)
open(path, "w").write(s)
PY
rm -f "$dir/.blurb"
(cd "$dir" && ls 0*.patch | grep -v '^0000-' >series)
say "exported $(wc -l <"$dir/series") patches and the cover letter to $dir"
