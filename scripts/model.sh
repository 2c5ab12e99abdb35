#!/usr/bin/env bash
# Model-check the lock protocol with Spin: tests/model/*.pml, exhaustive
# search (no -DBITSTATE), each correct model must pass and each mutant
# must be rejected with the kind of error it was written to produce.
# usage: scripts/model.sh [PATTERN]   (only checks whose name contains PATTERN)
#        FULL=1 scripts/model.sh      (adds the 3-CPU qspinlock liveness run: ~20-30 s, ~1 GB)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
-h|--help) sed -n '5,6s/^# \{0,1\}//p' "$0"; exit 0 ;;
esac
pattern=${1:-}
models=$BPFLOCK_ROOT/tests/model
out=$BPFLOCK_ROOT/build/model

# Spin from Debian; gcc compiles the verifier (pan) it generates.
if ! command -v spin >/dev/null; then
	say "spin not found: installing Debian's spin package"
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get install -y spin >/dev/null ||
		{ $sudo apt-get update >/dev/null && $sudo apt-get install -y spin >/dev/null; } ||
		die "could not install spin: run 'apt-get update && apt-get install -y spin' as root"
fi
command -v gcc >/dev/null || die "gcc not found: run 'apt-get install -y gcc' as root"

# One check per line: name | model | spin -D flags | cc flags | pan flags | expect
#   expect "pass": errors: 0 over the full state space;
#   otherwise the error pan must report (a mutant that spin cannot reject
#   means the model cannot fail, which proves nothing).
# Safety runs: -DSAFETY, assertions + invalid end states (deadlocks).
# Liveness runs: ltl claim, acceptance cycles under weak fairness (-a -f).
# -w sizes pan's hash table to the model (the default one costs more to
# clear than the small models take to check).
SAFE="-DSAFETY"
checks=(
"mutex_qspin|mutex_qspin.pml||$SAFE|-w22|pass"
"mutex_qspin_fetch_or|mutex_qspin.pml|-DFETCH_OR_ATOMIC|$SAFE|-w21|pass"
"mutex_qspin_mutant_split_cmpxchg|mutex_qspin.pml|-DMUTANT_SPLIT_CMPXCHG|$SAFE|-w18|assertion violated"
"mutex_qspin_mutant_pending_no_recheck|mutex_qspin.pml|-DMUTANT_PENDING_NO_RECHECK|$SAFE|-w18|assertion violated"
"mutex_qspin_mutant_no_handoff|mutex_qspin.pml|-DMUTANT_NO_HANDOFF|$SAFE|-w18|invalid end state"
"mutex_qspin_mutant_head_waits_zero|mutex_qspin.pml|-DMUTANT_HEAD_WAITS_ZERO|$SAFE|-w18|invalid end state"
"mutex_qspin_live|mutex_qspin.pml|-DLIVE -DNCPU=2||-w18 -a -f|pass"
"mutex_qspin_live_mutant_head_waits_zero|mutex_qspin.pml|-DLIVE -DNCPU=2 -DMUTANT_HEAD_WAITS_ZERO||-w18 -a -f|acceptance cycle"
"mutex_tas|mutex_tas.pml||$SAFE|-w16|pass"
"mutex_tas_mutant_test_then_set|mutex_tas.pml|-DMUTANT_TEST_THEN_SET|$SAFE|-w16|assertion violated"
"mutex_tas_mutant_wait_inverted|mutex_tas.pml|-DMUTANT_WAIT_INVERTED|$SAFE|-w16|invalid end state"
"mutex_tas_unfair|mutex_tas.pml|-DLIVE -DSTARVE||-w16 -a -f|acceptance cycle"
"copy_locked|copy_locked.pml||$SAFE|-w16|pass"
"copy_locked_mutant_early_unlock|copy_locked.pml|-DMUTANT_EARLY_UNLOCK|$SAFE|-w16|assertion violated"
"copy_locked_mutant_early_read|copy_locked.pml|-DMUTANT_EARLY_READ|$SAFE|-w16|assertion violated"
"copy_locked_mutant_no_lock|copy_locked.pml|-DMUTANT_NO_LOCK|$SAFE|-w16|assertion violated"
"hash_reuse|hash_reuse.pml||$SAFE|-w16|pass"
"hash_reuse_stock|hash_reuse.pml|-DSTOCK|$SAFE|-w16|assertion violated"
"hash_reuse_mutant_reset_lock|hash_reuse.pml|-DMUTANT_RESET_LOCK|$SAFE|-w16|assertion violated"
"nmi_guard|nmi_guard.pml||$SAFE|-w16|pass"
"nmi_guard_no_guard_same_elem|nmi_guard.pml|-DNO_GUARD -DNMI_ONLY_A|$SAFE|-w16|invalid end state"
"nmi_guard_no_guard_other_elem|nmi_guard.pml|-DNO_GUARD -DNMI_ONLY_B|$SAFE|-w16|assertion violated"
"nmi_guard_mutant_mark_late|nmi_guard.pml|-DMUTANT_MARK_LATE|$SAFE|-w16|invalid end state"
"nmi_guard_mutant_clear_early|nmi_guard.pml|-DMUTANT_CLEAR_EARLY|$SAFE|-w16|invalid end state"
"region_count|region_count.pml||$SAFE|-w16|pass"
"region_count_mutant_flag_same_elem|region_count.pml|-DMUTANT_FLAG -DNMI_ONLY_A|$SAFE|-w16|invalid end state"
"region_count_mutant_flag_other_elem|region_count.pml|-DMUTANT_FLAG -DNMI_ONLY_B|$SAFE|-w16|assertion violated"
"pair|pair.pml||$SAFE|-w20|pass"
"pair_mutant_arg_order|pair.pml|-DMUTANT_ARG_ORDER|$SAFE|-w20|invalid end state"
"pair_mutant_same_twice|pair.pml|-DMUTANT_SAME_TWICE|$SAFE|-w20|invalid end state"
"pair_mutant_call_under_pair|pair.pml|-DMUTANT_CALL_UNDER_PAIR|$SAFE|-w20|invalid end state"
)
if [ "${FULL:-0}" = 1 ]; then
	checks+=("mutex_qspin_live3|mutex_qspin.pml|-DLIVE -DNCPU=3||-w24 -m2000000 -a -f|pass")
fi

mkdir -p "$out"
start=$(date +%s.%N)
status=0
ran=0
for c in "${checks[@]}"; do
	IFS='|' read -r name file dflags ccflags panflags expect <<<"$c"
	[[ -z $pattern || $name == *"$pattern"* ]] || continue
	ran=$((ran + 1))
	say "checking model/$name ($file $dflags)"
	dir=$out/$name
	rm -rf "$dir" && mkdir -p "$dir"
	# a copy next to pan, so that a trail replays with "spin -t" there
	cp "$models/$file" "$dir/"
	t0=$(date +%s.%N)
	# -m: search depth (pan allocates it up front: keep it small); pan
	# says "max search depth too small", and the search is then not
	# exhaustive, if a model ever needs more: that fails the check.
	# shellcheck disable=SC2086 # the flag lists are split on purpose
	if ! (cd "$dir" && spin $dflags -a "$file" >spin.log 2>&1); then
		echo "not ok model/$name (spin -a failed, see $dir/spin.log)"
		status=1; continue
	fi
	# -O0: pan runs hardly faster optimised, and gcc -O2 on pan.c takes
	# longer than most of the searches. -w: pan.c's own warnings.
	# shellcheck disable=SC2086
	if ! (cd "$dir" && gcc -O0 -w $ccflags -o pan pan.c >cc.log 2>&1); then
		echo "not ok model/$name (gcc could not compile pan, see $dir/cc.log)"
		status=1; continue
	fi
	# pan exits 0 whether or not it found errors: its report says.
	# shellcheck disable=SC2086
	(cd "$dir" && ./pan -m100000 $panflags >pan.log 2>&1) || true
	t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	log=$dir/pan.log
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$log" | tail -n 1)
	states=$(awk '/states, stored/ { print $1; exit }' "$log")
	info="${states:-?} states, $t s"
	if [ -z "$errors" ]; then
		echo "not ok model/$name (pan gave no verdict, see $log)"
		status=1
	elif ! grep -q 'Full statespace search' "$log" || grep -q 'depth too small\|out of memory' "$log"; then
		echo "not ok model/$name (search not exhaustive: raise -m or memory, see $log)"
		status=1
	elif [ "$expect" = pass ]; then
		if [ "$errors" -eq 0 ]; then
			echo "ok model/$name ($info)"
		else
			echo "not ok model/$name (spin found an error: $(grep -m1 '^pan:1:' "$log"); replay: cd $dir && spin -t -p $dflags $file)"
			status=1
		fi
	else
		found=$(grep -m1 '^pan:1:' "$log" || true)
		if [ "$errors" -eq 0 ]; then
			echo "not ok model/$name (spin found no error: the model cannot fail)"
			status=1
		elif [[ $found != *"$expect"* ]]; then
			echo "not ok model/$name (spin found '$found', expected '$expect')"
			status=1
		else
			echo "ok model/$name (rejected: ${found#pan:1: }; $info)"
		fi
	fi
done
[ "$ran" -gt 0 ] || die "no check matches '$pattern'"
say "$ran checks in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
exit $status
