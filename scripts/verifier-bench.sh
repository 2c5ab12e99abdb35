#!/usr/bin/env bash
# The verifier's cost on the tree's selftest objects, ours against stock
# (part of make bench): veristat over every object, booted on stock then
# on ours, ROUNDS times (scripts/upstream.sh veristat). Instructions
# processed are exact; verification time is a TCG guest's, so the ratio of
# the medians is the figure. Differences in verdicts are the gate's
# business (make test), not this one's.
# usage: scripts/verifier-bench.sh [ROUNDS (1)]
# Writes build/bench/verifier/table.md (and one directory per round).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rounds=${1:-1}
case "$rounds" in '' | *[!0-9]* | 0) die "usage: scripts/verifier-bench.sh [ROUNDS (1)]" ;; esac
out=$BPFLOCK_ROOT/build/bench/verifier
rm -rf "$out"
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
	say "verifier cost, round $r/$rounds: veristat on stock and ours"
	# exit 1 is an unlisted difference (the gate's verdict); the figures stand
	UPSTREAM_RESULTS=$out/round-$r "$BPFLOCK_ROOT/scripts/upstream.sh" veristat >"$out/round-$r.log" 2>&1 || true
	[ -s "$out/round-$r/bench.csv" ] ||
		die "round $r gave no veristat figures; see $out/round-$r.log"
	tail -n 1 "$out/round-$r/bench.csv" | sed "s/^/$r,/" >>"$out/raw.csv"
done

awk -F, -v rounds="$rounds" '
function median(a, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ n++; progs = $2; si = $3; oi = $4; st[n] = $5 / 1e6; ot[n] = $6 / 1e6 }
END {
	ms = median(st, n); mo = median(ot, n)
	printf "## Verifier cost on the selftests corpus (veristat, %d round(s))\n\n", rounds
	printf "Programs that load on both kernels: %d. Instructions processed are exact; times are a TCG guest'"'"'s (4 vCPUs, parallel veristat), medians over the rounds.\n\n", progs
	printf "| | stock | ours | ours/stock |\n|---|---:|---:|---:|\n"
	printf "| total instructions processed | %d | %d | %.4f |\n", si, oi, si ? oi / si : 0
	printf "| verification time (s, median) | %.1f | %.1f | %.3f |\n", ms, mo, ms ? mo / ms : 0
}' "$out/raw.csv" >"$out/table.md"
cat "$out/table.md"
say "per-program figures: $out/round-*/veristat.md"
