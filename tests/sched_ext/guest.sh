#!/bin/sh
# Runs in the guest (scripts/sched-ext.sh ships it with the four static
# schedulers in /bpflock): each scheduler in turn is started, must reach
# state "enabled", runs a mixed load (CPU-bound and sleeping processes in
# three cgroups of different cpu.weight) for a fixed time, must show its
# own counters moving, and is stopped with SIGINT. One line per scheduler
# on /dev/ttyS1 (and the console):
#   scx kernel=K sched=S verdict=V enabled=.. counters=a+b first=.. last=..
#       moved=.. load=.. load_s=.. detach=.. ... reason=TEXT
# verdict: runs, refused (never attached: its BPF did not load), or the
# first check that failed. A scheduler the kernel ejected runs once more:
# the first run's line starts "scx-first", the second's is the verdict. Every wait is bounded by SCX_WAIT_SECONDS and
# ends as soon as its condition holds, so a slow host makes a run longer,
# not a verdict different.
# usage: guest.sh KERNEL SCHEDULER...
#        guest.sh --worker CGROUP cpu|sleep SECONDS RESULT  (one load process)
# env: SCX_LOAD_SECONDS (10), SCX_WAIT_SECONDS (300)
LOAD=${SCX_LOAD_SECONDS:-10}
WAIT=${SCX_WAIT_SECONDS:-300}
CG=/sys/fs/cgroup
STATE=/sys/kernel/sched_ext/state
out=/dev/ttyS1

# Guest uptime in centiseconds, without a fork (/proc/uptime has two
# decimals; the guest is up for more than a second).
now() {
	read -r up _ </proc/uptime
	t=${up%.*}${up#*.}
}
secs() { # CENTISECONDS -> S.CC
	printf '%d.%02d' $(($1 / 100)) $(($1 % 100))
}

# One load process: into its cgroup, then busy (shell arithmetic) or
# sleeping (50 ms at a time) until SECONDS passed; its rounds in RESULT.
worker() {
	echo $$ >"$1/cgroup.procs" || exit 1
	now
	end=$((t + $3 * 100)) n=0
	while [ "$t" -lt "$end" ]; do
		if [ "$2" = cpu ]; then
			i=0
			while [ $i -lt 1000 ]; do i=$((i + 1)); done
		else
			sleep 0.05
		fi
		n=$((n + 1))
		now
	done
	echo "$n" >"$4"
}
if [ "${1:-}" = --worker ]; then
	worker "$2" "$3" "$4" "$5"
	exit
fi

cd /bpflock || exit 1
kernel=$1
shift
report() {
	echo "$*"
	echo "$*" >$out
}

# Three cgroups, weights 100, 300 and 50 (scx_flatcg schedules by them).
setup_cgroups() {
	grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 cgroup2 $CG || return 1
	echo +cpu >$CG/cgroup.subtree_control || return 1
	for g in a:100 b:300 c:50; do
		mkdir -p "$CG/scx_${g%:*}"
		echo "${g#*:}" >"$CG/scx_${g%:*}/cpu.weight" || return 1
	done
}

# The counters a scheduler prints every interval (its own stats), and
# the line that starts a sample.
counter_keys() {
	case "$1" in
	scx_simple) echo "local global" ;;
	scx_qmap) echo "enq dsp" ;;
	scx_central) echo "total timer" ;;
	scx_flatcg) echo "local global next" ;;
	esac
}
sample_start() {
	case "$1" in
	scx_simple) echo '^local=' ;;
	scx_qmap) echo '^stats' ;;
	scx_central) echo '^total' ;;
	scx_flatcg) echo '^\[SEQ' ;;
	esac
}
samples() { grep -c "$(sample_start "$1")" "$1.out"; }

# The first and the last value of each counter ("a+b" strings) and
# whether their sum grew: "FIRST LAST yes|no".
counters() { # SCHEDULER
	awk -v keys="$(counter_keys "$1")" '
	BEGIN { nk = split(keys, k, " ") }
	{
		gsub(/[:=]/, " ")
		for (i = 1; i < NF; i++)
			for (j = 1; j <= nk; j++)
				if ($i == k[j] && $(i + 1) ~ /^[0-9]+$/) {
					if (!(j in first)) first[j] = $(i + 1)
					last[j] = $(i + 1)
				}
	}
	END {
		for (j = 1; j <= nk; j++) {
			f = f (j > 1 ? "+" : "") (j in first ? first[j] : "-")
			l = l (j > 1 ? "+" : "") (j in last ? last[j] : "-")
			fs += first[j]; ls += last[j]
		}
		print f, l, (ls > fs ? "yes" : "no")
	}' "$1.out"
}

# scx_central's ops.init() checks that it runs on the central CPU (0).
# On 6.12.118 the kernel runs the whole enable, ops.init() included, in
# the "scx_ops_enable_helper" kthread (unbound, created by the first
# enable), not in the loading thread that scx_central pins to CPU 0: pin
# the helper to CPU 0 too, or init lands on any CPU and fails.
pin_enable_helper() {
	for c in /proc/[0-9]*/comm; do
		read -r name <"$c" 2>/dev/null || continue
		[ "$name" = scx_ops_enable_helper ] || continue
		p=${c#/proc/}
		taskset -p 1 "${p%/comm}" >/dev/null 2>&1 && { echo pinned; return; }
		echo pin_failed
		return
	done
	echo absent
}

# Poll until "test CONDITION" holds or WAIT seconds passed.
wait_for() { # DESCRIPTION CONDITION...
	what=$1
	shift
	now
	limit=$((t + WAIT * 100))
	while ! "$@"; do
		now
		if [ "$t" -ge "$limit" ]; then
			echo "bpflock-scx: gave up after $WAIT s waiting for $what"
			return 1
		fi
		sleep 0.2
	done
}
state_is() { [ "$(cat $STATE)" = "$1" ]; }
gone() { ! kill -0 "$pid" 2>/dev/null; }
enabled_or_gone() { state_is enabled || gone; }
samples_past() { [ "$(samples "$sched")" -gt "$1" ]; }
# a sample, or the scheduler is gone (ejected: no sample will come)
sample_or_gone() { samples_past "$1" || gone; }
load_done() { set -- load/*.res; [ -e "$1" ] && [ $# -ge "$nworkers" ]; }

# The load: in each cgroup two busy processes and one sleeping.
start_load() {
	rm -rf load
	mkdir load
	nworkers=0 wpids=
	for g in a b c; do
		for k in cpu cpu sleep; do
			nworkers=$((nworkers + 1))
			sh ./guest.sh --worker "$CG/scx_$g" $k "$LOAD" "load/$g.$k.$nworkers.res" &
			wpids="$wpids $!"
		done
	done
}
# Rounds per cgroup: a=N,b=N,c=N (busy processes only).
load_rounds() {
	r=
	for g in a b c; do
		r="$r${r:+,}$g=$(cat load/$g.cpu.*.res 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')"
	done
	echo "$r"
}

run_one() {
	sched=$1
	enabled=no enable_s=- moved=- first=- last=- load=- load_s=- rounds=- detach=- helper=-
	still=- exitmsg=- reason=
	if ! state_is disabled; then
		verdict=not_started
		line="kernel=$kernel sched=$sched verdict=$verdict reason=state $(cat $STATE) before the start"
		return
	fi
	echo "bpflock-scx: $sched starts"
	[ "$sched" != scx_central ] || helper=$(pin_enable_helper)
	now
	t0=$t
	./"$sched" >"$sched.out" 2>"$sched.err" &
	pid=$!
	wait_for "$sched to attach" enabled_or_gone
	now
	if state_is enabled; then
		enabled=yes enable_s=$(secs $((t - t0)))
		echo "bpflock-scx: $sched enabled ($(cat /sys/kernel/sched_ext/root/ops)) after $enable_s s"
		# a sample before the load, one after it
		wait_for "a first sample of $sched" sample_or_gone 0
		start_load
		now
		l0=$t
		if wait_for "the load to finish" load_done; then
			now
			load="done" load_s=$(secs $((t - l0)))
		else
			load=unfinished
			kill $wpids 2>/dev/null
		fi
		wait $wpids 2>/dev/null
		rounds=$(load_rounds)
		n=$(samples "$sched")
		wait_for "a sample of $sched after the load" sample_or_gone "$n"
		set -- $(counters "$sched")
		first=$1 last=$2 moved=$3
		if state_is enabled; then still=yes; else still=no; fi
		kill -INT "$pid" 2>/dev/null
	fi
	if ! wait_for "$sched to exit" gone; then
		kill -9 "$pid" 2>/dev/null
		detach=hung
	fi
	wait "$pid"
	rc=$?
	wait_for "state disabled after $sched" state_is disabled
	exitmsg=$(sed -n 's/^EXIT: //p' "$sched.err" | head -n 1)
	# a scheduler the kernel ejected may not print why; the kernel says,
	# naming its ops ("flatcg" for scx_flatcg)
	[ -n "$exitmsg" ] || [ "$enabled" != yes ] ||
		exitmsg=$(dmesg | sed -n "s/.*sched_ext: BPF scheduler \"${sched#scx_}\" disabled (\(.*\))\$/\1/p" | tail -n 1)
	if [ "$detach" != hung ]; then
		if [ "$enabled" = yes ] && state_is disabled && [ "$exitmsg" = "unregistered from user space" ]; then
			detach=clean
		elif [ "$enabled" = yes ]; then
			detach=unclean
		fi
	fi
	if [ "$enabled" = yes ]; then
		if [ "$still" != yes ]; then verdict=kicked_out reason=$exitmsg
		elif [ "$moved" != yes ]; then verdict=counters_still
		elif [ "$load" != done ]; then verdict=load_unfinished
		elif [ "$detach" != clean ]; then verdict=detach_$detach reason=$exitmsg
		else verdict=runs
		fi
	elif [ -z "$exitmsg" ] && state_is disabled && grep -q 'Failed to load skel' "$sched.err"; then
		# never attached: the kernel refused its BPF; the reason is libbpf's
		# first error, and the verifier's last word when a program was refused
		verdict=refused
		reason=$(awk '/^libbpf: / && !e { e = substr($0, 9) }
			/^processed [0-9]+ insns/ && !v { v = prev }
			{ prev = $0 }
			END { print e (v != "" ? ": " v : "") }' "$sched.err")
	else
		verdict=not_enabled reason=${exitmsg:-$(tail -n 1 "$sched.err")}
	fi
	line="kernel=$kernel sched=$sched verdict=$verdict enabled=$enabled enable_s=$enable_s"
	line="$line counters=$(counter_keys "$sched" | tr ' ' '+') first=$first last=$last moved=$moved"
	line="$line load=$load load_s=$load_s rounds=$rounds still_enabled=$still detach=$detach rc=$rc"
	line="$line helper=$helper state=$(cat $STATE) reason=$reason"
	if [ "$verdict" != runs ]; then
		echo "# $sched: its last output lines" >$out
		tail -n 15 "$sched.out" "$sched.err" | sed 's/^/# /' >$out
	fi
}

echo "bpflock-scx: $kernel-6.12, $(nproc) CPUs, ${LOAD} s of load per scheduler, waits up to ${WAIT} s"
[ -r $STATE ] || { report "scx kernel=$kernel verdict=no_sched_ext reason=no $STATE: CONFIG_SCHED_CLASS_EXT is off"; exit 1; }
setup_cgroups || { report "scx kernel=$kernel verdict=no_cgroups reason=cannot set up cgroup2 with the cpu controller"; exit 1; }
# A scheduler the kernel ejected runs once more, and its second run is
# the verdict: sched_ext's watchdog ejects one whose tasks wait 30 s,
# which a guest starved by its host's load reaches while nothing is
# stuck (ours-6.12's scx_flatcg: "runnable task stall", its 10 s load
# taking 45 s on a host running a kernel build), and a sample scheduler
# may still meet the kernel's migration-disabled check as timing falls.
# The first run's line (scx-first) stays in the results: ejected once is
# slow, ejected twice is the verdict.
for s in "$@"; do
	run_one "$s"
	if [ "$verdict" = kicked_out ]; then
		report "scx-first $line"
		echo "bpflock-scx: $s was ejected ($reason): slow or stuck, running it again"
		run_one "$s"
	fi
	report "scx $line"
done
exit 0
