// SPDX-License-Identifier: GPL-2.0
/*
 * Torture: on all vCPUs at once, tc, XDP and cgroup_skb programs take the
 * locks of a few hash and array elements (through test runs) while user
 * space threads read and write the same elements with BPF_F_LOCK, delete
 * and re-insert hash keys, and run batch lookups.
 *
 * Invariants of "mixed", counted:
 * - every read made under the lock (lookup or batch with BPF_F_LOCK) of
 *   an element that is not deleted sees all NVARS ints of a pattern
 *   equal: no torn value;
 * - the counters, which only programs touch, end up at exactly twice the
 *   number of program runs: no increment lost;
 * - it ends: the harness's per-case timeout fails it if anything hangs
 *   (give BPFLOCK_TEST_TIMEOUT room for long runs), and
 *   the kernel's own lockup detectors and the console scan catch the rest.
 *
 * "mixed_pairs" (ours only) adds a fourth program that takes two locks at
 * once with bpf_spin_lock_pair() (0022): two counters (so the count of
 * increments is the same) and two patterns, one in the churned hash, in
 * either address order against single locks, BPF_F_LOCK copies and the
 * reused-element write; and a user thread adds to the same counters with
 * libbpf's locked_map__add() (0020), so increments = 2 x runs + adds.
 *
 * Reads of the churned hash (keys deleted and re-inserted) are counted
 * and reported there; "churn" asserts them, because only ours writes a
 * reused element under its lock (stock 6.1 tears such reads).
 *
 * BPFLOCK_TORTURE_SECONDS sets the duration (default 5).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"
#include "progs/torture.h"

#define PROG_THREADS 4
#define REPEAT 100

struct shared {
	int progs[4];
	int nprogs;		/* 4 with the pair program */
	int cnt_hash, cnt_array, pat_hash, pat_array, churn_hash;
	atomic_int stop;
	atomic_long runs;		/* successful program runs */
	atomic_long run_errors;
	atomic_long lookups, updates, deletes, inserts, batches;
	atomic_long torn;
	atomic_long churn_reads, churn_torn;	/* of churn_hash */
	atomic_long rmw_adds;		/* locked_map__add() on the counters */
	atomic_long errors;		/* unexpected syscall errors */
	int first_errno;
	const char *first_op;
};

static void note_error(struct shared *s, const char *op, int err)
{
	if (atomic_fetch_add(&s->errors, 1) == 0) {
		s->first_errno = err;
		s->first_op = op;
	}
}

static bool uniform(const struct pattern *p)
{
	int i;

	for (i = 1; i < NVARS; i++)
		if (p->var[i] != p->var[0])
			return false;
	return true;
}

static void *prog_thread(void *arg)
{
	struct shared *s = arg;
	__u32 retval;
	unsigned int i = 0;

	while (!atomic_load(&s->stop)) {
		int which = i++ % s->nprogs;

		/* tc and the pair program return 0, XDP_PASS, cgroup 1 */
		if (prog_run(s->progs[which], REPEAT, &retval) ||
		    retval != (which == 2 ? 1u : which == 1 ? 2u : 0u)) {
			atomic_fetch_add(&s->run_errors, 1);
			continue;
		}
		atomic_fetch_add(&s->runs, REPEAT);
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct shared *s = arg;
	struct pattern p;
	unsigned int i = 0;

	while (!atomic_load(&s->stop)) {
		int key = i % NELEMS, which = i++ % 3;
		int map = which == 0 ? s->pat_hash : which == 1 ? s->pat_array : s->churn_hash;

		if (bpf_map_lookup_elem_flags(map, &key, &p, BPF_F_LOCK)) {
			if (errno != ENOENT)
				note_error(s, "lookup", errno);
			continue;
		}
		atomic_fetch_add(&s->lookups, 1);
		if (which == 2) {
			atomic_fetch_add(&s->churn_reads, 1);
			if (!uniform(&p) || p.lock.val)
				atomic_fetch_add(&s->churn_torn, 1);
		} else if (!uniform(&p) || p.lock.val) {
			atomic_fetch_add(&s->torn, 1);
		}
	}
	return NULL;
}

static void *writer(void *arg)
{
	struct shared *s = arg;
	struct pattern p = {};
	unsigned int i = 0;

	while (!atomic_load(&s->stop)) {
		int key = i % NELEMS, k;
		int map = i % 3 == 0 ? s->pat_hash : i % 3 == 1 ? s->pat_array : s->churn_hash;

		for (k = 0; k < NVARS; k++)
			p.var[k] = -(int)i;
		i++;
		if (bpf_map_update_elem(map, &key, &p, BPF_F_LOCK))
			note_error(s, "update", errno);
		else
			atomic_fetch_add(&s->updates, 1);
	}
	return NULL;
}

/* Deletes a hash key and puts it back, with and without BPF_F_LOCK. */
static void *churner(void *arg)
{
	struct shared *s = arg;
	struct pattern p = {};
	unsigned int i = 0;

	while (!atomic_load(&s->stop)) {
		int key = i % NELEMS;

		if (!bpf_map_delete_elem(s->churn_hash, &key))
			atomic_fetch_add(&s->deletes, 1);
		else if (errno != ENOENT)
			note_error(s, "delete", errno);
		if (!bpf_map_update_elem(s->churn_hash, &key, &p,
					 (i & 2) ? BPF_F_LOCK | BPF_NOEXIST : BPF_NOEXIST))
			atomic_fetch_add(&s->inserts, 1);
		else if (errno != EEXIST)
			note_error(s, "insert", errno);
		i++;
	}
	return NULL;
}

static void *batcher(void *arg)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_F_LOCK);
	struct shared *s = arg;
	struct pattern vals[NELEMS];
	int keys[NELEMS], i = 0;

	while (!atomic_load(&s->stop)) {
		int map = (i++ & 1) ? s->pat_hash : s->pat_array;
		__u32 count = NELEMS, batch, k;

		if (bpf_map_lookup_batch(map, NULL, &batch, keys, vals, &count, &opts) &&
		    errno != ENOENT) {
			note_error(s, "batch lookup", errno);
			continue;
		}
		atomic_fetch_add(&s->batches, 1);
		for (k = 0; k < count; k++)
			if (!uniform(&vals[k]) || vals[k].lock.val)
				atomic_fetch_add(&s->torn, 1);
	}
	return NULL;
}

/*
 * User-space read-modify-write (libbpf's locked_map, 0020): adds 1 to the
 * counters the programs increment, under their locks. Ours only.
 */
static void *rmw_adder(void *arg)
{
	struct shared *s = arg;
	struct locked_map *lm[2];
	unsigned int i = 0;

	lm[0] = locked_map__new(s->cnt_hash, NULL);
	lm[1] = locked_map__new(s->cnt_array, NULL);
	if (!lm[0] || !lm[1]) {
		note_error(s, "locked_map__new", errno);
		return NULL;
	}
	while (!atomic_load(&s->stop)) {
		int key = i % NELEMS;

		if (locked_map__add(lm[i++ & 1], &key, offsetof(struct counter, cnt),
				    sizeof(__u64), 1, NULL))
			note_error(s, "locked_map__add", errno);
		else
			atomic_fetch_add(&s->rmw_adds, 1);
	}
	locked_map__free(lm[0]);
	locked_map__free(lm[1]);
	return NULL;
}

static __u64 sum_counters(int map)
{
	struct counter c;
	__u64 sum = 0;
	int key;

	for (key = 0; key < NELEMS; key++)
		if (!bpf_map_lookup_elem_flags(map, &key, &c, BPF_F_LOCK))
			sum += c.cnt;
	return sum;
}

static bool getenv_is(const char *name, const char *value)
{
	const char *v = getenv(name);

	return v && !strcmp(v, value);
}

static void mixed(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(torture);
	const char *env = getenv("BPFLOCK_TORTURE_SECONDS");
	int seconds = env ? atoi(env) : 5, i, n = 0;
	void *(*fns[])(void *) = { reader, reader, writer, churner, batcher };
	pthread_t th[PROG_THREADS + KT_ARRAY_SIZE(fns) + 1];
	struct counter zc = {};
	struct shared *s = calloc(1, sizeof(*s));
	struct bpf_object *obj;
	__u64 counted, want;

	obj = obj_load(t, &o, (const char *const[]){ "tort_tc", "tort_xdp", "tort_cg",
						      arg ? "tort_pair" : NULL, NULL });
	if (!obj)
		return;
	s->progs[0] = obj_prog_fd(t, obj, "tort_tc");
	s->progs[1] = obj_prog_fd(t, obj, "tort_xdp");
	s->progs[2] = obj_prog_fd(t, obj, "tort_cg");
	s->nprogs = 3;
	if (arg)
		s->progs[s->nprogs++] = obj_prog_fd(t, obj, "tort_pair");
	s->cnt_hash = obj_map_fd(t, obj, "cnt_hash");
	s->cnt_array = obj_map_fd(t, obj, "cnt_array");
	s->pat_hash = obj_map_fd(t, obj, "pat_hash");
	s->pat_array = obj_map_fd(t, obj, "pat_array");
	s->churn_hash = obj_map_fd(t, obj, "churn_hash");
	for (i = 0; i < NELEMS; i++)
		bpf_map_update_elem(s->cnt_hash, &i, &zc, 0);
	for (i = 0; i < PROG_THREADS; i++)
		pthread_create(&th[n++], NULL, prog_thread, s);
	/* BPFLOCK_TORTURE_USER=0: programs only, to compare rates */
	for (i = 0; i < (int)KT_ARRAY_SIZE(fns) && !getenv_is("BPFLOCK_TORTURE_USER", "0"); i++)
		pthread_create(&th[n++], NULL, fns[i], s);
	if (arg && !getenv_is("BPFLOCK_TORTURE_USER", "0"))
		pthread_create(&th[n++], NULL, rmw_adder, s);
	sleep(seconds);
	atomic_store(&s->stop, 1);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);

	counted = sum_counters(s->cnt_hash) + sum_counters(s->cnt_array);
	want = 2 * (__u64)atomic_load(&s->runs) + atomic_load(&s->rmw_adds);
	kt_log(t, "%d s: %ld program runs (%ld failed), %ld BPF_F_LOCK lookups, %ld updates, "
	       "%ld deletes, %ld inserts, %ld batch lookups",
	       seconds, atomic_load(&s->runs), atomic_load(&s->run_errors),
	       atomic_load(&s->lookups), atomic_load(&s->updates), atomic_load(&s->deletes),
	       atomic_load(&s->inserts), atomic_load(&s->batches));
	if (arg)
		kt_log(t, "pair programs among them; %ld locked_map__add() calls",
		       atomic_load(&s->rmw_adds));
	kt_log(t, "counters: %llu increments counted, %llu made; torn reads: %ld; "
	       "churned hash: %ld reads, %ld torn (asserted by the churn case)",
	       (unsigned long long)counted, (unsigned long long)want, atomic_load(&s->torn),
	       atomic_load(&s->churn_reads), atomic_load(&s->churn_torn));
	KT_EQ(t, atomic_load(&s->run_errors), 0, "failed program runs");
	KT_EQ(t, atomic_load(&s->torn), 0, "torn reads under the lock");
	KT_EQ(t, counted, want, "counter increments kept");
	if (atomic_load(&s->errors))
		kt_fail(t, "%ld unexpected syscall errors, first: %s: %s",
			atomic_load(&s->errors), s->first_op, strerror(s->first_errno));
	KT_TRUE(t, atomic_load(&s->runs) > 0, "programs ran");
	if (!getenv_is("BPFLOCK_TORTURE_USER", "0"))
		KT_TRUE(t, atomic_load(&s->lookups) > 0 && atomic_load(&s->batches) > 0,
			"every kind of user operation ran");
	bpf_object__close(obj);
}

struct churn {
	int map;
	int key;
	atomic_int *stop;
	long ops;
	long torn;
	int err;
};

/* Delete the key and insert it again with a new uniform value. */
static void *big_churner(void *arg)
{
	struct churn *c = arg;
	static struct big v[2];
	struct big *p = &v[c->key & 1];
	int i, k;

	for (i = 0; !atomic_load(c->stop); i++) {
		for (k = 0; k < BIG_VARS; k++)
			p->var[k] = i;
		bpf_map_delete_elem(c->map, &c->key);
		if (bpf_map_update_elem(c->map, &c->key, p, BPF_NOEXIST) && errno != EEXIST) {
			c->err = errno;
			break;
		}
		c->ops++;
	}
	return NULL;
}

static void *big_reader(void *arg)
{
	struct churn *c = arg;
	struct big v;
	int k;

	while (!atomic_load(c->stop)) {
		if (bpf_map_lookup_elem_flags(c->map, &c->key, &v, BPF_F_LOCK)) {
			if (errno != ENOENT) {
				c->err = errno;
				break;
			}
			continue;
		}
		__atomic_fetch_add(&c->ops, 1, __ATOMIC_RELAXED);
		for (k = 1; k < BIG_VARS; k++)
			if (v.var[k] != v.var[0]) {
				__atomic_fetch_add(&c->torn, 1, __ATOMIC_RELAXED);
				break;
			}
	}
	return NULL;
}

/* The readers' lookups and torn values so far (read while they run) */
static long churn_count(struct churn *c, bool torn)
{
	return __atomic_load_n(torn ? &c[1].torn : &c[1].ops, __ATOMIC_RELAXED) +
	       __atomic_load_n(torn ? &c[3].torn : &c[3].ops, __ATOMIC_RELAXED);
}

/* A thread gave up on an error (a kernel without BPF_F_LOCK lookups) */
static bool churn_stopped(struct churn *c)
{
	int i;

	for (i = 0; i < 4; i++)
		if (__atomic_load_n(&c[i].err, __ATOMIC_RELAXED))
			return true;
	return false;
}

/*
 * Invariant: a BPF_F_LOCK lookup never returns a torn value, even while
 * the element it found is deleted and its memory reused for the next
 * insert. Two keys, each with one churning and one reading thread. It
 * runs BPFLOCK_TORTURE_SECONDS and at least CHURN_READS lookups (a loaded
 * host gives the threads less time: stock tears about one lookup in
 * 2000 on plain kernels, fewer on debug ones, where 9398 lookups saw
 * none), stopping at the first torn one or the first error, at most
 * CHURN_MAX_SECONDS. The lookups are not scaled by BPFLOCK_SCALE: fewer
 * would let stock pass, and the case would test nothing.
 */
#define CHURN_READS 50000
#define CHURN_MAX_SECONDS 120
static void churn(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(torture);
	const char *env = getenv("BPFLOCK_TORTURE_SECONDS");
	int seconds = env ? atoi(env) : 5, i;
	long torn = 0, reads = 0, inserts = 0, min_reads = CHURN_READS;
	struct churn c[4];
	pthread_t th[4];
	atomic_int stop = 0;
	struct bpf_object *obj;
	int map, elapsed;

	obj = obj_load(t, &o, (const char *const[]){ NULL });
	if (!obj)
		return;
	map = obj_map_fd(t, obj, "big_hash");
	for (i = 0; i < 4; i++) {
		c[i] = (struct churn){ .map = map, .key = i / 2, .stop = &stop };
		pthread_create(&th[i], NULL, i & 1 ? big_reader : big_churner, &c[i]);
	}
	for (elapsed = 0; elapsed < CHURN_MAX_SECONDS; elapsed++) {
		if (churn_stopped(c) || (elapsed >= seconds &&
		    (churn_count(c, false) >= min_reads || churn_count(c, true))))
			break;
		sleep(1);
	}
	atomic_store(&stop, 1);
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		if (c[i].err)
			kt_fail(t, "thread %d: %s", i, strerror(c[i].err));
		if (i & 1) {
			reads += c[i].ops;
			torn += c[i].torn;
		} else {
			inserts += c[i].ops;
		}
	}
	kt_log(t, "%d s: %ld delete+insert, %ld BPF_F_LOCK lookups, %ld torn", elapsed,
	       inserts, reads, torn);
	KT_TRUE(t, reads > 0 && inserts > 0, "both sides ran");
	KT_EQ(t, torn, 0, "torn BPF_F_LOCK reads of reused elements");
	bpf_object__close(obj);
}

static const struct kt_case cases[] = {
	{ "mixed", KT_FEATURE, mixed },
	/* the same with bpf_spin_lock_pair() among the programs (0022; 6.12: 0029) */
	{ "mixed_pairs", KT_BEYOND, mixed, "pairs", KT_ON_BASE("6.12", KT_BEYOND) },
	{ "churn", KT_BEYOND, churn, KT_ON_BASE("6.12", KT_BEYOND) },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "torture", cases, KT_ARRAY_SIZE(cases));
}
