#!/usr/bin/env bash
# Judge the suite's results against what each case expects of each kernel
# variant, print one TAP line per (variant, case) and the closing totals.
#   feature: passes on stock and ours, fails on baseline
#   common:  passes everywhere
#   absent:  passes only on baseline (the feature is really gone)
#   beyond:  passes only on ours (a guarantee stock does not give); on
#            a base other than 6.1 not judged (reported as skipped) until
#            that base's series has the beyond patches (issue 37), unless
#            the manifest names the base after the kind (KT_ON_BASE: that
#            base's own series gives it)
# A case missing from a variant's results (crash, hang) counts as failed.
# usage: scripts/report.sh MANIFEST VARIANT=RESULTS [VARIANT=RESULTS...]
# exit: 0 when every (variant, case) met its expectation
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: scripts/report.sh MANIFEST VARIANT=RESULTS..."
manifest=$1
shift
args=()
for vr in "$@"; do
	args+=("${vr%%=*}" "${vr#*=}")
done

awk -v nruns=$# -v base="$BASE" '
function expect_pass(kind, variant) {
	if (kind == "common") return 1
	if (kind == "absent") return variant == "baseline"
	if (kind == "beyond") return variant == "ours"
	return variant != "baseline"
}
BEGIN {
	for (i = 1; i <= nruns; i++) {
		variant[i] = ARGV[2 * i]
		file[i] = ARGV[2 * i + 1]
		ARGV[2 * i] = ""
		ARGV[2 * i + 1] = ""
	}
	while ((getline line < ARGV[1]) > 0) {
		split(line, f, " ")
		n++; name[n] = f[1]; kind[f[1]] = f[2]; own[f[1]] = (3 in f) ? f[3] : ""
	}
	ARGV[1] = ""
	for (i = 1; i <= nruns; i++) {
		while ((getline line < file[i]) > 0) {
			if (line ~ /^(not )?ok [0-9]+ [^ ]+/) {
				split(line, f, " ")
				c = (f[1] == "not") ? f[4] : f[3]
				res[i, c] = (f[1] == "not") ? "fail" : (line ~ /# SKIP/ ? "skip" : "pass")
				if (line ~ /# SKIP/) { why[i, c] = line; sub(/.*# SKIP */, "", why[i, c]) }
			}
		}
	}
	pass = fail = skip = 0
	for (i = 1; i <= nruns; i++) {
		for (j = 1; j <= n; j++) {
			c = name[j]; k = kind[c]; v = variant[i]
			r = ((i, c) in res) ? res[i, c] : "missing"
			want = expect_pass(k, v)
			t++
			if (k == "beyond" && base != "6.1" && own[c] != base && r != "missing") {
				skip++
				printf "ok %d %s %s # SKIP beyond case, not judged on %s (%s there): not in the %s series yet\n", t, v, c, base, r, base
			} else if (r == "skip") {
				skip++
				printf "ok %d %s %s # SKIP %s\n", t, v, c, why[i, c]
			} else if (r == "pass" && want) {
				pass++
				printf "ok %d %s %s\n", t, v, c
			} else if (r == "fail" && !want) {
				pass++
				printf "ok %d %s %s # %s case failed on %s, as it must\n", t, v, c, k, v
			} else {
				fail++
				if (r == "missing")
					printf "not ok %d %s %s # no result (crash or hang?)\n", t, v, c
				else if (want)
					printf "not ok %d %s %s # %s case failed on %s\n", t, v, c, k, v
				else
					printf "not ok %d %s %s # %s case passed on %s: it tests nothing there\n", t, v, c, k, v
			}
		}
	}
	printf "%d passed, %d failed, %d skipped\n", pass, fail, skip
	exit fail > 0
}' "$manifest" "${args[@]}"
