// SPDX-License-Identifier: GPL-2.0
/*
 * Lock regions and tracing programs (progs/guard.bpf.c). tc programs on
 * every vCPU lock one element at full rate while a tracing program that
 * locks the same element fires where a CPU may already hold or wait for
 * it: in NMI (sysrq 'l' sends backtrace NMIs to every CPU, whose handler
 * fires nmi:nmi_handler) and in the lock's slow path
 * (lock:contention_begin). nmi_storm_pair does the same with the pair
 * lock of two elements, taken in opposite orders by the tc programs and
 * the NMI program.
 *
 * Invariant: the element's counter equals the tc runs plus the tracing
 * program's own runs, and the guard skipped it at least once (its
 * recursion_misses). On a kernel without the guard a CPU waits for a
 * lock it holds itself, and every CPU an NMI reaches next waits behind
 * it: CPU 0 sends the NMIs (a sender takes none) and watches, the tc
 * programs run on the other CPUs. When progress stops, CPU 0 stops the
 * NMIs and waits for it to resume (a slow guest: logged, and the case
 * goes on); if it does not, it reports the deadlock (a tc CPU takes no
 * timer interrupt, after STALL_MAX_MS) or the stall (they all still do,
 * after STALL_HARD_MS) and powers the guest off, a deadlock before any
 * stall detector fires, so this binary runs last (guest/run-suite.sh).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

#define MAX_THREADS 8
#define MAX_CPUS 8		/* CONFIG_NR_CPUS */
#define REPEAT 200
#define MIN_NMIS 40		/* sysrq rounds an NMI storm goes on for */
#define CONTENTION_STORMS 4	/* storms a contention case runs, at most */
/*
 * The watch (run_storm()): no progress for STALL_MS starts gathering
 * evidence, twice a second. A CPU that took no timer interrupt for
 * SILENT_MS, and was not idle, spins with interrupts off: with no
 * progress for STALL_MAX_MS that is a deadlock, and the watch ends the
 * guest. While the CPUs take their interrupts RCU is not at risk, and a
 * starved guest whose lock holder's vCPU the host rarely runs pauses for
 * longer: the watch waits up to STALL_HARD_MS for progress before calling
 * it a stall. The kernel's RCU stall report is off during a storm
 * (rcu_stall_reports()): on a loaded host the guest's RCU stall timeout
 * (21 s) can pass before the watch has its evidence, and the report, a
 * splat, would fail the kernel whose deadlock is the expected failure;
 * a deadlock on any kernel still fails the case by the watch's verdict.
 */
#define STALL_MS 3000
#define STALL_MAX_MS 12000
#define STALL_HARD_MS 60000
#define SILENT_MS 5000
#define SAMPLE_MS 500

struct gelem {
	long cnt;
	struct bpf_spin_lock lock;
	int pad;
};

struct gstats {
	long nmi_runs;
	long cont_runs;
	long plain_runs;
	long bucket_runs;
	long freelist_runs;
};

/* Shared between the storm child and the watching parent. */
struct storm {
	volatile long progress;		/* test runs done, all threads */
	volatile long tc_runs;
	volatile int stop;
	int prog_fd;
	int threads;
	bool sysrq;
	int hq_fd;			/* >= 0: a thread updates and deletes in it */
	long hq_ops;
	volatile long nmis;		/* sysrq writes */
	int ran;			/* seconds the storm ran */
	int err;
	double longest_pause_ms;	/* without progress, resumed (run_storm()) */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct tc_arg {
	struct storm *s;
	int cpu;
};

static void *tc_thread(void *arg)
{
	struct tc_arg *a = arg;
	struct storm *s = a->s;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = REPEAT);
	char pkt[64] = {};

	opts.data_in = pkt;
	opts.data_size_in = sizeof(pkt);
	pin_cpu(a->cpu);
	while (!s->stop) {
		if (bpf_prog_test_run_opts(s->prog_fd, &opts) || opts.retval) {
			s->err = errno ? errno : EINVAL;
			break;
		}
		__atomic_add_fetch(&s->tc_runs, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&s->progress, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *sysrq_thread(void *arg)
{
	struct storm *s = arg;
	int fd = open("/proc/sysrq-trigger", O_WRONLY);
	if (fd < 0) {
		s->err = errno;
		return NULL;
	}
	pin_cpu(0);
	while (!s->stop) {
		long before = s->progress;

		/*
		 * No NMIs unless the tc CPUs made progress just now: a CPU
		 * stuck in NMI never answers the next sysrq 'l', which then
		 * waits 10 s with CPU 0 busy, and the stall detector would
		 * fire before the watcher could end the guest.
		 */
		usleep(5000);
		if (s->progress == before)
			continue;
		if (write(fd, "l", 1) == 1)
			s->nmis++;
	}
	close(fd);
	return NULL;
}

/* Holds hq's only bucket over and over, calling __pcpu_freelist_pop. */
static void *bucket_thread(void *arg)
{
	struct storm *s = arg;
	int k = 1;
	long v = 0;

	pin_cpu(1);
	while (!s->stop) {
		if (bpf_map_update_elem(s->hq_fd, &k, &v, 0) ||
		    bpf_map_delete_elem(s->hq_fd, &k)) {
			s->err = errno;
			break;
		}
		s->hq_ops++;
	}
	return NULL;
}

/* With NMIs, CPU 0 is the sender and watcher; else all CPUs lock. */
static int tc_cpu(const struct storm *s, int thread, int ncpu)
{
	return s->sysrq ? 1 + thread % (ncpu - 1) : thread % ncpu;
}

/* The storm: runs in a child so that the parent can watch it. */
static void storm_child(struct storm *s, int seconds)
{
	pthread_t th[MAX_THREADS + 2];
	struct tc_arg args[MAX_THREADS];
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int i, n = 0;

	for (i = 0; i < s->threads; i++) {
		args[i].s = s;
		args[i].cpu = tc_cpu(s, i, ncpu);
		pthread_create(&th[n++], NULL, tc_thread, &args[i]);
	}
	if (s->sysrq)
		pthread_create(&th[n++], NULL, sysrq_thread, s);
	if (s->hq_fd >= 0)
		pthread_create(&th[n++], NULL, bucket_thread, s);
	sleep(seconds);
	/*
	 * An NMI storm tests what its NMIs hit, and a slow guest sends fewer
	 * in the same time (6 sysrq rounds in 15 s on a loaded host, over 100
	 * on an idle one): too few, and a kernel without the guard passes.
	 * Go on until MIN_NMIS rounds, for at most four times as long.
	 */
	for (s->ran = seconds; s->sysrq && s->nmis < MIN_NMIS && s->ran < 4 * seconds; s->ran++)
		sleep(1);
	s->stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static const struct kt_case *guard_cases;
static int guard_ncases;

/* Does a line of FILE contain WORD? */
static bool file_has(const char *file, const char *word)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(file, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, word) != NULL;
	fclose(f);
	return found;
}

/*
 * A guest kernel with CONFIG_PARAVIRT under a hypervisor without PV
 * spinlocks (Debian's config under QEMU TCG) takes contended spin locks
 * with virt_spin_lock()'s test-and-set loop: the queued slow path, and
 * lock:contention_begin in it, never run.
 */
static bool contention_tp_bypassed(void)
{
	return file_has("/proc/cpuinfo", " hypervisor") &&
	       file_has("/proc/kallsyms", " virt_spin_lock_key");
}

/*
 * The results leave through ttyS1, whose transmit interrupt must reach a
 * CPU that is not stuck when a kernel without the guard deadlocks: CPU 0,
 * where the NMI storms keep their own thread. With an IO-APIC (Debian's
 * config) the interrupt may otherwise land on a deadlocked CPU and the
 * verdict never leaves the guest.
 */
static void serial_irq_to_cpu0(void)
{
	char path[64];
	int irq = 0, fd;
	FILE *f = fopen("/sys/class/tty/ttyS1/irq", "r");

	if (!f)
		return;
	if (fscanf(f, "%d", &irq) != 1)
		irq = 0;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	fd = open(path, O_WRONLY);
	if (irq > 0 && fd >= 0 && write(fd, "0", 1) != 1)
		perror(path);
	if (fd >= 0)
		close(fd);
}

/*
 * A line must leave the UART before a reset: a write only fills the tty's
 * buffer. Wait until the buffer and the transmitter are empty, at most
 * 2 s, since the interrupt may be due on a stuck CPU. Polled: the guest
 * kernel has no POSIX timers, so alarm() cannot bound tcdrain().
 */
static void drain_tty(int fd)
{
	int i, queued, lsr;

	for (i = 0; i < 200; i++) {
		if (ioctl(fd, TIOCOUTQ, &queued) ||
		    (!queued && (ioctl(fd, TIOCSERGETLSR, &lsr) || (lsr & TIOCSER_TEMT))))
			return;
		usleep(10 * 1000);
	}
}

/*
 * The storm made no progress and never will: a CPU spins with interrupts
 * off on a lock it holds itself (@deadlock), or the storm is stuck some
 * other way and its child may never end. Fail the case with @why, then
 * power off at once (the report counts this case, and anything after
 * it, as failed).
 */
static void storm_poweroff(const char *name, const char *why, bool deadlock)
{
	int fd = open("/dev/ttyS1", O_WRONLY);
	char line[2048];
	int len, i, after = 0;

	len = snprintf(line, sizeof(line), "not ok 99 guard/%s # %s\n", name, why);
	/* the cases after this one cannot run: say so rather than vanish */
	for (i = 0; i < guard_ncases && len < (int)sizeof(line) - 200; i++) {
		if (after)
			len += snprintf(line + len, sizeof(line) - len,
					"not ok 99 guard/%s # not run: the guest is reset after guard/%s %s\n",
					guard_cases[i].name, name,
					deadlock ? "deadlocked" : "stalled");
		else if (!strcmp(guard_cases[i].name, name))
			after = 1;
	}
	len += snprintf(line + len, sizeof(line) - len, "BPFLOCK_STATUS=1\n");
	fputs(line, stdout);
	fflush(stdout);
	if (fd >= 0 && write(fd, line, len) < 0)
		perror("ttyS1");
	if (fd >= 0)
		drain_tty(fd);
	sync();
	/*
	 * sysrq 'b' restarts at once (QEMU's -no-reboot ends the guest): an
	 * orderly reboot would wait for the deadlocked CPUs.
	 */
	fd = open("/proc/sysrq-trigger", O_WRONLY);
	if (fd < 0 || write(fd, "b", 1) != 1)
		reboot(RB_AUTOBOOT);
}

/*
 * The backtraces of thousands of NMIs must not reach the console, which
 * is scanned for "Call Trace:": keep the console quiet while they are
 * stored, and until the records stored in NMI have been passed over
 * (which happens later, from irq_work) before restoring its level.
 */
static char saved_level[64];

static void quiet_console(bool quiet)
{
	int fd = open("/proc/sys/kernel/printk", O_RDWR);
	const char *level = quiet ? "1 4 1 7" : saved_level;
	ssize_t n;

	if (fd < 0)
		return;
	if (quiet) {
		n = read(fd, saved_level, sizeof(saved_level) - 1);
		saved_level[n > 0 ? n : 0] = 0;
	} else {
		sleep(2);
	}
	if (*level && write(fd, level, strlen(level)) < 0)
		perror("printk level");
	close(fd);
}

/*
 * BPFLOCK_STALL_MS: how long a storm may make no progress before the
 * watch ends the guest (STALL_MAX_MS); longer lets the kernel's own
 * detectors speak.
 */
static double stall_max_ms(void)
{
	const char *s = getenv("BPFLOCK_STALL_MS");

	return s ? atof(s) : STALL_MAX_MS;
}

/*
 * What a CPU did, seen from another one: its local timer interrupts (LOC
 * in /proc/interrupts) and its idle time (/proc/stat). A CPU that runs,
 * however slowly its vCPU thread is scheduled, takes timer interrupts; a
 * CPU spinning with interrupts off takes none and is not idle; an idle
 * CPU of a tickless kernel takes none either, but its idle time grows.
 */
struct cpu_sample {
	unsigned long long loc[MAX_CPUS];
	unsigned long long idle[MAX_CPUS];	/* idle + iowait, USER_HZ */
};

/* The LOC line's counts, placed by the CPU numbers of the header. */
static bool read_timer_irqs(struct cpu_sample *cs)
{
	int col[MAX_CPUS], ncol = 0, cpu, i, off;
	FILE *f = fopen("/proc/interrupts", "r");
	unsigned long long v;
	char line[1024], *p;
	bool found = false;

	if (!f)
		return false;
	if (fgets(line, sizeof(line), f))
		for (p = line; ncol < MAX_CPUS && (p = strstr(p, "CPU")); p += 3)
			if (sscanf(p, "CPU%d", &cpu) == 1 && cpu >= 0 && cpu < MAX_CPUS)
				col[ncol++] = cpu;
	while (!found && fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "LOC:", 4))
			continue;
		p += 4;
		for (i = 0; i < ncol && sscanf(p, "%llu%n", &v, &off) == 1; i++, p += off)
			cs->loc[col[i]] = v;
		found = ncol > 0 && i == ncol;
	}
	fclose(f);
	return found;
}

/* Idle and iowait time of each "cpuN" line of /proc/stat. */
static bool read_idle(struct cpu_sample *cs)
{
	unsigned long long user, nice, sys, idle, iowait;
	FILE *f = fopen("/proc/stat", "r");
	char line[512];
	int cpu, n = 0;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9' &&
		    sscanf(line, "cpu%d %llu %llu %llu %llu %llu", &cpu, &user, &nice, &sys,
			   &idle, &iowait) == 6 && cpu < MAX_CPUS) {
			cs->idle[cpu] = idle + iowait;
			n++;
		}
	fclose(f);
	return n > 0;
}

/* One storm's progress, and its tc CPUs while the progress has stopped. */
struct watch {
	long last;			/* progress when last seen to change */
	double since;			/* then (ms) */
	double watched;			/* first CPU sample of this pause, 0: none */
	double next;			/* next CPU sample */
	struct cpu_sample first, prev;
	double moved[MAX_CPUS];		/* a timer interrupt or idle time, last seen */
	bool tc[MAX_CPUS];		/* CPUs the tc threads are pinned to */
	int ncpu;
};

/* "CPU 2", "CPUs 1-3" or "CPUs 0,2-3": the CPUs set in @set. */
static const char *cpu_list(const bool *set, int n, char *buf, size_t size)
{
	int i, j, count = 0, len;

	for (i = 0; i < n; i++)
		count += set[i];
	len = snprintf(buf, size, count == 1 ? "CPU " : "CPUs ");
	for (i = 0; i < n && len < (int)size; i = j + 1) {
		for (j = i; j < n && set[j]; j++)
			;
		if (j == i)
			continue;
		len += snprintf(buf + len, size - len, "%s%d", len > 5 ? "," : "", i);
		if (j - 1 > i && len < (int)size)
			len += snprintf(buf + len, size - len, "-%d", j - 1);
	}
	return buf;
}

/* Timer interrupts the tc CPUs took from sample @a to sample @b. */
static unsigned long long tc_timer_irqs(const struct watch *w, const struct cpu_sample *a,
					const struct cpu_sample *b)
{
	unsigned long long sum = 0;
	int cpu;

	for (cpu = 0; cpu < w->ncpu; cpu++)
		if (w->tc[cpu])
			sum += b->loc[cpu] - a->loc[cpu];
	return sum;
}

/*
 * Sample every CPU; note which ones moved. Without both files there is
 * no evidence of silence: count every CPU as moved, so that the watch
 * never calls a deadlock it could not see.
 */
static void watch_sample(struct watch *w, double now)
{
	struct cpu_sample cs = {};
	bool ok = read_timer_irqs(&cs) && read_idle(&cs);
	int cpu;

	for (cpu = 0; cpu < w->ncpu; cpu++)
		if (!ok || !w->watched || cs.loc[cpu] != w->prev.loc[cpu] ||
		    cs.idle[cpu] != w->prev.idle[cpu])
			w->moved[cpu] = now;
	if (!w->watched) {
		w->first = cs;
		w->watched = now;
	}
	w->prev = cs;
	w->next = now + SAMPLE_MS;
}

/* Progress came back after a pause the watch saw: the guest is slow. */
static void watch_resumed(struct kt *t, const struct watch *w, double now)
{
	struct cpu_sample cs = {};
	char cpus[64];

	read_timer_irqs(&cs);
	kt_log(t, "no progress for %.0f ms, resumed: a slow guest, not a deadlock; tc %s took %llu timer interrupts in its last %.0f ms",
	       now - w->since, cpu_list(w->tc, w->ncpu, cpus, sizeof(cpus)),
	       tc_timer_irqs(w, &w->first, &cs), now - w->watched);
}

/*
 * Is any tc CPU silent: no timer interrupt for SILENT_MS, and not idle?
 * In this storm such a CPU spins with interrupts off, on a lock its own
 * CPU holds (in NMI) or behind such a CPU.
 */
static int silent_cpus(const struct watch *w, double now, bool *silent, double *quiet)
{
	int cpu, n = 0;

	*quiet = now;
	for (cpu = 0; cpu < w->ncpu; cpu++) {
		silent[cpu] = w->tc[cpu] && now - w->moved[cpu] >= SILENT_MS;
		if (silent[cpu]) {
			n++;
			if (now - w->moved[cpu] < *quiet)
				*quiet = now - w->moved[cpu];
		}
	}
	return n;
}

/*
 * No progress for STALL_MAX_MS and a silent tc CPU: a deadlock, end the
 * guest. No progress for STALL_HARD_MS while the CPUs still run: the
 * storm is stuck some other way, which is no deadlock of this kind; end
 * the guest too, since its child may never end.
 */
static void watch_judge(struct kt *t, const struct watch *w, double now, double bound,
			double hard)
{
	bool silent[MAX_CPUS], idle[MAX_CPUS] = {};
	char why[512], a[64], b[64];
	int cpu, nidle = 0;
	double quiet;

	if (now - w->since >= bound && now - w->watched >= SILENT_MS &&
	    silent_cpus(w, now, silent, &quiet)) {
		snprintf(why, sizeof(why),
			 "no progress for %.0f ms and %s took no timer interrupt for %.0f ms: a CPU waits for a lock it holds (deadlock)",
			 now - w->since, cpu_list(silent, w->ncpu, a, sizeof(a)), quiet);
		storm_poweroff(t->name, why, true);
	}
	if (now - w->since < hard || now - w->watched < SILENT_MS)
		return;
	for (cpu = 0; cpu < w->ncpu; cpu++) {
		idle[cpu] = w->tc[cpu] && w->prev.idle[cpu] != w->first.idle[cpu];
		nidle += idle[cpu];
	}
	snprintf(why, sizeof(why),
		 "no progress for %.0f ms, yet tc %s took %llu timer interrupts in its last %.0f ms%s%s: stalled, not a deadlock (no CPU spins with interrupts off)",
		 now - w->since, cpu_list(w->tc, w->ncpu, a, sizeof(a)),
		 tc_timer_irqs(w, &w->first, &w->prev), now - w->watched,
		 nidle ? "; idle meanwhile: " : "", nidle ? cpu_list(idle, w->ncpu, b, sizeof(b)) : "");
	storm_poweroff(t->name, why, false);
}

/*
 * Run the storm for @seconds and watch it. A pause in its progress is no
 * verdict: the guest's vCPUs are host threads, and under TCG a busy host
 * leaves them without progress for seconds (over 12 s seen with lock
 * contention: the vCPU holding the lock runs rarely, the others spin).
 * From STALL_MS without progress the watch samples the CPUs; when
 * progress resumes it logs the pause and goes on (the case's invariants
 * judge it); otherwise watch_judge() ends the guest, as a deadlock only
 * if a tc CPU stopped taking timer interrupts. It concludes only after
 * sampling for SILENT_MS: a guest the host did not run at all (CPU 0
 * included) reaches the bound with no evidence yet.
 */
#define RCU_STALL_SUPPRESS "/sys/module/rcupdate/parameters/rcu_cpu_stall_suppress"

/*
 * Turn the kernel's RCU CPU stall reports off (@off) or back to @was; the
 * old value, or -1 where the kernel has no such parameter.
 */
static int rcu_stall_reports(bool off, int was)
{
	char buf[16] = "";
	int fd = open(RCU_STALL_SUPPRESS, O_RDWR), old = -1;

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		old = atoi(buf);
	snprintf(buf, sizeof(buf), "%d\n", off ? 1 : was);
	if (pwrite(fd, buf, strlen(buf), 0) < 0)
		old = -1;
	close(fd);
	return old;
}

static void run_storm(struct kt *t, struct storm *s, int seconds)
{
	double bound = stall_max_ms(), start = bound < STALL_MS ? bound : STALL_MS;
	double hard = bound > STALL_HARD_MS ? bound : STALL_HARD_MS;
	struct watch w = { .last = -1 };
	int status, i, rcu_was;
	pid_t pid;

	w.ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (w.ncpu > MAX_CPUS)
		w.ncpu = MAX_CPUS;
	for (i = 0; i < s->threads; i++)
		w.tc[tc_cpu(s, i, w.ncpu)] = true;
	rcu_was = rcu_stall_reports(true, 0);
	pid = fork();
	if (pid == 0)
		storm_child(s, seconds);
	if (!KT_OK(t, pid, "fork"))
		goto out;
	for (;;) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		double now;

		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		now = now_ms();
		if (s->progress != w.last) {
			if (w.watched)
				watch_resumed(t, &w, now);
			else if (w.last >= 0 && now - w.since >= start)
				kt_log(t, "no progress for %.0f ms, resumed: a slow guest, not a deadlock; the host did not run CPU 0 either (no sample)",
				       now - w.since);
			if (w.last >= 0 && now - w.since > s->longest_pause_ms)
				s->longest_pause_ms = now - w.since;
			w.last = s->progress;
			w.since = now;
			w.watched = 0;
		} else if (now - w.since >= start && now >= w.next) {
			watch_sample(&w, now);
			watch_judge(t, &w, now, bound, hard);
		}
		nanosleep(&ts, NULL);
	}
	if (s->err)
		kt_fail(t, "storm: %s", strerror(s->err));
out:
	if (rcu_was >= 0)
		rcu_stall_reports(false, rcu_was);
}

static long recursion_misses(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -1;
	return info.recursion_misses;
}

struct guard_case {
	const char *tracer;	/* the tracing program to attach */
	bool sysrq;		/* raise NMIs */
	bool locks;		/* the tracer takes the lock */
	const char *second;	/* a locking program on hq's bucket path */
	const char *tc;		/* the tc program (default tc_inc) */
	bool pair;		/* tracer and tc program add to elements 0 and 1 */
};

static void guard_storm(struct kt *t, const void *arg)
{
	const struct guard_case *c = arg;
	const char *tc = c->tc ? c->tc : "tc_inc";
	struct embedded_obj o = EMBEDDED_OBJ(guard);
	struct bpf_object *obj;
	struct bpf_link *link, *link2 = NULL;
	struct gelem e;
	struct gstats st;
	struct storm *s;
	long runs, misses, ran = 0;
	/* NMI storms run longer: thousands of NMIs, hundreds in regions */
	int key = 0, seconds = kt_scaled(c->sysrq ? 15 : 6), storms = 0;

	if (seconds < 2)
		seconds = 2;
	/*
	 * The cycle needs a kernel lock taken in NMI (the hash bucket), and
	 * lockdep reports every such lock ("inconsistent {INITIAL USE} ->
	 * {IN-NMI} usage", on stock too): not on lockdep kernels.
	 */
	if (c->second && !access("/proc/lockdep", F_OK)) {
		kt_skip(t, "lockdep kernel: it reports the hash bucket lock taken in NMI");
		return;
	}

	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	obj = obj_load(t, &o, (const char *const[]){ tc, c->tracer, c->second, NULL });
	if (s == MAP_FAILED || !obj)
		return;
	link = bpf_program__attach(bpf_object__find_program_by_name(obj, c->tracer));
	if (!KT_TRUE(t, link != NULL, "attach the tracing program"))
		goto out;
	s->hq_fd = -1;
	if (c->second) {
		link2 = bpf_program__attach(bpf_object__find_program_by_name(obj, c->second));
		if (!KT_TRUE(t, link2 != NULL, "attach the second program"))
			goto out;
		s->hq_fd = obj_map_fd(t, obj, "hq");
	}
	s->prog_fd = obj_prog_fd(t, obj, tc);
	s->sysrq = c->sysrq;
	s->threads = sysconf(_SC_NPROCESSORS_ONLN);
	if (c->sysrq) {
		s->threads--;
		pin_cpu(0);
	}
	if (s->threads < 1 || s->threads > MAX_THREADS) {
		kt_skip(t, "needs 2 to %d CPUs", MAX_THREADS);
		goto out;
	}
	if (c->sysrq)
		quiet_console(true);
	/*
	 * A contention case tests the tracer inside a waiting CPU's region,
	 * which needs two tc threads to meet on the word: a guest whose
	 * vCPUs the host runs one at a time (a loaded host, or 2 vCPUs) may
	 * go a whole storm without. Storm again, the same programs attached
	 * and the counts adding up, until the tracer was skipped inside a
	 * region, for at most CONTENTION_STORMS storms.
	 */
	for (;;) {
		run_storm(t, s, seconds);
		ran += s->ran;
		if (c->sysrq || c->second || !c->locks || t->failed ||
		    ++storms >= CONTENTION_STORMS ||
		    recursion_misses(obj_prog_fd(t, obj, c->tracer)) != 0 ||
		    contention_tp_bypassed())
			break;
		kt_log(t, "storm %d: the tracer was not skipped inside a lock region yet (no contention seen): another %d s",
		       storms, seconds);
		s->stop = 0;
	}
	if (c->sysrq)
		quiet_console(false);
	bpf_link__destroy(link);
	bpf_link__destroy(link2);
	link2 = NULL;

	KT_OK(t, bpf_map_lookup_elem_flags(obj_map_fd(t, obj, "gmap"), &key, &e, BPF_F_LOCK),
	      "read the element");
	KT_OK(t, bpf_map_lookup_elem(obj_map_fd(t, obj, "gstats"), &key, &st), "read stats");
	misses = recursion_misses(obj_prog_fd(t, obj, c->tracer));
	runs = c->second ? st.bucket_runs :
	       c->sysrq ? (c->locks ? st.nmi_runs : st.plain_runs) : st.cont_runs;
	/*
	 * Without the queued slow path the tracer fires only for other locks
	 * (mutexes, rwsems), never inside a lock region: nothing to skip.
	 */
	if (!c->sysrq && !c->second && misses == 0 && contention_tp_bypassed()) {
		if (c->locks)
			KT_EQ(t, e.cnt, s->tc_runs * REPEAT + runs, "counter = tc runs + tracer runs");
		if (!t->failed)
			kt_skip(t, "contention_begin fired %ld times in %ld tc runs, never in the BPF lock's slow path: this kernel's spin locks take virt_spin_lock()'s test-and-set path under a hypervisor",
				runs, s->tc_runs);
		goto out;
	}
	kt_log(t, "%ld s, %d tc threads: %ld tc runs x %d, %ld sysrq, tracer ran %ld times, skipped %ld; longest pause without progress %.0f ms",
	       ran, s->threads, s->tc_runs, REPEAT, s->nmis, runs, misses,
	       s->longest_pause_ms);
	if (c->second) {
		kt_log(t, "bucket thread: %ld update+delete pairs; %s ran %ld times (locking); %s ran %ld times, skipped %ld",
		       s->hq_ops, c->second, st.freelist_runs, c->tracer, st.bucket_runs, misses);
		KT_EQ(t, e.cnt, s->tc_runs * REPEAT + st.freelist_runs,
		      "counter = tc runs + runs of the program on the bucket path");
		KT_TRUE(t, s->hq_ops > 0 && st.freelist_runs > 0, "the bucket path ran");
	} else if (c->locks) {
		KT_EQ(t, e.cnt, s->tc_runs * REPEAT + runs,
		      "counter = tc runs + tracer runs (lost or extra increments otherwise)");
		KT_TRUE(t, misses > 0, "the guard skipped the tracer inside a lock region");
		key = 1;
		if (c->pair &&
		    KT_OK(t, bpf_map_lookup_elem_flags(obj_map_fd(t, obj, "gmap"), &key, &e,
						       BPF_F_LOCK), "read the pair's second element"))
			KT_EQ(t, e.cnt, s->tc_runs * REPEAT + runs,
			      "second counter = tc runs + tracer runs");
	} else {
		/* skipped inside lock regions too, on ours: it may spin on other locks */
		KT_EQ(t, e.cnt, s->tc_runs * REPEAT, "counter = tc runs");
	}
	KT_TRUE(t, runs + misses > 0, "the tracing program fired (NMIs delivered)");
out:
	bpf_link__destroy(link2);
	bpf_object__close(obj);
	munmap(s, sizeof(*s));
}

static const struct guard_case nmi_plain = { "nmi_plain", true, false };
static const struct guard_case contention = { "cont_inc", false, true };
static const struct guard_case nmi_lock = { "nmi_inc", true, true };
static const struct guard_case nmi_tp = { "nmi_tp_inc", true, true };
static const struct guard_case nmi_raw_tp = { "nmi_raw_tp_inc", true, true };
static const struct guard_case nmi_kprobe = { "nmi_kprobe_inc", true, true };
static const struct guard_case contention_tp = { "cont_tp_inc", false, true };
static const struct guard_case nmi_pair = {
	"nmi_pair", true, true, .tc = "tc_pair", .pair = true
};
static const struct guard_case bucket_cycle = {
	"nmi_bucket", true, false, "freelist_lock", "tc_inc_slow"
};

/*
 * Invariant: nothing wakes a task inside a lock region, so no program runs
 * there, not even sched_ext's, which no guard can skip. A timer holds the
 * last reference of its callback's program; overwriting its element frees
 * the timer and puts the program, whose release is deferred to a worker.
 * Each of ROUNDS rounds loads the program, sets the timer up, drops the
 * program's fd and overwrites the element from a tc program, then waits
 * for the program to be freed. wake_watch (kprobe, guarded) counts the
 * queue_work_on() calls of this process made while the timer's lock word
 * is held, and its recursion_misses the ones the guard skipped: a put
 * inside the region shows as one or the other (stock 6.12: every round).
 * 6.1's timer puts inside its region; it has no sched_ext, and only
 * guarded tracing programs run in a wakeup.
 */
#define TIMER_ROUNDS 40

static void timer_put_outside_region(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(guard_timer);
	struct bpf_object *obj, *setup = NULL;
	struct bpf_link *link = NULL;
	struct wstats {
		long calls;
		long under_lock;
		unsigned long lock;
		int tgid;
	} ws = { .tgid = getpid() };
	int key = 0, tmap, stats, watch, freed = 0, i;
	long misses;
	__u32 ret;

	if (!strcmp(kt_base(), "6.1")) {
		kt_skip(t, "6.1's timer puts its program inside the region; no sched_ext there");
		return;
	}
	obj = obj_load(t, &o, (const char *const[]){ "timer_free", "wake_watch", NULL });
	if (!obj)
		return;
	tmap = obj_map_fd(t, obj, "tmap");
	stats = obj_map_fd(t, obj, "wstats");
	watch = obj_prog_fd(t, obj, "wake_watch");
	if (!KT_OK(t, bpf_map_update_elem(stats, &key, &ws, 0), "set the tgid"))
		goto out;
	link = bpf_program__attach(bpf_object__find_program_by_name(obj, "wake_watch"));
	if (!KT_TRUE(t, link != NULL, "attach wake_watch to queue_work_on"))
		goto out;
	for (i = 0; i < TIMER_ROUNDS && !t->failed; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd, tries;

		setup = obj_open(t, &o, (const char *const[]){ "timer_setup", NULL });
		if (!setup ||
		    !KT_OK(t, bpf_map__reuse_fd(bpf_object__find_map_by_name(setup, "tmap"), tmap),
			   "share tmap") ||
		    !KT_OK(t, bpf_map__reuse_fd(bpf_object__find_map_by_name(setup, "wstats"), stats),
			   "share wstats") ||
		    !KT_OK(t, bpf_object__load(setup), "load timer_setup"))
			break;
		fd = obj_prog_fd(t, setup, "timer_setup");
		if (!KT_OK(t, prog_run(fd, 1, &ret), "run timer_setup") ||
		    !KT_EQ(t, ret, 0, "timer set up") ||
		    !KT_OK(t, bpf_obj_get_info_by_fd(fd, &info, &len), "program id"))
			break;
		/* the timer now holds the program's last reference */
		bpf_object__close(setup);
		setup = NULL;
		if (!KT_OK(t, prog_run(obj_prog_fd(t, obj, "timer_free"), 1, &ret), "run timer_free") ||
		    !KT_EQ(t, ret, 0, "element overwritten"))
			break;
		for (tries = 0; tries < 200; tries++) {
			fd = bpf_prog_get_fd_by_id(info.id);
			if (fd < 0)
				break;
			close(fd);
			usleep(10000);
		}
		freed += fd < 0;
	}
	if (!t->failed) {
		misses = recursion_misses(watch);
		KT_OK(t, bpf_map_lookup_elem(stats, &key, &ws), "read the counts");
		kt_log(t, "%d rounds, programs freed %d; queue_work_on: %ld calls, %ld with the timer's lock held, %ld skipped by the guard",
		       i, freed, ws.calls, ws.under_lock, misses);
		KT_EQ(t, freed, TIMER_ROUNDS, "every timer's program freed by the overwrite");
		KT_TRUE(t, ws.calls >= TIMER_ROUNDS, "each release queued to a worker");
		KT_EQ(t, ws.under_lock, 0, "no work queued under the timer's lock");
		KT_EQ(t, misses, 0, "nothing skipped by the guard: no wakeup inside a lock region");
	}
out:
	bpf_object__close(setup);
	bpf_link__destroy(link);
	bpf_object__close(obj);
}

int main(int argc, char **argv)
{
	/* the ones that may end the guest on a kernel without the guard last */
	static struct kt_case cases[] = {
		{ "nmi_no_lock", KT_FEATURE, guard_storm, &nmi_plain },
		/* stock survives it: the slow path fires the tracepoint before
		 * the CPU queues, and the nested lock saves its flags first
		 */
		{ "contention_tp", KT_FEATURE, guard_storm, &contention },
		/* stock refuses a lock map in these tracing types */
		/* stock-6.12 puts the program inside the timer's region */
		{ "timer_put_outside_region", KT_BEYOND, timer_put_outside_region, NULL,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "contention_tracepoint", KT_BEYOND, guard_storm, &contention_tp,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "nmi_storm_tracepoint", KT_BEYOND, guard_storm, &nmi_tp,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "nmi_storm_raw_tp", KT_BEYOND, guard_storm, &nmi_raw_tp,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "nmi_storm_kprobe", KT_BEYOND, guard_storm, &nmi_kprobe,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		/* stock has no pair kfuncs */
		{ "nmi_storm_pair", KT_BEYOND, guard_storm, &nmi_pair,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		/* stock deadlocks here, before nmi_storm */
		{ "nmi_bucket_cycle", KT_BEYOND, guard_storm, &bucket_cycle,
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "nmi_storm", KT_BEYOND, guard_storm, &nmi_lock, KT_ON_BASE("6.12", KT_BEYOND) },
	};

	serial_irq_to_cpu0();
	guard_cases = cases;
	guard_ncases = KT_ARRAY_SIZE(cases);
	return kt_main(argc, argv, "guard", cases, KT_ARRAY_SIZE(cases));
}
