#!/usr/bin/env bash
# Benchmarks: boot stock and ours in turn (same config, same QEMU settings)
# for ROUNDS rounds, run tests/bench.c in each, and report per row
# min/median/max per kernel and the ratio ours/stock (higher is better).
# Writes raw.csv, table.md and ratios.png under build/bench/.
# usage: scripts/bench.sh [ROUNDS (5)] [SCALE percent (100)]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rounds=${1:-5}
scale=${2:-100}
out=$BPFLOCK_ROOT/build/bench
mkdir -p "$out"
declare -A image
for k in stock ours; do
	image[$k]=$("$BPFLOCK_ROOT/scripts/kernel.sh" "$k")
done
tests=$("$BPFLOCK_ROOT/scripts/build-tests.sh")
accel=$("$BPFLOCK_ROOT/scripts/vm.sh" --kernel "${image[stock]}" \
	--initrd "$tests/initramfs.cpio" --print-accel)

echo "kernel,round,row,ops_per_sec" >"$out/raw.csv"
for r in $(seq 1 "$rounds"); do
	for k in stock ours; do
		say "round $r/$rounds: $k"
		"$BPFLOCK_ROOT/scripts/vm.sh" --kernel "${image[$k]}" --initrd "$tests/initramfs.cpio" \
			--name "$k" --quiet --log "$out/$k-console.log" --out "$out/$k-$r.txt" \
			--cmd "/tests/bench $scale >/dev/ttyS1 2>&1" ||
			die "bench failed on $k; console: $out/$k-console.log"
		"$BPFLOCK_ROOT/scripts/splats.sh" "$out/$k-console.log"
		grep -E '^[^#].*,[0-9.]+$' "$out/$k-$r.txt" | grep -v '^BPFLOCK_STATUS' |
			sed "s/^/$k,$r,/" >>"$out/raw.csv"
	done
done

# min/median/max per (row, kernel); ratio of medians, and its spread
# (ours min / stock max .. ours max / stock min).
awk -F, -v accel="$accel" -v rounds="$rounds" '
NR == 1 { next }
{
	key = $3 SUBSEP $1
	if (!(key in n)) { if (!($3 in seen)) { seen[$3] = 1; order[++rows] = $3 } }
	v[key, ++n[key]] = $4
}
function stats(key,   i, j, m, t, a) {
	m = n[key]
	for (i = 1; i <= m; i++) a[i] = v[key, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	smin = a[1]; smax = a[m]; smed = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
END {
	printf "# bpflock benchmarks: ours vs stock\n\n"
	printf "Accelerator: **%s**, 4 vCPUs, %d rounds, kernels booted in turn. Units: operations per second (higher is better); under TCG absolute numbers mean little, the ratio is the figure.\n\n", accel, rounds
	printf "| # | row | stock min / median / max | ours min / median / max | ours/stock (median) | spread |\n"
	printf "|---|---|---|---|---|---|\n"
	for (r = 1; r <= rows; r++) {
		row = order[r]
		stats(row SUBSEP "ours"); o1 = smin; o2 = smed; o3 = smax
		if (!n[row SUBSEP "stock"]) {
			# a capability stock does not have: no ratio
			printf "| %d | %s | (stock cannot) | %.0f / %.0f / %.0f | ours only | |\n", r, row, o1, o2, o3
			ours_only[row] = o2
			continue
		}
		stats(row SUBSEP "stock"); s1 = smin; s2 = smed; s3 = smax
		ratio = s2 ? o2 / s2 : 0
		printf "| %d | %s | %.0f / %.0f / %.0f | %.0f / %.0f / %.0f | %.3f | %.2f..%.2f |\n", r, row, s1, s2, s3, o1, o2, o3, ratio, s3 ? o1 / s3 : 0, s1 ? o3 / s1 : 0
		printf "%d %.4f %.4f %.4f\n", r, ratio, s3 ? o1 / s3 : 0, s1 ? o3 / s1 : 0 > "/dev/stderr"
		ours_med[row] = o2
	}
	# user-space read-modify-write against a plain locked update, on ours
	for (row in ours_only) {
		base = row
		sub(/locked_map__add/, "update BPF_F_LOCK", base)
		sub(/bpf_spin_lock_pair/, "two single locks", base)
		if (ours_med[base])
			printf "\n%s: %.0f /s, %.2f x the time of %s on ours (medians)\n", row, ours_only[row], ours_med[base] / ours_only[row], base
	}
}' "$out/raw.csv" >"$out/table.md" 2>"$out/ratios.dat"

if command -v gnuplot >/dev/null; then
	gnuplot <<GP
set terminal pngcairo size 1000,500
set output "$out/ratios.png"
set title "bpflock: ours / stock per row (median, bars: spread over rounds; $accel)"
set ylabel "ours / stock (higher is better)"
set xlabel "row (see table.md)"
set style fill solid 0.5
set boxwidth 0.6
set xtics 1
set grid ytics
set yrange [0:*]
plot "$out/ratios.dat" using 1:2 with boxes title "median ratio", \
     "$out/ratios.dat" using 1:2:3:4 with yerrorbars title "spread", \
     1 with lines dt 2 title "parity"
GP
fi
# The verifier's cost on the selftests' objects (two veristat guests per
# round, minutes under TCG): with SCALE=100 only, not in smoke runs.
if [ "$scale" -ge 100 ]; then
	{ echo; "$BPFLOCK_ROOT/scripts/verifier-bench.sh" "$rounds"; } >>"$out/table.md"
fi
cat "$out/table.md"
say "raw: $out/raw.csv, table: $out/table.md, plot: $out/ratios.png"
