// SPDX-License-Identifier: GPL-2.0
/*
 * Locks in every tracing program type and in socket filters
 * (progs/tracing.bpf.c). One element { a, lock, b } is locked by tc
 * programs on every vCPU, by a program of the type under test fired from
 * every vCPU (kprobe on getppid(), uprobe on a function of this binary,
 * tracepoint and raw tracepoint task:task_rename via prctl(PR_SET_NAME),
 * software cpu-clock perf events, a socket filter on loopback UDP
 * sockets) and read with BPF_F_LOCK by a reader thread.
 *
 * Invariants: every BPF_F_LOCK read sees a == b; at the end
 * a == b == tc runs + the tracing programs' own count of their
 * increments; for the syscall-driven types that count equals the events
 * the test caused, and the guard never skipped them (a syscall never
 * starts inside a lock region). Stock 6.1 refuses to load all of them:
 * "tracing progs cannot use bpf_spin_lock yet", "socket filter progs
 * cannot use bpf_spin_lock yet".
 */
#include <arpa/inet.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <net/if.h>
#include <unistd.h>

#include "progs.h"

#define MAX_CPUS 8
#define REPEAT 100

struct telem {
	long a;
	struct bpf_spin_lock lock;
	long b;
};

struct tstats {
	long kprobe;
	long uprobe;
	long tp;
	long raw_tp;
	long perf;
	long sock;
};

enum kind { KPROBE, UPROBE, TP, RAW_TP, PERF, SOCK, NR_KINDS };

static const char *const prog_of[NR_KINDS] = {
	"kprobe_bump", "uprobe_bump", "tp_bump", "raw_tp_bump", "perf_bump", "sock_bump",
};

/* Who does what to whom: shared by the threads of one case. */
struct run {
	unsigned int kinds;		/* bit per enum kind */
	int tc_fd;
	long triggers;			/* per trigger thread, per kind */
	volatile int stop;
	long tc_runs;			/* test runs of REPEAT */
	long caused[NR_KINDS];		/* events the triggers caused */
	long reads, torn;		/* BPF_F_LOCK reader */
	int map_fd;
	int err;
	const char *err_what;
};

struct thread_arg {
	struct run *r;
	int cpu;
};

static void run_error(struct run *r, const char *what)
{
	if (!r->err) {
		r->err = errno ? errno : EINVAL;
		r->err_what = what;
	}
}

/* The uprobe's target: kept out of line and alive. */
__attribute__((noinline, used)) void bpflock_uprobe_target(void)
{
	__asm__ volatile("" ::: "memory");
}

static void *tc_thread(void *arg)
{
	struct thread_arg *a = arg;
	struct run *r = a->r;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = REPEAT);
	char pkt[64] = {};

	opts.data_in = pkt;
	opts.data_size_in = sizeof(pkt);
	pin_cpu(a->cpu);
	while (!r->stop) {
		if (bpf_prog_test_run_opts(r->tc_fd, &opts) || opts.retval) {
			run_error(r, "tc test run");
			break;
		}
		__atomic_add_fetch(&r->tc_runs, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* A receiving socket with the filter, and a socket that sends to it. */
static int sock_pair(int prog_fd, int *rx, int *tx)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*rx = socket(AF_INET, SOCK_DGRAM, 0);
	*tx = socket(AF_INET, SOCK_DGRAM, 0);
	if (*rx < 0 || *tx < 0 ||
	    setsockopt(*rx, SOL_SOCKET, SO_ATTACH_BPF, &prog_fd, sizeof(prog_fd)) ||
	    bind(*rx, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(*rx, (struct sockaddr *)&sa, &len) ||
	    connect(*tx, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	return 0;
}

struct trigger_arg {
	struct run *r;
	int cpu;
	int sock_prog_fd;
};

/* Cause r->triggers events of every kind under test, one after another. */
static void *trigger_thread(void *arg)
{
	struct trigger_arg *a = arg;
	struct run *r = a->r;
	int rx = -1, tx = -1;
	long i, done[NR_KINDS] = {};
	char byte = 1, name[16];
	int k;

	pin_cpu(a->cpu);
	if ((r->kinds & 1u << SOCK) && sock_pair(a->sock_prog_fd, &rx, &tx)) {
		run_error(r, "socket filter setup");
		goto out;
	}
	for (i = 0; i < r->triggers && !r->err; i++) {
		if (r->kinds & 1u << KPROBE) {
			syscall(SYS_getppid);
			done[KPROBE]++;
		}
		if (r->kinds & 1u << UPROBE) {
			bpflock_uprobe_target();
			done[UPROBE]++;
		}
		if (r->kinds & (1u << TP | 1u << RAW_TP)) {
			snprintf(name, sizeof(name), "trig%d", a->cpu);
			if (prctl(PR_SET_NAME, name)) {
				run_error(r, "prctl");
				break;
			}
			done[TP]++;
			done[RAW_TP]++;
		}
		if (r->kinds & 1u << SOCK) {
			/* one at a time: every packet reaches the filter */
			if (send(tx, &byte, 1, 0) != 1 || recv(rx, &byte, 1, 0) != 1) {
				run_error(r, "loopback send/recv");
				break;
			}
			done[SOCK]++;
		}
	}
	for (k = 0; k < NR_KINDS; k++)
		__atomic_add_fetch(&r->caused[k], done[k], __ATOMIC_RELAXED);
out:
	if (rx >= 0)
		close(rx);
	if (tx >= 0)
		close(tx);
	return NULL;
}

static void *reader_thread(void *arg)
{
	struct run *r = arg;
	struct telem e;
	int key = 0;

	/* at least 100 reads, even if the writers end first */
	while (!r->stop || r->reads < 100) {
		if (bpf_map_lookup_elem_flags(r->map_fd, &key, &e, BPF_F_LOCK)) {
			run_error(r, "BPF_F_LOCK lookup");
			break;
		}
		r->reads++;
		if (e.a != e.b)
			r->torn++;
	}
	return NULL;
}

/* Loopback is down in a fresh guest: the socket filter needs it up. */
static int loopback_up(void)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret;

	if (fd < 0)
		return -1;
	strcpy(ifr.ifr_name, "lo");
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (!ret && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return ret;
}

static struct bpf_link *attach_perf(struct kt *t, struct bpf_program *p, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = 100000,	/* ns of cpu clock: 10 kHz */
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	struct bpf_link *link;

	if (!KT_OK(t, fd, "perf_event_open cpu-clock"))
		return NULL;
	link = bpf_program__attach_perf_event(p, fd);
	if (!link)
		close(fd);
	return link;
}

static long misses_of(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -1;
	return info.recursion_misses;
}

static long stat_of(const struct tstats *s, int k)
{
	const long v[NR_KINDS] = { s->kprobe, s->uprobe, s->tp, s->raw_tp, s->perf, s->sock };

	return v[k];
}

static void shared_element(struct kt *t, const void *arg)
{
	unsigned int kinds = (unsigned long)arg;
	struct embedded_obj o = EMBEDDED_OBJ(tracing);
	const char *names[NR_KINDS + 2] = { "tc_bump" };
	struct bpf_link *links[NR_KINDS * MAX_CPUS] = {};
	struct thread_arg targs[MAX_CPUS];
	struct trigger_arg gargs[MAX_CPUS];
	pthread_t tc[MAX_CPUS], trig[MAX_CPUS], reader;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), key = 0, tgid = getpid();
	int i, k, n = 1, nlinks = 0, sock_fd = -1;
	struct run r = { .kinds = kinds, .triggers = kt_scaled(2000) };
	struct bpf_object *obj;
	struct tstats st;
	struct telem e;
	long hits = 0;

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	for (k = 0; k < NR_KINDS; k++)
		if (kinds & 1u << k)
			names[n++] = prog_of[k];
	obj = obj_load(t, &o, names);
	if (!obj)
		return;
	r.tc_fd = obj_prog_fd(t, obj, "tc_bump");
	r.map_fd = obj_map_fd(t, obj, "tmap");
	if (!KT_OK(t, bpf_map_update_elem(obj_map_fd(t, obj, "tcfg"), &key, &tgid, 0),
		   "set the test's tgid"))
		goto out;
	for (k = 0; k < NR_KINDS; k++) {
		struct bpf_program *p;

		if (!(kinds & 1u << k))
			continue;
		p = bpf_object__find_program_by_name(obj, prog_of[k]);
		if (k == UPROBE) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "bpflock_uprobe_target");

			links[nlinks] = bpf_program__attach_uprobe_opts(p, 0, "/proc/self/exe",
									0, &uo);
		} else if (k == PERF) {
			for (i = 0; i < ncpu; i++) {
				links[nlinks] = attach_perf(t, p, i);
				if (!KT_TRUE(t, links[nlinks] != NULL, "attach perf_bump"))
					goto out;
				nlinks++;
			}
			continue;
		} else if (k == SOCK) {
			sock_fd = bpf_program__fd(p);
			if (!KT_OK(t, loopback_up(), "bring lo up"))
				goto out;
			continue;
		} else {
			links[nlinks] = bpf_program__attach(p);
		}
		if (!KT_TRUE(t, links[nlinks] != NULL, prog_of[k]))
			goto out;
		nlinks++;
	}

	for (i = 0; i < ncpu; i++) {
		targs[i] = (struct thread_arg){ &r, i };
		gargs[i] = (struct trigger_arg){ &r, i, sock_fd };
		pthread_create(&tc[i], NULL, tc_thread, &targs[i]);
		pthread_create(&trig[i], NULL, trigger_thread, &gargs[i]);
	}
	pthread_create(&reader, NULL, reader_thread, &r);
	for (i = 0; i < ncpu; i++)
		pthread_join(trig[i], NULL);
	if (kinds & 1u << PERF)
		usleep(kt_scaled(500) * 1000);	/* samples land meanwhile */
	r.stop = 1;
	for (i = 0; i < ncpu; i++)
		pthread_join(tc[i], NULL);
	pthread_join(reader, NULL);
	for (i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	nlinks = 0;
	if (r.err) {
		errno = r.err;
		kt_fail(t, "%s: %s", r.err_what, strerror(r.err));
		goto out;
	}

	if (!KT_OK(t, bpf_map_lookup_elem_flags(r.map_fd, &key, &e, BPF_F_LOCK), "read") ||
	    !KT_OK(t, bpf_map_lookup_elem(obj_map_fd(t, obj, "tstats"), &key, &st), "stats"))
		goto out;
	for (k = 0; k < NR_KINDS; k++) {
		long misses;

		if (!(kinds & 1u << k))
			continue;
		misses = misses_of(obj_prog_fd(t, obj, prog_of[k]));
		hits += stat_of(&st, k);
		kt_log(t, "%s: %ld increments, %ld events caused, %ld skipped", prog_of[k],
		       stat_of(&st, k), r.caused[k], misses);
		if (k == PERF) {
			KT_TRUE(t, st.perf > 0, "cpu-clock samples ran the program");
			continue;
		}
		KT_EQ(t, stat_of(&st, k), r.caused[k], "one increment per event caused");
		KT_EQ(t, misses, 0, "no syscall starts inside a lock region: nothing skipped");
	}
	kt_log(t, "%d vCPUs: tc %ld runs x %d; element a=%ld b=%ld; %ld BPF_F_LOCK reads, %ld torn",
	       ncpu, r.tc_runs, REPEAT, e.a, e.b, r.reads, r.torn);
	KT_EQ(t, e.a, e.b, "a == b");
	KT_EQ(t, e.a, r.tc_runs * REPEAT + hits, "a = tc increments + tracing increments");
	KT_EQ(t, r.torn, 0, "BPF_F_LOCK reads with a != b");
	KT_TRUE(t, r.reads > 0, "the reader ran");
out:
	for (i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
}

#define ONE(k) ((void *)(unsigned long)(1u << (k)))

int main(int argc, char **argv)
{
	static const struct kt_case cases[] = {
		{ "kprobe_shared", KT_BEYOND, shared_element, ONE(KPROBE),
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "uprobe_shared", KT_BEYOND, shared_element, ONE(UPROBE),
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "tracepoint_shared", KT_BEYOND, shared_element, ONE(TP),
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "raw_tp_shared", KT_BEYOND, shared_element, ONE(RAW_TP),
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "perf_event_shared", KT_BEYOND, shared_element, ONE(PERF),
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "socket_filter_shared", KT_BEYOND, shared_element, ONE(SOCK),
		  KT_ON_BASE("6.12", KT_BEYOND) },
		{ "all_types_at_once", KT_BEYOND, shared_element,
		  (void *)(unsigned long)((1u << NR_KINDS) - 1), KT_ON_BASE("6.12", KT_BEYOND) },
	};

	return kt_main(argc, argv, "tracing", cases, KT_ARRAY_SIZE(cases));
}
