// SPDX-License-Identifier: GPL-2.0
/*
 * Calls under the lock (progs/calls.bpf.c): the verdict of every
 * annotated program, then each allowed call under contention. Every
 * allowed program increments element 0 once per run under its lock; run
 * on every vCPU at once, the counter must equal the runs exactly (a call
 * that broke the lock region would lose or tear increments; one that
 * waited on something would hang the guest).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progs.h"

#define REPEAT 100

struct celem {
	long cnt;
	struct bpf_spin_lock lock;
	int pad;
	__u64 seen;
};

static void contention(struct kt *t, const void *arg)
{
	const char *prog = arg;
	struct embedded_obj o = EMBEDDED_OBJ(calls);
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), key = 0, fd, map;
	long runs = kt_scaled(200);
	struct bpf_object *obj;
	struct celem e = {};

	if (ncpu > PROG_RUN_MAX_THREADS)
		ncpu = PROG_RUN_MAX_THREADS;
	obj = obj_load(t, &o, (const char *const[]){ prog, NULL });
	if (!obj)
		return;
	fd = obj_prog_fd(t, obj, prog);
	map = obj_map_fd(t, obj, "cmap");
	if (fd < 0 || map < 0)
		goto out;
	KT_EQ(t, prog_run_threads(t, fd, ncpu, runs, REPEAT, 0), 0, "runs returning non-zero");
	if (!KT_OK(t, bpf_map_lookup_elem_flags(map, &key, &e, BPF_F_LOCK), "read"))
		goto out;
	kt_log(t, "%s: %d threads x %ld runs x %d: counter %ld, last call result %llu",
	       prog, ncpu, runs, REPEAT, e.cnt, (unsigned long long)e.seen);
	KT_EQ(t, e.cnt, ncpu * runs * REPEAT, "one increment per run");
out:
	bpf_object__close(obj);
}

static const char *const allowed[] = {
	"call_ktime_get_ns", "call_ktime_get_boot_ns", "call_get_smp_processor_id",
	"call_get_numa_node_id", "call_get_prandom_u32", "call_lookup_array",
	"call_lookup_hash", "call_lookup_lru_hash", "call_lookup_percpu_array",
	"call_static_subprog", "subprog_takes_own_lock",
};

int main(int argc, char **argv)
{
	struct embedded_obj o = EMBEDDED_OBJ(calls);
	int n = KT_ARRAY_SIZE(allowed), na, i;
	struct kt_case *annotated, *all;
	char name[80];

	na = annotated_cases(&o, &annotated);
	if (na < 0)
		return 1;
	all = calloc(na + n, sizeof(*all));
	if (!all)
		return 1;
	memcpy(all, annotated, na * sizeof(*all));
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "contended_%s", allowed[i]);
		all[na + i] = (struct kt_case){ strdup(name), KT_FEATURE, contention, allowed[i] };
		if (strcmp(allowed[i], "subprog_takes_own_lock")) {
			all[na + i].kind = KT_BEYOND;
			all[na + i].base = "6.12";	/* the 6.12 series allows them too */
			all[na + i].base_kind = KT_BEYOND;
		}
	}
	return kt_main(argc, argv, "calls", all, na + n);
}
