// SPDX-License-Identifier: GPL-2.0
/*
 * The lock under real contention: several threads run programs through
 * BPF_PROG_TEST_RUN at once on the guest's vCPUs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "progs.h"

#define THREADS 4

struct counter {
	struct bpf_spin_lock lock;
	__u64 locked;
	__u64 unlocked;
};

struct runner {
	int prog_fd;
	long runs;
	int repeat;
	__u32 want;	/* the return value of a good run */
	long bad;	/* runs that returned something else */
	int err;	/* first test_run errno */
	__u32 bad_retval;
};

static void *run_thread(void *arg)
{
	struct runner *r = arg;
	__u32 retval;
	long i;

	for (i = 0; i < r->runs; i++) {
		if (prog_run(r->prog_fd, r->repeat, &retval)) {
			r->err = errno;
			break;
		}
		if (retval != r->want) {
			r->bad++;
			r->bad_retval = retval;
		}
	}
	return NULL;
}

/* Run the program from THREADS threads; returns the number of bad runs. */
static long run_threads(struct kt *t, int prog_fd, long runs, int repeat, __u32 want)
{
	struct runner r[THREADS];
	pthread_t th[THREADS];
	long bad = 0;
	int i;

	for (i = 0; i < THREADS; i++) {
		r[i] = (struct runner){ .prog_fd = prog_fd, .runs = runs, .repeat = repeat,
				      .want = want };
		pthread_create(&th[i], NULL, run_thread, &r[i]);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		if (r[i].err)
			kt_fail(t, "thread %d: test_run failed: %s", i, strerror(r[i].err));
		if (r[i].bad)
			kt_log(t, "thread %d: %ld runs broke an invariant (last return %u)",
			       i, r[i].bad, r[i].bad_retval);
		bad += r[i].bad;
	}
	return bad;
}

/*
 * Invariant: inside the lock the hash counter, the cgroup storage counter
 * and the queue's credit are never seen by two runs at once; each run
 * returns 1 only if it saw them consistent. 4 threads x 10000 runs.
 */
static void seed_spin_lock(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(runtime);
	struct bpf_object *obj;
	long runs = kt_scaled(10000), bad;
	int fd;

	obj = obj_load(t, &o, (const char *const[]){ "seed_spin_lock", NULL });
	if (!obj)
		return;
	fd = obj_prog_fd(t, obj, "seed_spin_lock");
	if (fd >= 0) {
		bad = run_threads(t, fd, runs, 1, 1);
		KT_EQ(t, bad, 0, "runs that saw a broken invariant");
		kt_log(t, "%d threads x %ld runs", THREADS, runs);
	}
	bpf_object__close(obj);
}

/*
 * Invariant: every increment made under the lock is kept, so the final
 * count is exactly threads x runs x repeat. The unlocked twin shows how
 * many increments plain load/store loses on the same workload.
 */
static void exact_counter(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(runtime);
	long runs = kt_scaled(2000), repeat = 50, want;
	struct counter c = {};
	struct bpf_object *obj;
	int fd, map, key = 0;

	obj = obj_load(t, &o, (const char *const[]){ "count", NULL });
	if (!obj)
		return;
	fd = obj_prog_fd(t, obj, "count");
	map = obj_map_fd(t, obj, "counters");
	if (fd >= 0 && map >= 0) {
		run_threads(t, fd, runs, repeat, 0);
		want = THREADS * runs * repeat;
		if (KT_OK(t, bpf_map_lookup_elem(map, &key, &c), "lookup")) {
			KT_EQ(t, c.locked, want, "increments under the lock");
			kt_log(t, "%ld increments; without the lock %llu survived (%lld lost)",
			       want, (unsigned long long)c.unlocked,
			       want - (long long)c.unlocked);
		}
	}
	bpf_object__close(obj);
}

static const struct kt_case cases[] = {
	{ "seed_spin_lock", KT_FEATURE, seed_spin_lock },
	{ "exact_counter", KT_FEATURE, exact_counter },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "runtime", cases, KT_ARRAY_SIZE(cases));
}
