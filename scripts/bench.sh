#!/usr/bin/env bash
# Benchmarks: boot stock and ours in turn (same config, same QEMU settings)
# for ROUNDS rounds, run tests/bench.c in each, and report per row
# min/median/max per kernel and the ratio ours/stock (higher is better).
# Then ICOUNT_ROUNDS rounds (3) of the single-thread rows with QEMU's
# instruction counting, reported as instructions per operation.
# Writes raw.csv, icount.csv, table.md, ratios.png and icount.png under
# build/bench/.
# usage: scripts/bench.sh [ROUNDS (5)] [SCALE percent (100)]
# env:   ICOUNT_ROUNDS (3, or ROUNDS if fewer; 0 skips them),
#        VERIFIER_ROUNDS (1: rounds of scripts/verifier-bench.sh)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rounds=${1:-5}
scale=${2:-100}
icount_rounds=${ICOUNT_ROUNDS:-$((rounds < 3 ? rounds : 3))}
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

# The single-thread rows again, in guests whose clock counts instructions
# (vm.sh --icount): instructions per operation, the same whatever the
# host's load, so that small differences show. One vCPU: with more, the
# guest hangs bringing the others up under icount; single-thread rows do
# not need them, and a lock prefix the kernel drops on one CPU is not an
# instruction.
echo "kernel,round,row,insns_per_op" >"$out/icount.csv"
for r in $(seq 1 "$icount_rounds"); do
	for k in stock ours; do
		say "instruction counts, round $r/$icount_rounds: $k"
		"$BPFLOCK_ROOT/scripts/vm.sh" --icount --cpus 1 --kernel "${image[$k]}" \
			--initrd "$tests/initramfs.cpio" --name "$k" --quiet \
			--log "$out/$k-icount-console.log" --out "$out/$k-icount-$r.txt" \
			--cmd "/tests/bench $scale icount >/dev/ttyS1 2>&1" ||
			die "bench (icount) failed on $k; console: $out/$k-icount-console.log"
		"$BPFLOCK_ROOT/scripts/splats.sh" "$out/$k-icount-console.log"
		grep -E '^[^#].*,[0-9.]+$' "$out/$k-icount-$r.txt" | grep -v '^BPFLOCK_STATUS' |
			awk -F, -v k="$k" -v r="$r" '{ printf "%s,%s,%s,%.1f\n", k, r, $1, 1e9 / $2 }' \
				>>"$out/icount.csv"
	done
done

# Per (row, kernel) min/median/max over the rounds; ratio of the medians
# and per round (round r of ours against round r of stock), and where a
# row is ours only, against the row it replaces. icount=1: instructions
# per operation (lower is better), else operations per second.
table() {
	awk -F, -v accel="$accel" -v rounds="$1" -v icount="$2" '
NR == 1 { next }
{
	key = $3 SUBSEP $1
	if (!($3 in seen)) { seen[$3] = 1; order[++rows] = $3 }
	v[key, ++n[key]] = $4
}
function stats(key,   i, j, m, t, a) {
	m = n[key]
	for (i = 1; i <= m; i++) a[i] = v[key, i]
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	smin = a[1]; smax = a[m]; smed = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
# ratio a/b of two rows round by round: rmin, rmax
function per_round(ka, kb,   i, x) {
	rmin = rmax = ""
	for (i = 1; i <= n[ka] && i <= n[kb]; i++) {
		if (!v[kb, i]) continue
		x = v[ka, i] / v[kb, i]
		if (rmin == "" || x < rmin) rmin = x
		if (rmax == "" || x > rmax) rmax = x
	}
}
function num(x) { return icount ? sprintf("%.1f", x) : sprintf("%.0f", x) }
END {
	if (icount) {
		printf "## Instructions per operation (QEMU icount)\n\n"
		printf "TCG with `-icount shift=0,sleep=off`, %d rounds per kernel: guest time advances one nanosecond per instruction, so these are instructions per operation (lower is better), including the loop or the system call around it. Spread: (max - min) / median of each kernel.\n\n", rounds
		printf "| # | row | stock min / median / max | ours min / median / max | ours/stock (median) | spread stock / ours |\n"
	} else {
		printf "# bpflock benchmarks: ours vs stock\n\n"
		printf "Accelerator: **%s**, 4 vCPUs, %d rounds, kernels booted in turn. Units: operations per second (higher is better); under TCG absolute numbers mean little, the ratio is the figure. Per round: round r of ours against round r of stock, lowest and highest.\n\n", accel, rounds
		printf "| # | row | stock min / median / max | ours min / median / max | ours/stock (median) | per round | spread |\n"
	}
	printf icount ? "|---|---|---|---|---|---|\n" : "|---|---|---|---|---|---|---|\n"
	for (r = 1; r <= rows; r++) {
		row = order[r]
		ko = row SUBSEP "ours"; ks = row SUBSEP "stock"
		stats(ko); o1 = smin; o2 = smed; o3 = smax
		if (!n[ks]) {
			# a capability stock does not have: no ratio
			printf "| %d | %s | (stock cannot) | %s / %s / %s | ours only | |%s\n", r, row, num(o1), num(o2), num(o3), icount ? "" : " |"
			ours_only[row] = o2
			continue
		}
		stats(ks); s1 = smin; s2 = smed; s3 = smax
		ratio = s2 ? o2 / s2 : 0
		if (icount) {
			printf "| %d | %s | %s / %s / %s | %s / %s / %s | %.3f | %.2f%% / %.2f%% |\n", r, row, num(s1), num(s2), num(s3), num(o1), num(o2), num(o3), ratio, s2 ? 100 * (s3 - s1) / s2 : 0, o2 ? 100 * (o3 - o1) / o2 : 0
			printf "%d %.4f\n", r, ratio > "/dev/stderr"
		} else {
			per_round(ko, ks)
			printf "| %d | %s | %s / %s / %s | %s / %s / %s | %.3f | %.2f..%.2f | %.2f..%.2f |\n", r, row, num(s1), num(s2), num(s3), num(o1), num(o2), num(o3), ratio, rmin, rmax, s3 ? o1 / s3 : 0, s1 ? o3 / s1 : 0
			printf "%d %.4f %.4f %.4f\n", r, ratio, s3 ? o1 / s3 : 0, s1 ? o3 / s1 : 0 > "/dev/stderr"
		}
		ours_med[row] = o2
	}
	# ours only, against the row it replaces, on ours: time of this one
	# over time of that one (medians, and round by round)
	for (row in ours_only) {
		base = row
		sub(/locked_map__add/, "update BPF_F_LOCK", base)
		sub(/bpf_spin_lock_pair/, "two single locks", base)
		if (!ours_med[base])
			continue
		per_round(icount ? row SUBSEP "ours" : base SUBSEP "ours", icount ? base SUBSEP "ours" : row SUBSEP "ours")
		printf "\n%s: %s %s, %.2f x the time of %s on ours (medians; per round %.2f..%.2f)\n", row, num(ours_only[row]), icount ? "instructions" : "/s", icount ? ours_only[row] / ours_med[base] : ours_med[base] / ours_only[row], base, rmin, rmax
	}
}' "$3"
}
table "$rounds" 0 "$out/raw.csv" >"$out/table.md" 2>"$out/ratios.dat"
{ echo; table "$icount_rounds" 1 "$out/icount.csv"; } >>"$out/table.md" 2>"$out/icount-ratios.dat"

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
	[ ! -s "$out/icount-ratios.dat" ] || gnuplot <<GP
set terminal pngcairo size 1000,500
set output "$out/icount.png"
set title "bpflock: instructions per operation, ours / stock (median of $icount_rounds icount rounds)"
set ylabel "ours / stock (lower is better)"
set xlabel "row (see table.md, instructions per operation)"
set style fill solid 0.5
set boxwidth 0.6
set xtics 1
set grid ytics
set yrange [0:*]
plot "$out/icount-ratios.dat" using 1:2 with boxes title "median ratio", \
     1 with lines dt 2 title "parity"
GP
fi
# The verifier's cost on the selftests' objects (two veristat guests side
# by side, instruction counting: 6 minutes a round, the same figures each
# round): with SCALE=100 only, not in smoke runs.
if [ "$scale" -ge 100 ]; then
	{ echo; "$BPFLOCK_ROOT/scripts/verifier-bench.sh" "${VERIFIER_ROUNDS:-1}"; } >>"$out/table.md"
fi
cat "$out/table.md"
say "raw: $out/raw.csv and $out/icount.csv, table: $out/table.md, plots: $out/ratios.png and $out/icount.png"
