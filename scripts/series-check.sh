#!/usr/bin/env bash
# checkpatch --strict on every patch of a base's series, with the
# checkpatch.pl of that base's cached tree.
# usage: [BASE=6.1|6.12] scripts/series-check.sh   (the series of patches/BASE)
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
