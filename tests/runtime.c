// SPDX-License-Identifier: GPL-2.0
/*
 * The lock under real contention: several threads run programs through
 * BPF_PROG_TEST_RUN at once on the guest's vCPUs.
 */
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
		bad = prog_run_threads(t, fd, THREADS, runs, 1, 1);
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
		prog_run_threads(t, fd, THREADS, runs, repeat, 0);
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
