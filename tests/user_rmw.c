// SPDX-License-Identifier: GPL-2.0
/*
 * Read-modify-write from user space under an element's lock: libbpf's
 * locked_map (patch 0020), which runs syscall programs that take the lock
 * (sleepable programs may lock since 0019; stock refuses them, so every
 * case that runs one is "beyond").
 *
 * Invariants, all exact, with tc programs on every vCPU locking the same
 * element (a++, b++, c++ per run, progs/user_rmw.bpf.c):
 *  - add: user threads on every vCPU add 1 to a; a - b = user adds, b = c
 *    = program runs, and the old values returned are all distinct (each
 *    one an increment nobody else saw). The same run with a locked lookup
 *    and a locked update instead loses updates: reported, not judged.
 *  - cmpxchg: threads advance a sequence in pad[1] by exchange; the
 *    sequence numbers they won are exactly 1..final, each once, and no
 *    program run is lost (c = runs: an exchange only lands on the value
 *    it compared).
 *  - functions: a caller's subprogram adds to a and pad[2] together, so
 *    a - b = pad[2] in every locked read; refused functions name why.
 *  - bad input: clear errno and message, nothing left locked.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/btf.h>

#include "insn.h"
#include "progs.h"

#define MAX_CPUS 8
#define REPEAT 20

struct rval {
	long a;
	struct bpf_spin_lock lock;
	long b;
	long c;
	long pad[4];
};

#define OFF(f) ((__u32)offsetof(struct rval, f))

struct target {
	const char *map;
	const char *prog;
	bool insert;		/* hash maps: create element 0 first */
};

static const struct target t_array = { "rmw_array", "rmw_bump_array", false };
static const struct target t_hash = { "rmw_hash", "rmw_bump_hash", true };
static const struct target t_lru = { "rmw_lru", "rmw_bump_lru", true };

/* The last libbpf warning: locked_map says there why a call failed. */
static char last_warn[512];

static int capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		vsnprintf(last_warn, sizeof(last_warn), fmt, ap);
	return 0;
}

static bool warned(struct kt *t, const char *msg)
{
	if (strstr(last_warn, msg))
		return true;
	return kt_fail(t, "libbpf said \"%s\", want \"%s\"", last_warn, msg);
}

static int ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAX_CPUS ? MAX_CPUS : n;
}

struct setup {
	struct bpf_object *obj;
	int map_fd, prog_fd;
	struct locked_map *lm;
};

/* Load the target's program, zero element 0, open a handle. */
/*
 * locked_map is libbpf's patch 0020 of the 6.1 series. A build whose
 * libbpf lacks it (lib/no_locked_map.h) cannot run the cases that use it:
 * on a base whose series does not have it yet they are skipped, saying
 * so; on 6.1, whose series has it, its absence is a failure.
 */
static bool have_locked_map(struct kt *t)
{
#ifdef BPFLOCK_NO_LOCKED_MAP
	if (strcmp(kt_base(), "6.1")) {
		kt_skip(t, "needs 6.1's 0020 libbpf locked_map, not in the %s series yet (issue 37)",
			kt_base());
		return false;
	}
	return kt_fail(t, "this build's libbpf has no locked_map (0020 of the 6.1 series)");
#else
	return true;
#endif
}

/* The program and its map, element 0 zeroed; no locked_map. */
static bool setup_maps(struct kt *t, const struct target *tg, struct setup *s)
{
	const char *progs[] = { tg->prog, NULL };
	struct embedded_obj o = EMBEDDED_OBJ(user_rmw);
	struct rval zero = {};
	__u32 key = 0;

	s->obj = obj_load(t, &o, progs);
	if (!s->obj)
		return false;
	s->map_fd = obj_map_fd(t, s->obj, tg->map);
	s->prog_fd = obj_prog_fd(t, s->obj, tg->prog);
	if (s->map_fd < 0 || s->prog_fd < 0)
		return false;
	return KT_OK(t, bpf_map_update_elem(s->map_fd, &key, &zero, BPF_ANY), "zero element 0");
}

static bool setup(struct kt *t, const struct target *tg, struct setup *s)
{
	if (!have_locked_map(t) || !setup_maps(t, tg, s))
		return false;
	libbpf_set_print(capture_print);
	s->lm = locked_map__new(s->map_fd, NULL);
	if (!s->lm)
		return kt_fail(t, "locked_map__new: %s (%s)", strerror(errno), last_warn);
	return KT_EQ(t, locked_map__lock_off(s->lm), OFF(lock), "lock offset from BTF");
}

static struct rval read_locked(struct kt *t, int map_fd)
{
	struct rval v = {};
	__u32 key = 0;

	KT_OK(t, bpf_map_lookup_elem_flags(map_fd, &key, &v, BPF_F_LOCK), "locked read");
	return v;
}

/* Programs on every vCPU, until told to stop. */
struct prog_load {
	int prog_fd, cpu;
	volatile int *stop;
	long runs;
	int err;
};

static void *prog_thread(void *arg)
{
	struct prog_load *p = arg;

	pin_cpu(p->cpu);
	while (!*p->stop) {
		if (prog_run(p->prog_fd, REPEAT, NULL)) {
			p->err = errno;
			break;
		}
		p->runs += REPEAT;
	}
	return NULL;
}

struct contention {
	pthread_t th[MAX_CPUS];
	struct prog_load p[MAX_CPUS];
	volatile int stop;
	int n;
};

static void contention_start(struct contention *c, int prog_fd)
{
	int i;

	c->n = ncpus();
	c->stop = 0;
	for (i = 0; i < c->n; i++) {
		c->p[i] = (struct prog_load){ .prog_fd = prog_fd, .cpu = i, .stop = &c->stop };
		pthread_create(&c->th[i], NULL, prog_thread, &c->p[i]);
	}
}

static long contention_stop(struct kt *t, struct contention *c)
{
	long runs = 0;
	int i;

	c->stop = 1;
	for (i = 0; i < c->n; i++) {
		pthread_join(c->th[i], NULL);
		if (c->p[i].err)
			kt_fail(t, "program thread %d: test_run: %s", i, strerror(c->p[i].err));
		runs += c->p[i].runs;
	}
	return runs;
}

/* User threads: add through the API, or by a locked lookup + update. */
struct adder {
	struct setup *s;
	int cpu;
	bool api;
	long n;
	__u64 *olds;
	long errs;
	int err;
};

static void *adder_thread(void *arg)
{
	struct adder *a = arg;
	__u32 key = 0;
	long i;

	pin_cpu(a->cpu);
	for (i = 0; i < a->n; i++) {
		struct rval v;
		int err;

		if (a->api) {
			err = locked_map__add(a->s->lm, &key, OFF(a), 8, 1, &a->olds[i]);
		} else {
			err = bpf_map_lookup_elem_flags(a->s->map_fd, &key, &v, BPF_F_LOCK);
			if (!err) {
				v.a++;
				err = bpf_map_update_elem(a->s->map_fd, &key, &v, BPF_F_LOCK);
			}
		}
		if (err) {
			a->errs++;
			a->err = errno;
			/*
			 * A kernel that refuses the add program refuses it on
			 * every call: each retry is one more verifier run.
			 */
			if (a->api && a->err == EINVAL)
				break;
		}
	}
	return NULL;
}

static int cmp_u64(const void *x, const void *y)
{
	__u64 a = *(const __u64 *)x, b = *(const __u64 *)y;

	return a < b ? -1 : a > b;
}

/*
 * Adds from every vCPU, with programs on every vCPU when through the API
 * (a locked update would overwrite the programs' b and c with its stale
 * copy, so the report without the API runs without them). Returns the
 * updates lost.
 */
static long add_race(struct kt *t, struct setup *s, bool api, long per_thread)
{
	struct adder a[MAX_CPUS];
	pthread_t th[MAX_CPUS];
	struct contention c;
	long runs, total = 0, dups = 0, errs = 0, i, k = 0;
	__u64 *all;
	struct rval v;
	int n = ncpus();

	all = calloc(n * per_thread, sizeof(*all));
	if (!all)
		return kt_fail(t, "out of memory"), -1;
	c.n = 0;
	if (api)
		contention_start(&c, s->prog_fd);
	for (i = 0; i < n; i++) {
		a[i] = (struct adder){ .s = s, .cpu = i, .api = api, .n = per_thread,
				       .olds = all + i * per_thread };
		pthread_create(&th[i], NULL, adder_thread, &a[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		errs += a[i].errs;
		total += a[i].n - a[i].errs;
		if (a[i].errs)
			kt_fail(t, "thread %ld: %ld calls failed, last: %s (%s)", i, a[i].errs,
				strerror(a[i].err), last_warn);
	}
	runs = api ? contention_stop(t, &c) : 0;
	v = read_locked(t, s->map_fd);
	if (api) {
		qsort(all, n * per_thread, sizeof(*all), cmp_u64);
		for (k = 1; k < n * per_thread; k++)
			dups += all[k] == all[k - 1];
		KT_EQ(t, dups, 0, "old values seen twice");
	}
	free(all);
	KT_EQ(t, v.b, runs, "b = program runs");
	KT_EQ(t, v.c, runs, "c = program runs");
	kt_log(t, "%s: %ld adds from %d threads, %ld program runs on %d vCPUs; a - b = %ld; lost %ld; %ld duplicate old values",
	       api ? "locked_map__add" : "locked lookup + locked update", total, n, runs,
	       c.n, v.a - v.b, total - (v.a - v.b), dups);
	return errs ? -1 : total - (v.a - v.b);
}

static void add_exact(struct kt *t, const void *arg)
{
	struct setup s = {};

	if (!setup(t, arg, &s))
		return;
	KT_EQ(t, add_race(t, &s, true, kt_scaled(3000)), 0, "updates lost through the API");
	locked_map__free(s.lm);
	bpf_object__close(s.obj);
}

/*
 * A report: what user space got before, without the API (plain
 * BPF_F_LOCK lookups and updates, as stock has them: no locked_map).
 */
static void add_without_api(struct kt *t, const void *arg)
{
	struct setup s = {};
	long lost;

	if (!setup_maps(t, arg, &s))
		return;
	lost = add_race(t, &s, false, kt_scaled(3000));
	KT_TRUE(t, lost >= 0, "the run completed");
	bpf_object__close(s.obj);
}

struct xchg {
	struct setup *s;
	int cpu;
	long tries;
	long won_cnt, lost_cnt;
	long *won;		/* sequence numbers this thread installed */
	int err;
};

static void *xchg_thread(void *arg)
{
	struct xchg *x = arg;
	struct rval cur = {}, want;
	__u32 key = 0;
	long i;

	pin_cpu(x->cpu);
	for (i = 0; i < x->tries; i++) {
		bool done = false;

		want = cur;
		want.pad[1] = cur.pad[1] + 1;
		want.pad[0] = x->cpu;
		if (locked_map__cmpxchg(x->s->lm, &key, &cur, &want, &cur, &done)) {
			x->err = errno;
			break;
		}
		if (done) {
			x->won[x->won_cnt++] = want.pad[1];
			cur = want;
		} else {
			x->lost_cnt++;
		}
	}
	return NULL;
}

static int cmp_long(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;

	return a < b ? -1 : a > b;
}

static void cmpxchg_once(struct kt *t, const void *arg)
{
	struct xchg x[MAX_CPUS];
	pthread_t th[MAX_CPUS];
	long tries = kt_scaled(2000), won = 0, lost = 0, runs, i, bad = 0;
	struct contention c;
	struct setup s = {};
	long *seqs;
	struct rval v;
	int n = ncpus();

	if (!setup(t, arg, &s))
		return;
	seqs = calloc(n * tries, sizeof(*seqs));
	if (!seqs)
		return (void)kt_fail(t, "out of memory");
	contention_start(&c, s.prog_fd);
	for (i = 0; i < n; i++) {
		x[i] = (struct xchg){ .s = &s, .cpu = i, .tries = tries, .won = seqs + i * tries };
		pthread_create(&th[i], NULL, xchg_thread, &x[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		if (x[i].err)
			kt_fail(t, "thread %ld: cmpxchg failed: %s (%s)", i, strerror(x[i].err),
				last_warn);
		memmove(seqs + won, x[i].won, x[i].won_cnt * sizeof(*seqs));
		won += x[i].won_cnt;
		lost += x[i].lost_cnt;
	}
	runs = contention_stop(t, &c);
	v = read_locked(t, s.map_fd);
	qsort(seqs, won, sizeof(*seqs), cmp_long);
	for (i = 0; i < won; i++)
		bad += seqs[i] != i + 1;
	kt_log(t, "%ld exchanges won, %ld lost to another writer, %ld program runs; sequence %ld",
	       won, lost, runs, v.pad[1]);
	KT_TRUE(t, won > 0, "some exchange succeeded");
	KT_EQ(t, bad, 0, "sequence numbers not installed exactly once");
	KT_EQ(t, v.pad[1], won, "final sequence = exchanges won");
	KT_EQ(t, v.c, runs, "no program run lost to an exchange");
	KT_EQ(t, v.a, runs, "a = program runs");
	KT_EQ(t, v.b, runs, "b = program runs");
	free(seqs);
	locked_map__free(s.lm);
	bpf_object__close(s.obj);
}

/*
 * r1 = value, r2 = data { long delta; long a_after; }: a += delta and
 * pad[2] += delta; returns the new a.
 */
static const struct bpf_insn fn_add2[] = {
	I_LDX_DW(BPF_REG_3, BPF_REG_2, 0),
	I_LDX_DW(BPF_REG_4, BPF_REG_1, OFF(a)),
	I_ADD64_REG(BPF_REG_4, BPF_REG_3),
	I_STX_DW(BPF_REG_1, BPF_REG_4, OFF(a)),
	I_LDX_DW(BPF_REG_5, BPF_REG_1, OFF(pad[2])),
	I_ADD64_REG(BPF_REG_5, BPF_REG_3),
	I_STX_DW(BPF_REG_1, BPF_REG_5, OFF(pad[2])),
	I_STX_DW(BPF_REG_2, BPF_REG_4, 8),
	I_MOV64_REG(BPF_REG_0, BPF_REG_4),
	I_EXIT(),
};

struct caller {
	struct setup *s;
	int fn, cpu;
	long n, errs;
	int err;
};

static void *caller_thread(void *arg)
{
	struct caller *c = arg;
	long data[2];
	__u32 key = 0;
	__s64 ret;
	long i;

	pin_cpu(c->cpu);
	for (i = 0; i < c->n; i++) {
		data[0] = 3;
		if (locked_map__call(c->s->lm, c->fn, &key, data, sizeof(data), &ret) ||
		    ret != data[1]) {
			c->errs++;
			c->err = errno;
		}
	}
	return NULL;
}

static void fn_under_lock(struct kt *t, const void *arg)
{
	long calls = kt_scaled(2000), done = 0, runs, samples = 0, torn = 0, i;
	struct caller cl[MAX_CPUS];
	pthread_t th[MAX_CPUS];
	struct contention c;
	struct setup s = {};
	struct rval v;
	int fn, n = ncpus();

	if (!setup(t, arg, &s))
		return;
	fn = locked_map__add_fn(s.lm, fn_add2, KT_ARRAY_SIZE(fn_add2), 2 * sizeof(long));
	if (fn < 0)
		return (void)kt_fail(t, "add_fn: %s (%s)", strerror(errno), last_warn);
	contention_start(&c, s.prog_fd);
	for (i = 0; i < n; i++) {
		cl[i] = (struct caller){ .s = &s, .fn = fn, .cpu = i, .n = calls };
		pthread_create(&th[i], NULL, caller_thread, &cl[i]);
	}
	/* the sampler: a - b = pad[2] under every lock */
	for (i = 0; i < 200; i++) {
		v = read_locked(t, s.map_fd);
		samples++;
		torn += v.a - v.b != v.pad[2];
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		done += cl[i].n - cl[i].errs;
		if (cl[i].errs)
			kt_fail(t, "thread %ld: %ld calls failed (%s)", i, cl[i].errs,
				strerror(cl[i].err));
	}
	runs = contention_stop(t, &c);
	v = read_locked(t, s.map_fd);
	kt_log(t, "%ld calls from %d threads, %ld program runs, %ld locked samples", done, n,
	       runs, samples);
	KT_EQ(t, torn, 0, "samples with a - b != pad[2]");
	KT_EQ(t, v.pad[2], 3 * done, "pad[2] = 3 x calls");
	KT_EQ(t, v.a - v.b, 3 * done, "a - b = 3 x calls");
	KT_EQ(t, v.b, runs, "b = program runs");
	locked_map__free(s.lm);
	bpf_object__close(s.obj);
}

struct bad_fn {
	const char *what;
	struct bpf_insn insns[8];
	int cnt;
	int err;
	const char *msg;
	int err_612;		/* 6.12's errno and words, where they differ */
	const char *msg_612;
};

/* Functions the kernel must refuse: they would break the lock region. */
static const struct bad_fn bad_fns[] = {
	{ "writes the lock word",
	  { I_ST_W(BPF_REG_1, OFF(lock), 0), I_MOV64_IMM(BPF_REG_0, 0),
	    I_EXIT() }, 3, EACCES,
	  "bpf_spin_lock cannot be accessed directly by load/store" },
	{ "releases the caller's lock",
	  { I_ADD64_IMM(BPF_REG_1, OFF(lock)),
	    I_CALL(BPF_FUNC_spin_unlock),
	    I_MOV64_IMM(BPF_REG_0, 0), I_EXIT() }, 4, EACCES,
	  "a subprogram may not release its caller's lock",
	  EINVAL, "bpf_spin_unlock without taking a lock" },
	{ "calls a helper not allowed under the lock",
	  { I_MOV64_REG(BPF_REG_1, BPF_REG_2), I_MOV64_IMM(BPF_REG_2, 8),
	    I_MOV64_IMM(BPF_REG_3, 0),
	    I_CALL(BPF_FUNC_copy_from_user),
	    I_MOV64_IMM(BPF_REG_0, 0), I_EXIT() }, 6, EINVAL,
	  "function calls are not allowed while holding a lock" },
};

static void fn_refused(struct kt *t, const void *arg)
{
	struct setup s = {};
	size_t i;

	if (!setup(t, &t_array, &s))
		return;
	for (i = 0; i < KT_ARRAY_SIZE(bad_fns); i++) {
		const struct bad_fn *b = &bad_fns[i];
		bool b612 = b->msg_612 && !strcmp(kt_base(), "6.12");
		int id;

		last_warn[0] = 0;
		id = locked_map__add_fn(s.lm, b->insns, b->cnt, 16);
		kt_log(t, "%s: %d (%s)", b->what, id, last_warn);
		if (KT_ERR(t, id, b612 ? b->err_612 : b->err, b->what))
			warned(t, b612 ? b->msg_612 : b->msg);
	}
	locked_map__free(s.lm);
	bpf_object__close(s.obj);
}

/* A map made here, with or without BTF for a value of two longs. */
static int plain_map(enum bpf_map_type type, bool with_btf)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	struct btf *btf = NULL;
	int fd, id_int, id_long, id_val;

	if (with_btf) {
		btf = btf__new_empty();
		id_int = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
		id_long = btf__add_int(btf, "long", 8, BTF_INT_SIGNED);
		id_val = btf__add_struct(btf, "pair", 16);
		btf__add_field(btf, "a", id_long, 0, 0);
		btf__add_field(btf, "b", id_long, 64, 0);
		if (btf__load_into_kernel(btf))
			return -1;
		opts.btf_fd = btf__fd(btf);
		opts.btf_key_type_id = id_int;
		opts.btf_value_type_id = id_val;
	}
	fd = bpf_map_create(type, "plain", 4, 16, 4, &opts);
	btf__free(btf);
	return fd;
}

static void no_lock_map(struct kt *t, const void *arg)
{
	int fd;

	if (!have_locked_map(t))
		return;
	libbpf_set_print(capture_print);
	fd = plain_map(BPF_MAP_TYPE_ARRAY, true);
	if (!KT_OK(t, fd, "array with BTF, no lock"))
		return;
	if (KT_ERR(t, locked_map__new(fd, NULL) ? 0 : -1, EINVAL, "value without a lock"))
		warned(t, "values hold no struct bpf_spin_lock");
	close(fd);
	fd = plain_map(BPF_MAP_TYPE_ARRAY, false);
	if (!KT_OK(t, fd, "array without BTF"))
		return;
	if (KT_ERR(t, locked_map__new(fd, NULL) ? 0 : -1, EINVAL, "map without BTF"))
		warned(t, "has no BTF for its values");
	close(fd);
	fd = plain_map(BPF_MAP_TYPE_PERCPU_ARRAY, true);
	if (!KT_OK(t, fd, "percpu array"))
		return;
	if (KT_ERR(t, locked_map__new(fd, NULL) ? 0 : -1, EOPNOTSUPP, "percpu array"))
		warned(t, "map type percpu_array is not supported");
	close(fd);
	/* the bpf syscall says EBADFD for an fd that is not open */
	KT_ERR(t, locked_map__new(1000, NULL) ? 0 : -1, EBADFD, "not a map fd");
}

static void bad_fields(struct kt *t, const void *arg)
{
	struct setup s = {};
	__u32 key = 0;

	if (!setup(t, &t_array, &s))
		return;
	if (KT_ERR(t, locked_map__add(s.lm, &key, OFF(a), 3, 1, NULL), EINVAL, "3-byte field"))
		warned(t, "no 3-byte integer at offset 0");
	if (KT_ERR(t, locked_map__add(s.lm, &key, sizeof(struct rval) - 4, 8, 1, NULL), EINVAL,
		   "field past the end"))
		warned(t, "no 8-byte integer at offset 60");
	if (KT_ERR(t, locked_map__add(s.lm, &key, -8u, 8, 1, NULL), EINVAL, "offset wraps"))
		warned(t, "no 8-byte integer");
	if (KT_ERR(t, locked_map__add(s.lm, &key, OFF(lock), 4, 1, NULL), EINVAL, "the lock word"))
		warned(t, "overlap the lock word at 8");
	if (KT_ERR(t, locked_map__add(s.lm, &key, 4, 8, 1, NULL), EINVAL, "across the lock word"))
		warned(t, "bytes 4..11 overlap the lock word");
	KT_ERR(t, locked_map__add(NULL, &key, 0, 8, 1, NULL), EINVAL, "no handle");
	KT_ERR(t, locked_map__call(s.lm, 5, &key, NULL, 0, NULL), EINVAL, "no such function");
	locked_map__free(s.lm);
	bpf_object__close(s.obj);
}

/* A missing element is -ENOENT from every operation; nothing changes. */
static void missing_key(struct kt *t, const void *arg)
{
	struct rval cur, want = {};
	struct setup s = {};
	__u32 key = 7;
	bool done = true;
	int fn;

	if (!setup(t, arg, &s))
		return;
	if (((const struct target *)arg)->insert == false)
		key = 99;	/* past the array's 4 entries */
	KT_ERR(t, locked_map__add(s.lm, &key, OFF(b), 8, 1, NULL), ENOENT, "add");
	KT_ERR(t, locked_map__cmpxchg(s.lm, &key, &want, &want, &cur, &done), ENOENT, "cmpxchg");
	fn = locked_map__add_fn(s.lm, fn_add2, KT_ARRAY_SIZE(fn_add2), 16);
	if (KT_OK(t, fn, "add_fn")) {
		long data[2] = { 1, 0 };

		KT_ERR(t, locked_map__call(s.lm, fn, &key, data, sizeof(data), NULL), ENOENT,
		       "call");
	}
	key = 0;
	KT_OK(t, locked_map__add(s.lm, &key, OFF(b), 8, 1, NULL), "element 0 still works");
	locked_map__free(s.lm);
	bpf_object__close(s.obj);
}

struct churn {
	struct setup *s;
	volatile int *stop;
	int cpu;
	long ok, gone, other, deletes;
	int other_err;
};

static void *churn_add(void *arg)
{
	struct churn *c = arg;
	__u32 key = 1;

	pin_cpu(c->cpu);
	while (!*c->stop) {
		if (!locked_map__add(c->s->lm, &key, OFF(a), 8, 1, NULL))
			c->ok++;
		else if (errno == ENOENT)
			c->gone++;
		else
			c->other++, c->other_err = errno;
	}
	return NULL;
}

static void *churn_delete(void *arg)
{
	struct churn *c = arg;
	struct rval zero = {};
	__u32 key = 1;

	pin_cpu(c->cpu);
	while (!*c->stop) {
		bpf_map_update_elem(c->s->map_fd, &key, &zero, BPF_ANY);
		if (!bpf_map_delete_elem(c->s->map_fd, &key))
			c->deletes++;
	}
	return NULL;
}

static bool both_ran(struct churn *c, int n)
{
	long ok = 0, deletes = 0;
	int i;

	for (i = 0; i < n; i++) {
		ok += __atomic_load_n(&c[i].ok, __ATOMIC_RELAXED);
		deletes += __atomic_load_n(&c[i].deletes, __ATOMIC_RELAXED);
	}
	return ok > 0 && deletes > 0;
}

/* Adds while the element is deleted and re-inserted under them. */
static void concurrent_delete(struct kt *t, const void *arg)
{
	struct churn c[MAX_CPUS];
	pthread_t th[MAX_CPUS];
	long ok = 0, gone = 0, other = 0, deletes = 0;
	int waited;
	volatile int stop = 0;
	struct setup s = {};
	struct rval v;
	__u32 key = 1;
	int i, n = ncpus();

	if (!setup(t, arg, &s))
		return;
	for (i = 0; i < n; i++) {
		c[i] = (struct churn){ .s = &s, .stop = &stop, .cpu = i };
		pthread_create(&th[i], NULL, i ? churn_add : churn_delete, &c[i]);
	}
	usleep(kt_scaled(2000) * 1000);
	/*
	 * Then until both sides have run (at most 30 s more): on slow kernels
	 * (KCSAN under TCG) the first add, which loads its program, took
	 * longer than a small BPFLOCK_SCALE's run.
	 */
	for (waited = 0; waited < 300 && !both_ran(c, n); waited++)
		usleep(100 * 1000);
	stop = 1;
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		ok += c[i].ok;
		gone += c[i].gone;
		other += c[i].other;
		deletes += c[i].deletes;
		if (c[i].other)
			kt_fail(t, "thread %d: %ld adds failed with %s", i, c[i].other,
				strerror(c[i].other_err));
	}
	kt_log(t, "%ld adds landed, %ld found no element, %ld deletes", ok, gone, deletes);
	KT_TRUE(t, ok > 0 && deletes > 0, "both sides ran");
	/* nothing left locked: a locked update and read go through */
	v = (struct rval){ .a = 5 };
	KT_OK(t, bpf_map_update_elem(s.map_fd, &key, &v, BPF_ANY), "re-insert");
	KT_OK(t, locked_map__add(s.lm, &key, OFF(a), 8, 1, NULL), "add after the churn");
	KT_OK(t, bpf_map_lookup_elem_flags(s.map_fd, &key, &v, BPF_F_LOCK), "locked read");
	KT_EQ(t, v.a, 6, "a after the churn");
	locked_map__free(s.lm);
	bpf_object__close(s.obj);
}

/*
 * On 6.12 locked_map is the libbpf patch alone: stock-6.12 lets syscall
 * programs take locks, so its cases are `feature` there; the LRU ones
 * need locks in LRU maps, which only ours has on either base.
 */
#define ON_612_FEATURE KT_ON_BASE("6.12", KT_FEATURE)
#define ON_612_BEYOND KT_ON_BASE("6.12", KT_BEYOND)

static const struct kt_case cases[] = {
	{ "add_exact_array", KT_BEYOND, add_exact, &t_array, ON_612_FEATURE },
	{ "add_exact_hash", KT_BEYOND, add_exact, &t_hash, ON_612_FEATURE },
	{ "add_exact_lru", KT_BEYOND, add_exact, &t_lru, ON_612_BEYOND },
	{ "add_without_api", KT_FEATURE, add_without_api, &t_array },
	{ "cmpxchg_once_array", KT_BEYOND, cmpxchg_once, &t_array, ON_612_FEATURE },
	{ "cmpxchg_once_hash", KT_BEYOND, cmpxchg_once, &t_hash, ON_612_FEATURE },
	{ "fn_under_lock", KT_BEYOND, fn_under_lock, &t_array, ON_612_FEATURE },
	{ "fn_under_lock_lru", KT_BEYOND, fn_under_lock, &t_lru, ON_612_BEYOND },
	{ "fn_refused", KT_BEYOND, fn_refused, NULL, ON_612_FEATURE },
	{ "no_lock_map", KT_COMMON, no_lock_map, NULL },
	{ "bad_fields", KT_FEATURE, bad_fields, NULL },
	{ "missing_key_array", KT_BEYOND, missing_key, &t_array, ON_612_FEATURE },
	{ "missing_key_hash", KT_BEYOND, missing_key, &t_hash, ON_612_FEATURE },
	{ "concurrent_delete", KT_BEYOND, concurrent_delete, &t_hash, ON_612_FEATURE },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "user_rmw", cases, KT_ARRAY_SIZE(cases));
}
