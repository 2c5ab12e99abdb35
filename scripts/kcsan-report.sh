#!/usr/bin/env bash
# Classify the KCSAN data-race reports of a `make test-kcsan` run. A report
# is "ours" when either racing access sits (inlined or not) in a file the
# series changes; the same files are checked on stock, so the two columns
# compare like with like. Writes RESULTS/kcsan-races.txt; fails when ours
# has a report in the series' files (fix it or mark the access, with
# data_race()/READ_ONCE() and a comment saying why it is benign).
# usage: scripts/kcsan-report.sh RESULTS_DIR VARIANT...
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: scripts/kcsan-report.sh RESULTS_DIR VARIANT..."
results=$1
shift
ver=$(installed_version)
ours_tree=$BPFLOCK_CACHE/trees/$ver/ours
# The kernel files of the series (tools/ and Documentation/ aside).
series_files=$(git -C "$ours_tree" diff --name-only base..HEAD -- . ':!tools' ':!Documentation')
out=$results/kcsan-races.txt

# One line per report: "func_a / func_b<TAB>frame of access 1<TAB>frame 2".
reports() {
	tr -d '\r' <"$1" | sed -e 's/^\[[^]]*\] *//' | awk '
		/^BUG: KCSAN: / { sig = $0; sub(/^BUG: KCSAN: [a-z-]* in /, "", sig); n = 0; want = 0; next }
		sig != "" && /^(read|write).* by (task|interrupt)/ { want = 1; next }
		sig != "" && want && /^ *[A-Za-z_][A-Za-z0-9_.]*\+0x/ { fr[++n] = $1; want = 0; next }
		sig != "" && /^Reported by Kernel Concurrency Sanitizer/ {
			printf "%s\t%s\t%s\n", sig, fr[1], (n > 1 ? fr[2] : "-"); sig = ""
		}'
}

# file:line of a frame "func+0xoff/0xsize", innermost inline first, via the
# kernel's own faddr2line on the vmlinux that ran.
where() {
	local vmlinux=$1 frame=$2
	[ "$frame" != - ] || { echo "-"; return; }
	"$ours_tree/scripts/faddr2line" "$vmlinux" "$frame" 2>/dev/null |
		sed -n 's|^.*at \(.*\)$|\1|p' | sed "s|^$BPFLOCK_CACHE/trees/$ver/[a-z]*/||; s|^\.\./||" |
		head -n 3 | paste -sd' ' -
}

is_ours() {
	local loc f
	for loc in $1; do
		f=${loc%%:*}
		if printf '%s\n' "$series_files" | grep -qx -- "$f"; then
			return 0
		fi
	done
	return 1
}

status=0
{
	echo "# KCSAN data-race reports of $(date -u +%F) (reports are rate-limited: KCSAN_REPORT_ONCE_IN_MS=3000)"
	echo "# columns: variant, reports, in the series' files?, race, where access 1 | where access 2"
	for v in "$@"; do
		log=$results/$v-console.log
		vmlinux=$BPFLOCK_CACHE/trees/$ver/$v/.out-kcsan/vmlinux
		[ -f "$log" ] || die "no console log $log: run make test-kcsan"
		[ -f "$vmlinux" ] || die "no $vmlinux: scripts/kernel.sh $v kcsan"
		n=0
		while IFS=$'\t' read -r count sig f1 f2; do
			w1=$(where "$vmlinux" "$f1")
			w2=$(where "$vmlinux" "$f2")
			mark=other
			if is_ours "$w1 $w2"; then
				mark=SERIES
				[ "$v" != ours ] || status=1
			fi
			printf '%s\t%s\t%s\t%s\t%s | %s\n' "$v" "$count" "$mark" "$sig" "$w1" "$w2"
			n=$((n + count))
		done < <(reports "$log" | sort | uniq -c | sort -rn |
			sed 's/^ *\([0-9]*\) /\1\t/')
		echo "# $v: $n reports"
	done
} >"$out"
cat "$out" >&2
if [ "$status" -ne 0 ]; then
	say "KCSAN: ours has data races in the series' files (SERIES lines in $out)"
fi
exit $status
