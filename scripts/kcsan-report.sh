#!/usr/bin/env bash
# Classify the KCSAN data-race reports of a `make test-kcsan` run. A report
# is "SERIES" when one of the top three frames of either racing access
# (inlined functions included) is a function the series adds or changes;
# the same functions are looked for on stock, so the columns compare like
# with like. Writes RESULTS/kcsan-races.txt; fails when ours
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
# The functions the series adds or changes: every definition inside the
# series' hunks, widened to whole functions (git diff -W).
series_funcs=$(git -C "$ours_tree" diff -W base..HEAD -- . ':!tools' ':!Documentation' |
	grep -E '^[ +-](static |void|int|bool|u32|u64|long|struct|unsigned|enum|const|notrace|noinline|__always|BPF_CALL|NOTRACE_BPF_CALL|inline)' |
	grep -v ';[[:space:]]*$' | sed -E 's/^[ +-]//; s/^(NOTRACE_)?BPF_CALL_[0-9]\(([A-Za-z0-9_]+).*/x \2/; s/\(.*//' |
	awk '{ print $NF }' | tr -d '*' | LC_ALL=C sort -u)
out=$results/kcsan-races.txt

# One line per report: "race<TAB>frames of access 1<TAB>frames of access 2",
# each the top three frames joined by spaces ("-": unknown origin).
reports() {
	tr -d '\r' <"$1" | sed -e 's/^\[[^]]*\] *//' | awk '
		/^BUG: KCSAN: / { sig = $0; sub(/^BUG: KCSAN: [a-z-]* in /, "", sig); n = 0; k = 0; fr[1] = fr[2] = "-"; next }
		sig != "" && /^(race at unknown origin, with )?(read|write).* by (task|interrupt)/ { n++; k = 0; next }
		sig != "" && n && k < 3 && /^ *[A-Za-z_][A-Za-z0-9_.]*\+0x/ {
			fr[n] = (k ? fr[n] " " : "") $1; k++; next
		}
		sig != "" && /^$/ { k = 3 }
		sig != "" && /^Reported by Kernel Concurrency Sanitizer/ {
			printf "%s\t%s\t%s\n", sig, fr[1], fr[2]; sig = ""
		}'
}

# "function@file:line" for each frame "func+0xoff/0xsize" and the functions
# inlined into it at that address, via the kernel's own faddr2line on the
# vmlinux that ran.
resolve() {
	local vmlinux=$1 frame
	shift
	for frame in "$@"; do
		[ "$frame" != - ] || continue
		"$ours_tree/scripts/faddr2line" "$vmlinux" "$frame" 2>/dev/null |
			sed -n 's|^\(.*(inlined by) \)\{0,1\}\([A-Za-z0-9_.]*\) at \([^ ]*\).*|\2@\3|p' |
			sed "s|@$BPFLOCK_CACHE/trees/$ver/[a-z]*/|@|; s|@\.\./|@|"
	done
}

# The first two distinct functions of a resolved frame list: "f@file:line < caller".
chain() {
	[ $# -gt 0 ] || { echo -; return; }
	local first=$1 loc
	for loc in "$@"; do
		if [ "${loc%%@*}" != "${first%%@*}" ]; then
			echo "$first < ${loc%%@*}"
			return
		fi
	done
	echo "$first"
}

in_series() {
	local loc
	for loc in "$@"; do
		if printf '%s\n' "$series_funcs" | grep -qx -- "${loc%%@*}"; then
			return 0
		fi
	done
	return 1
}

status=0
{
	echo "# KCSAN data-race reports of $(date -u +%F) (reports are rate-limited: KCSAN_REPORT_ONCE_IN_MS=3000)"
	echo "# columns: variant, reports, SERIES (a function the series adds or changes is in the top frames) or other, race, innermost frame of access 1 (< its caller) | of access 2"
	for v in "$@"; do
		log=$results/$v-console.log
		vmlinux=$BPFLOCK_CACHE/trees/$ver/$v/.out-kcsan/vmlinux
		[ -f "$log" ] || die "no console log $log: run make test-kcsan"
		[ -f "$vmlinux" ] || die "no $vmlinux: scripts/kernel.sh $v kcsan"
		n=0
		while IFS=$'\t' read -r count sig f1 f2; do
			# shellcheck disable=SC2086
			mapfile -t l1 < <(resolve "$vmlinux" $f1)
			# shellcheck disable=SC2086
			mapfile -t l2 < <(resolve "$vmlinux" $f2)
			w1=$(chain "${l1[@]}")
			w2=$(chain "${l2[@]}")
			mark=other
			if in_series "${l1[@]}" "${l2[@]}"; then
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
