#!/usr/bin/env bash
# checkpatch --strict on every patch of the series, against the cached tree.
# usage: scripts/series-check.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

repo=$("$BPFLOCK_ROOT/scripts/source.sh")
status=0
while read -r p; do
	name=$(basename "$p")
	if out=$(cd "$repo" && perl scripts/checkpatch.pl --strict --no-tree -q \
		--ignore FILE_PATH_CHANGES "$p" 2>&1); then
		echo "ok $name"
	else
		echo "not ok $name"
		printf '%s\n' "$out" | sed 's/^/    # /'
		status=1
	fi
done < <(series_patches 0)
exit $status
