// SPDX-License-Identifier: GPL-2.0
/*
 * Locks in sleepable programs (progs/sleepable.bpf.c, 0019). One element
 * { a, lock, b } is locked by tc programs on every vCPU (BPF_PROG_RUN
 * with repeat), by a sleepable program of the type under test fired from
 * every vCPU for two seconds, and read with BPF_F_LOCK by a sampling
 * thread. The triggers: getpgid() for fentry.s, fexit.s and fmod_ret.s
 * on __x64_sys_getpgid (error-injectable, so sleepable programs may
 * attach), open() for lsm.s on file_open, reading a task iterator over
 * the test's own threads for iter.s, a call of a function of this binary
 * for uprobe.s, and BPF_PROG_RUN for syscall programs, one of which reads
 * the amount to add with bpf_copy_from_user() before it takes the lock.
 *
 * Invariants, exact: every BPF_F_LOCK read sees a == b; at the end
 * a == b == tc runs x repeat + what the sleepable programs added, which
 * they count themselves (an atomic outside the lock) and which equals
 * what the test caused: one per getpgid(), open() or uprobe call, one
 * per task the iterator printed, one per syscall program run, and the
 * amount copied from user space; no program run is skipped.
 *
 * Through an outer map (progs/sleepable_outer.bpf.c): the syscall
 * program looks up the inner map in outer[0], calls bpf_copy_from_user()
 * and then locks that map's element, against tc programs doing the same,
 * while user space replaces outer[0]: swapping two maps (invariant: a ==
 * b in both, and their sum is exact), or installing fresh maps and
 * closing the replaced ones, which are then freed while a sleepable run
 * may still hold them (invariant: a == b in every read, every run
 * finds its map, no crash; debug kernels would report a use after free).
 *
 * Then the verdicts (annotations in the programs): each program is
 * accepted, and under the lock a sleepable program may not call a
 * sleepable helper nor return holding it. Stock 6.1 refuses every
 * sleepable program that uses a lock map ("sleepable progs cannot use
 * bpf_spin_lock yet") and every outer map whose inner maps hold a lock
 * (ENOTSUPP), so all the cases but tc_bump are "beyond".
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

#define MAX_CPUS 8
#define REPEAT 100
/* How long the triggers run, in ms (scaled by BPFLOCK_SCALE). */
#define RUN_MS 2000

struct selem {
	long a;
	struct bpf_spin_lock lock;
	long b;
};

/* Keep in sync with progs/sleepable.bpf.c. */
enum kind { FENTRY, FEXIT, FMOD_RET, LSM, ITER, UPROBE, SYSCALL, COPY, NR_KINDS };

struct sstats {
	long added[NR_KINDS];
};

static const char *const prog_of[NR_KINDS] = {
	"fentry_s_bump", "fexit_s_bump", "fmod_ret_s_bump", "lsm_s_bump",
	"iter_s_bump", "uprobe_s_bump", "syscall_bump", "copy_then_lock",
};

/* Hook programs, attached in this order; syscall programs need none. */
static const enum kind attach_order[] = { FENTRY, FEXIT, FMOD_RET, ITER, UPROBE, LSM };

#define GETPGID_KINDS (1u << FENTRY | 1u << FEXIT | 1u << FMOD_RET)

struct copy_ctx {
	__u64 src;
};

/* Shared by the threads of one case. */
struct run {
	unsigned int kinds;		/* bit per enum kind */
	int tc_fd, map_fd, syscall_fd, copy_fd, iter_link_fd;
	double deadline;		/* triggers stop then */
	volatile int stop;
	long tc_runs;			/* test runs of REPEAT */
	long caused[NR_KINDS];		/* what the triggers made the programs add */
	long reads, torn;		/* BPF_F_LOCK sampler */
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

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The uprobe's target: kept out of line and alive. */
__attribute__((noinline, used)) void bpflock_sleepable_target(void)
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

/* Read the task iterator to its end: the number of tasks it printed. */
static long read_iter(struct run *r)
{
	char buf[512];
	long bytes = 0;
	ssize_t n;
	int fd = bpf_iter_create(r->iter_link_fd);

	if (fd < 0) {
		run_error(r, "bpf_iter_create");
		return 0;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		bytes += n;
	if (n < 0)
		run_error(r, "read the task iterator");
	close(fd);
	return bytes / 8;
}

/* One BPF_PROG_RUN of a syscall program; its return value must be 0. */
static int run_syscall_prog(struct run *r, int fd, void *ctx, size_t size)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = ctx, .ctx_size_in = size);

	if (bpf_prog_test_run_opts(fd, &opts)) {
		run_error(r, "syscall program test run");
		return -1;
	}
	if (opts.retval) {
		errno = EPROTO;
		run_error(r, "syscall program returned non-zero");
		return -1;
	}
	return 0;
}

/* Cause rounds of events of every kind under test until the deadline. */
static void *trigger_thread(void *arg)
{
	struct thread_arg *a = arg;
	struct run *r = a->r;
	long i, done[NR_KINDS] = {};
	int k, fd;

	pin_cpu(a->cpu);
	for (i = 0; !r->err && mono_now() < r->deadline; i++) {
		if (r->kinds & GETPGID_KINDS) {
			syscall(SYS_getpgid, 0);
			for (k = FENTRY; k <= FMOD_RET; k++)
				done[k] += !!(r->kinds & 1u << k);
		}
		if (r->kinds & 1u << LSM) {
			fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0) {
				run_error(r, "open /");
				break;
			}
			close(fd);
			done[LSM]++;
		}
		/* each read visits every thread of the test */
		if ((r->kinds & 1u << ITER) && i % 4 == 0)
			done[ITER] += read_iter(r);
		if (r->kinds & 1u << UPROBE) {
			bpflock_sleepable_target();
			done[UPROBE]++;
		}
		if (r->kinds & 1u << SYSCALL) {
			if (run_syscall_prog(r, r->syscall_fd, NULL, 0))
				break;
			done[SYSCALL]++;
		}
		if (r->kinds & 1u << COPY) {
			/* 1..7: the program adds what it copied */
			volatile long n = i % 7 + 1;
			struct copy_ctx c = { .src = (unsigned long)&n };

			if (run_syscall_prog(r, r->copy_fd, &c, sizeof(c)))
				break;
			done[COPY] += n;
		}
	}
	for (k = 0; k < NR_KINDS; k++)
		__atomic_add_fetch(&r->caused[k], done[k], __ATOMIC_RELAXED);
	return NULL;
}

static void *reader_thread(void *arg)
{
	struct run *r = arg;
	struct selem e;
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

static long misses_of(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -1;
	return info.recursion_misses;
}

/* Attach the hook programs; syscall programs need no attachment. */
static struct bpf_link *attach_kind(struct kt *t, struct bpf_object *obj, int k)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, prog_of[k]);
	struct bpf_link *link;

	if (!p)
		return NULL;
	if (k == UPROBE) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "bpflock_sleepable_target");

		link = bpf_program__attach_uprobe_opts(p, 0, "/proc/self/exe", 0, &uo);
	} else if (k == ITER) {
		/* the test's own threads only: tc, triggers and the sampler */
		union bpf_iter_link_info linfo = { .task.pid = getpid() };
		LIBBPF_OPTS(bpf_iter_attach_opts, io, .link_info = &linfo,
			    .link_info_len = sizeof(linfo));

		link = bpf_program__attach_iter(p, &io);
	} else {
		link = bpf_program__attach(p);
	}
	if (!link)
		kt_fail(t, "attach %s: %s", prog_of[k], strerror(errno));
	return link;
}

static void shared_element(struct kt *t, const void *arg)
{
	unsigned int kinds = (unsigned long)arg;
	struct embedded_obj o = EMBEDDED_OBJ(sleepable);
	const char *names[NR_KINDS + 2] = {};
	struct bpf_link *links[NR_KINDS] = {};
	struct thread_arg targs[MAX_CPUS];
	pthread_t tc[MAX_CPUS], trig[MAX_CPUS], reader;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), key = 0, tgid = getpid();
	int i, k, n = 0, nlinks = 0;
	struct run r = { .kinds = kinds };
	struct bpf_object *obj;
	struct sstats st;
	struct selem e;
	long added = 0;
	double t0;

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	if ((kinds & GETPGID_KINDS) && !kernel_has_error_injection()) {
		kinds &= ~GETPGID_KINDS;
		r.kinds = kinds;
		if (!kinds) {
			kt_skip(t, "no error-injection list in this kernel (CONFIG_FUNCTION_ERROR_INJECTION off, as in Debian's config): fentry.s/fexit.s/fmod_ret.s attach nowhere");
			return;
		}
		kt_log(t, "no error-injection list: fentry.s, fexit.s and fmod_ret.s left out");
	}
	for (k = 0; k < NR_KINDS; k++)
		if (kinds & 1u << k)
			names[n++] = prog_of[k];
	names[n] = "tc_bump";	/* last: a failed load names a sleepable program */
	obj = obj_load(t, &o, names);
	if (!obj)
		return;
	r.tc_fd = obj_prog_fd(t, obj, "tc_bump");
	r.map_fd = obj_map_fd(t, obj, "smap");
	if (kinds & 1u << SYSCALL)
		r.syscall_fd = obj_prog_fd(t, obj, prog_of[SYSCALL]);
	if (kinds & 1u << COPY)
		r.copy_fd = obj_prog_fd(t, obj, prog_of[COPY]);
	if (t->failed ||
	    !KT_OK(t, bpf_map_update_elem(obj_map_fd(t, obj, "scfg"), &key, &tgid, 0),
		   "set the test's tgid"))
		goto out;
	/*
	 * LSM last: attaching a uprobe opens files (the binary, the uprobe
	 * PMU's sysfs files), which file_open would count.
	 */
	for (i = 0; i < (int)KT_ARRAY_SIZE(attach_order); i++) {
		k = attach_order[i];
		if (!(kinds & 1u << k))
			continue;
		links[nlinks] = attach_kind(t, obj, k);
		if (!links[nlinks])
			goto out;
		if (k == ITER)
			r.iter_link_fd = bpf_link__fd(links[nlinks]);
		nlinks++;
	}

	t0 = mono_now();
	r.deadline = t0 + kt_scaled(RUN_MS) / 1000.0;
	for (i = 0; i < ncpu; i++) {
		targs[i] = (struct thread_arg){ &r, i };
		pthread_create(&tc[i], NULL, tc_thread, &targs[i]);
		pthread_create(&trig[i], NULL, trigger_thread, &targs[i]);
	}
	pthread_create(&reader, NULL, reader_thread, &r);
	for (i = 0; i < ncpu; i++)
		pthread_join(trig[i], NULL);
	r.stop = 1;
	for (i = 0; i < ncpu; i++)
		pthread_join(tc[i], NULL);
	pthread_join(reader, NULL);
	t0 = mono_now() - t0;
	for (i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	nlinks = 0;
	if (r.err) {
		errno = r.err;
		kt_fail(t, "%s: %s", r.err_what, strerror(r.err));
		goto out;
	}

	if (!KT_OK(t, bpf_map_lookup_elem_flags(r.map_fd, &key, &e, BPF_F_LOCK), "read") ||
	    !KT_OK(t, bpf_map_lookup_elem(obj_map_fd(t, obj, "sstats"), &key, &st), "stats"))
		goto out;
	for (k = 0; k < NR_KINDS; k++) {
		long misses;

		if (!(kinds & 1u << k))
			continue;
		misses = misses_of(obj_prog_fd(t, obj, prog_of[k]));
		added += st.added[k];
		kt_log(t, "%s: added %ld, caused %ld, %ld skipped", prog_of[k],
		       st.added[k], r.caused[k], misses);
		KT_TRUE(t, r.caused[k] > 0, "the program ran");
		KT_EQ(t, st.added[k], r.caused[k], "the program added what the test caused");
		KT_EQ(t, misses, 0, "no run skipped");
	}
	kt_log(t, "%d vCPUs, %.1f s: tc %ld runs x %d; element a=%ld b=%ld; "
	       "%ld BPF_F_LOCK reads, %ld torn", ncpu, t0, r.tc_runs, REPEAT, e.a, e.b,
	       r.reads, r.torn);
	KT_EQ(t, e.a, e.b, "a == b");
	KT_EQ(t, e.a, r.tc_runs * REPEAT + added, "a = tc increments + sleepable additions");
	KT_EQ(t, r.torn, 0, "BPF_F_LOCK reads with a != b");
	KT_TRUE(t, r.reads > 0, "the sampler ran");
out:
	for (i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
}

/*
 * Through an outer map: tc programs on every vCPU and the sleepable
 * outer_lock_syscall from every vCPU lock element 0 of the inner map in
 * outer[0], while user space replaces that inner map at full rate:
 * "swap" alternates the object's two inner maps (exact sum over both;
 * a sampler reads both with BPF_F_LOCK), "churn" installs a fresh map
 * each time and closes the one it replaced after one BPF_F_LOCK read,
 * so a removed map is freed while a sleepable run may still hold it
 * between its lookup and its lock (debug kernels catch a use after free).
 * Each update of the outer map waits for an RCU grace period, slow
 * under TCG: the run goes on past two seconds until 20 replacements
 * (up to eight seconds).
 */
struct ostorm {
	bool churn;
	int tc_fd, sl_fd, outer_fd, inner_fd[2];
	int btf_fd;
	__u32 key_type, value_type;
	double deadline, hard_deadline;	/* past the first, stop after min_swaps */
	long min_swaps;
	volatile int stop;
	long tc_runs, added, sl_runs;
	long swaps, reads, torn;	/* reads: atomic, two threads read */
	int err;
	const char *err_what;
};

struct ostorm_arg {
	struct ostorm *s;
	int cpu;
};

static void ostorm_error(struct ostorm *s, const char *what)
{
	if (!s->err) {
		s->err = errno ? errno : EINVAL;
		s->err_what = what;
	}
}

static void *otc_thread(void *arg)
{
	struct ostorm_arg *a = arg;
	struct ostorm *s = a->s;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = REPEAT);
	char pkt[64] = {};

	opts.data_in = pkt;
	opts.data_size_in = sizeof(pkt);
	pin_cpu(a->cpu);
	while (!s->stop) {
		if (bpf_prog_test_run_opts(s->tc_fd, &opts) || opts.retval) {
			ostorm_error(s, "tc test run");
			break;
		}
		__atomic_add_fetch(&s->tc_runs, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *osl_thread(void *arg)
{
	struct ostorm_arg *a = arg;
	struct ostorm *s = a->s;
	long i, added = 0, runs = 0;

	pin_cpu(a->cpu);
	for (i = 0; !s->err; i++) {
		volatile long n = i % 7 + 1;
		double now = mono_now();
		struct copy_ctx c = { .src = (unsigned long)&n };
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));

		if (now > s->hard_deadline || (now > s->deadline && s->swaps >= s->min_swaps))
			break;
		if (bpf_prog_test_run_opts(s->sl_fd, &opts)) {
			ostorm_error(s, "outer_lock_syscall test run");
			break;
		}
		if (opts.retval) {
			errno = EPROTO;
			ostorm_error(s, "outer_lock_syscall returned non-zero");
			break;
		}
		added += n;
		runs++;
	}
	__atomic_add_fetch(&s->added, added, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->sl_runs, runs, __ATOMIC_RELAXED);
	return NULL;
}

/* One BPF_F_LOCK read of an inner map: counts a torn one. */
static int oread(struct ostorm *s, int fd, struct selem *e)
{
	int key = 0;

	if (bpf_map_lookup_elem_flags(fd, &key, e, BPF_F_LOCK)) {
		ostorm_error(s, "BPF_F_LOCK lookup of an inner map");
		return -1;
	}
	__atomic_add_fetch(&s->reads, 1, __ATOMIC_RELAXED);
	if (e->a != e->b)
		__atomic_add_fetch(&s->torn, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Swap mode: BPF_F_LOCK reads of both inner maps, installed or not. */
static void *oread_thread(void *arg)
{
	struct ostorm *s = arg;
	struct selem e;
	long i;

	for (i = 0; !s->stop || i < 100; i++)
		if (oread(s, s->inner_fd[i & 1], &e))
			break;
	return NULL;
}

static void *oswap_thread(void *arg)
{
	struct ostorm *s = arg;
	int key = 0, prev = -1, fd;
	struct selem e;
	LIBBPF_OPTS(bpf_map_create_opts, mo, .btf_fd = s->btf_fd,
		    .btf_key_type_id = s->key_type, .btf_value_type_id = s->value_type);

	while (!s->stop && !s->err) {
		if (!s->churn) {
			fd = s->inner_fd[(s->swaps + 1) & 1];
			if (bpf_map_update_elem(s->outer_fd, &key, &fd, 0)) {
				ostorm_error(s, "swap the inner map");
				break;
			}
			s->swaps++;
			if (oread(s, s->inner_fd[s->swaps & 1], &e))
				break;
			continue;
		}
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sl_fresh", sizeof(int),
				    sizeof(struct selem), 1, &mo);
		if (fd < 0) {
			ostorm_error(s, "create a fresh inner map");
			break;
		}
		if (bpf_map_update_elem(s->outer_fd, &key, &fd, 0)) {
			ostorm_error(s, "install a fresh inner map");
			close(fd);
			break;
		}
		s->swaps++;
		/* the replaced map: read under its lock, then let it go */
		if (prev >= 0) {
			oread(s, prev, &e);
			close(prev);
		}
		prev = fd;
	}
	if (prev >= 0) {
		oread(s, prev, &e);
		close(prev);
	}
	return NULL;
}

static void outer_storm(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(sleepable_outer);
	struct ostorm s = { .churn = !strcmp(arg, "churn") };
	struct ostorm_arg args[MAX_CPUS];
	pthread_t tc[MAX_CPUS], sl[MAX_CPUS], swapper, reader;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), key = 0, i;
	struct bpf_object *obj;
	struct selem ea, eb;
	struct bpf_map *m;
	double t0;

	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	obj = obj_load(t, &o, (const char *const[]){ "outer_lock_syscall", "outer_tc_bump", NULL });
	if (!obj)
		return;
	s.tc_fd = obj_prog_fd(t, obj, "outer_tc_bump");
	s.sl_fd = obj_prog_fd(t, obj, "outer_lock_syscall");
	s.outer_fd = obj_map_fd(t, obj, "sl_outer");
	s.inner_fd[0] = obj_map_fd(t, obj, "sl_inner");
	s.inner_fd[1] = obj_map_fd(t, obj, "sl_inner_b");
	m = bpf_object__find_map_by_name(obj, "sl_inner");
	s.btf_fd = bpf_object__btf_fd(obj);
	s.key_type = m ? bpf_map__btf_key_type_id(m) : 0;
	s.value_type = m ? bpf_map__btf_value_type_id(m) : 0;
	if (t->failed)
		goto out;

	t0 = mono_now();
	s.deadline = t0 + kt_scaled(RUN_MS) / 1000.0;
	/*
	 * Not below 30 s: on slow kernels (KCSAN under TCG) at a small
	 * BPFLOCK_SCALE the first map swap took longer than 4 scaled runs.
	 */
	s.hard_deadline = t0 + (kt_scaled(RUN_MS) * 4 > 30000 ? kt_scaled(RUN_MS) * 4 : 30000) / 1000.0;
	s.min_swaps = kt_scaled(20);
	for (i = 0; i < ncpu; i++) {
		args[i] = (struct ostorm_arg){ &s, i };
		pthread_create(&tc[i], NULL, otc_thread, &args[i]);
		pthread_create(&sl[i], NULL, osl_thread, &args[i]);
	}
	pthread_create(&swapper, NULL, oswap_thread, &s);
	if (!s.churn)
		pthread_create(&reader, NULL, oread_thread, &s);
	for (i = 0; i < ncpu; i++)
		pthread_join(sl[i], NULL);
	s.stop = 1;
	for (i = 0; i < ncpu; i++)
		pthread_join(tc[i], NULL);
	pthread_join(swapper, NULL);
	if (!s.churn)
		pthread_join(reader, NULL);
	t0 = mono_now() - t0;
	if (s.err) {
		errno = s.err;
		kt_fail(t, "%s: %s", s.err_what, strerror(s.err));
		goto out;
	}
	if (!KT_OK(t, bpf_map_lookup_elem_flags(s.inner_fd[0], &key, &ea, BPF_F_LOCK), "read a") ||
	    !KT_OK(t, bpf_map_lookup_elem_flags(s.inner_fd[1], &key, &eb, BPF_F_LOCK), "read b"))
		goto out;
	kt_log(t, "%d vCPUs, %.1f s: tc %ld runs x %d, outer_lock_syscall %ld runs adding %ld; "
	       "%ld %s; %ld BPF_F_LOCK reads, %ld torn", ncpu, t0, s.tc_runs, REPEAT,
	       s.sl_runs, s.added, s.swaps, s.churn ? "fresh inner maps" : "swaps",
	       s.reads, s.torn);
	KT_TRUE(t, s.sl_runs > 0 && s.swaps > 0, "the sleepable program ran and the map changed");
	KT_EQ(t, ea.a, ea.b, "a == b in sl_inner");
	KT_EQ(t, eb.a, eb.b, "a == b in sl_inner_b");
	KT_EQ(t, s.torn, 0, "BPF_F_LOCK reads with a != b");
	if (!s.churn) {
		kt_log(t, "sl_inner a=%ld, sl_inner_b a=%ld", ea.a, eb.a);
		KT_EQ(t, ea.a + eb.a, s.tc_runs * REPEAT + s.added,
		      "a(sl_inner) + a(sl_inner_b) = tc increments + sleepable additions");
	}
out:
	bpf_object__close(obj);
}

#define ONE(k) ((void *)(unsigned long)(1u << (k)))

static const struct kt_case fixed[] = {
	{ "fentry_s_shared", KT_BEYOND, shared_element, ONE(FENTRY), KT_ON_BASE("6.12", KT_FEATURE) },
	{ "fexit_s_shared", KT_BEYOND, shared_element, ONE(FEXIT), KT_ON_BASE("6.12", KT_FEATURE) },
	{ "fmod_ret_s_shared", KT_BEYOND, shared_element, ONE(FMOD_RET),
		  KT_ON_BASE("6.12", KT_FEATURE) },
	{ "lsm_s_shared", KT_BEYOND, shared_element, ONE(LSM), KT_ON_BASE("6.12", KT_FEATURE) },
	{ "iter_s_shared", KT_BEYOND, shared_element, ONE(ITER), KT_ON_BASE("6.12", KT_FEATURE) },
	{ "uprobe_s_shared", KT_BEYOND, shared_element, ONE(UPROBE), KT_ON_BASE("6.12", KT_BEYOND) },
	{ "syscall_shared", KT_BEYOND, shared_element, ONE(SYSCALL), KT_ON_BASE("6.12", KT_FEATURE) },
	{ "copy_then_lock_shared", KT_BEYOND, shared_element, ONE(COPY),
		  KT_ON_BASE("6.12", KT_FEATURE) },
	{ "all_types_at_once", KT_BEYOND, shared_element,
	  (void *)(unsigned long)((1u << NR_KINDS) - 1), KT_ON_BASE("6.12", KT_BEYOND) },
	{ "outer_swap_shared", KT_BEYOND, outer_storm, "swap", KT_ON_BASE("6.12", KT_FEATURE) },
	{ "outer_churn", KT_BEYOND, outer_storm, "churn", KT_ON_BASE("6.12", KT_FEATURE) },
};

int main(int argc, char **argv)
{
	struct embedded_obj objs[] = { EMBEDDED_OBJ(sleepable), EMBEDDED_OBJ(sleepable_outer) };
	int nf = KT_ARRAY_SIZE(fixed), n = nf, na, i;
	struct kt_case *annotated, *all;

	all = malloc(sizeof(fixed));
	if (!all)
		return 1;
	memcpy(all, fixed, sizeof(fixed));
	for (i = 0; i < (int)KT_ARRAY_SIZE(objs); i++) {
		na = annotated_cases(&objs[i], &annotated);
		if (na < 0)
			return 1;
		all = realloc(all, (n + na) * sizeof(*all));
		if (!all)
			return 1;
		memcpy(all + n, annotated, na * sizeof(*all));
		n += na;
	}
	return kt_main(argc, argv, "sleepable", all, n);
}
