#!/usr/bin/env bash
# The verifier's cost on the tree's selftest objects, ours against stock
# (part of make bench): veristat over every object, booted on stock and on
# ours side by side, ROUNDS times (scripts/upstream.sh veristat). Each
# guest has one vCPU under QEMU's instruction counting (UPSTREAM_ICOUNT),
# so the verifier's own "verification time" is guest instructions, one per
# nanosecond, whatever the host's load: the two guests can share the host,
# and a round is never a stored result reused (FRESH). Instructions
# processed are the verifier's own count, exact. Differences in verdicts
# are the gate's business (make test), not this one's.
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
	say "verifier cost, round $r/$rounds: veristat on stock and ours (one vCPU each, instruction counting)"
	t0=$(date +%s)
	# exit 1 is an unlisted difference (the gate's verdict); the figures stand
	UPSTREAM_ICOUNT=1 FRESH=1 UPSTREAM_RESULTS=$out/round-$r \
		"$BPFLOCK_ROOT/scripts/upstream.sh" --parallel veristat >"$out/round-$r.log" 2>&1 || true
	[ -s "$out/round-$r/bench.csv" ] ||
		die "round $r gave no veristat figures; see $out/round-$r.log"
	tail -n 1 "$out/round-$r/bench.csv" | sed "s/^/$r,/" >>"$out/raw.csv"
	say "round $r took $(($(date +%s) - t0)) s"
done

# durations are microseconds of guest time: thousands of instructions
awk -F, -v rounds="$rounds" '
function median(a, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ n++; progs = $2; si = $3; oi = $4; st[n] = $5 / 1e6; ot[n] = $6 / 1e6
  smin = (n == 1 || st[n] < smin) ? st[n] : smin; smax = (n == 1 || st[n] > smax) ? st[n] : smax
  omin = (n == 1 || ot[n] < omin) ? ot[n] : omin; omax = (n == 1 || ot[n] > omax) ? ot[n] : omax }
END {
	ms = median(st, n); mo = median(ot, n)
	printf "## Verifier cost on the selftests corpus (veristat, %d round(s))\n\n", rounds
	printf "Programs that load on both kernels: %d. Instructions processed are the verifier'"'"'s count, exact. Verification cost is the verifier'"'"'s own time in a guest under QEMU'"'"'s instruction counting (one vCPU, one veristat): billions of guest instructions, medians over the rounds (spread: (max - min) / median).\n\n", progs
	printf "| | stock | ours | ours/stock | spread stock / ours |\n|---|---:|---:|---:|---:|\n"
	printf "| total instructions processed | %d | %d | %.4f | |\n", si, oi, si ? oi / si : 0
	printf "| verification cost (G guest instructions) | %.2f | %.2f | %.3f | %.2f%% / %.2f%% |\n", ms, mo, ms ? mo / ms : 0,
		ms ? 100 * (smax - smin) / ms : 0, mo ? 100 * (omax - omin) / mo : 0
}' "$out/raw.csv" >"$out/table.md"
cat "$out/table.md"
say "per-program figures: $out/round-*/veristat.md"
