#!/usr/bin/env bash
# Scan a guest console log for kernel splats. Any line matching the deny
# list and not the allow list fails the scan; so does a missing deny list.
# usage: scripts/splats.sh CONSOLE.log
# env:   KCSAN_REPORTS=separate  leave KCSAN's data-race reports out: on the
#        kcsan flavour scripts/kcsan-report.sh judges them (ours or not)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: scripts/splats.sh CONSOLE.log"
log=$1
deny=$BPFLOCK_ROOT/config/splat-deny.txt
allow=$BPFLOCK_ROOT/config/splat-allow.txt
[ -s "$deny" ] || die "deny list $deny is missing or empty: refusing to call the log clean"
[ -f "$log" ] || die "no console log at $log"

patterns() { grep -v -e '^#' -e '^$' "$1"; }

# Backtraces that were asked for (sysrq 'l' sends NMIs whose handler
# prints every CPU's stack: the guard test uses it to raise NMIs) are not
# splats: drop each "NMI backtrace for cpu N" block, up to the end of its
# task stack, keeping line numbers.
requested_backtraces_out() {
	awk '/NMI backtrace for cpu [0-9]+$/ { bt = 1 }
	     { print (bt ? "" : $0) }
	     bt && /^ *<\/TASK>/ { bt = 0 }'
}

# KCSAN reports run from their "BUG: KCSAN:" line to the closing rule.
kcsan_reports_out() {
	if [ "${KCSAN_REPORTS:-fail}" = separate ]; then
		awk '/BUG: KCSAN: / { k = 1 } { print (k ? "" : $0) } k && /^(\[[^]]*\] *)?=+$/ { k = 0 }'
	else
		cat
	fi
}

hits=$(tr -d '\r' <"$log" | requested_backtraces_out | kcsan_reports_out | grep -E -n -f <(patterns "$deny") || true)
if [ -n "$hits" ] && [ -f "$allow" ] && [ -n "$(patterns "$allow")" ]; then
	hits=$(printf '%s\n' "$hits" | grep -E -v -f <(patterns "$allow") || true)
fi
if [ -n "$hits" ]; then
	say "kernel splat in $log:"
	first=$(printf '%s\n' "$hits" | head -n 1 | cut -d: -f1)
	tr -d '\r' <"$log" | sed -n "$((first > 5 ? first - 5 : 1)),$((first + 30))p" >&2
	say "full console log: $log"
	exit 1
fi
