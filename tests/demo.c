// SPDX-License-Identifier: GPL-2.0
/*
 * `make run`: the seed documents' examples at work in the guest, in a form
 * to show a colleague. Not a test: it prints what it sees and exits 0
 * unless something could not run at all.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "progs.h"

#define THREADS 4

struct counter {
	struct bpf_spin_lock lock;
	__u64 locked;
	__u64 unlocked;
};

struct hmap_elem {
	struct bpf_spin_lock lock;
	int var[16];
};

static int demo_counter(struct kt *t)
{
	struct embedded_obj o = EMBEDDED_OBJ(runtime);
	struct bpf_object *obj = obj_load(t, &o, (const char *const[]){ "count", NULL });
	struct counter c = {};
	long runs = 2000, repeat = 10, want = THREADS * runs * repeat;
	int key = 0;

	if (!obj)
		return 1;
	prog_run_threads(t, obj_prog_fd(t, obj, "count"), THREADS, runs, repeat, 0);
	bpf_map_lookup_elem(obj_map_fd(t, obj, "counters"), &key, &c);
	printf("1. Counter in a map value, %d vCPUs x %ld increments each:\n"
	       "     under bpf_spin_lock(): %llu (every increment kept)\n"
	       "     plain load/store:      %llu (%lld lost to races)\n",
	       THREADS, runs * repeat, (unsigned long long)c.locked,
	       (unsigned long long)c.unlocked, want - (long long)c.unlocked);
	bpf_object__close(obj);
	return c.locked != (__u64)want;
}

static int demo_seed(struct kt *t)
{
	struct embedded_obj o = EMBEDDED_OBJ(runtime);
	struct bpf_object *obj = obj_load(t, &o, (const char *const[]){ "seed_spin_lock", NULL });
	long bad;

	if (!obj)
		return 1;
	bad = prog_run_threads(t, obj_prog_fd(t, obj, "seed_spin_lock"), THREADS, 5000, 1, 1);
	printf("2. The seed's program (hash counter, \"virtual queue\" in an array,\n"
	       "   cgroup local storage counter), %d vCPUs x 5000 runs:\n"
	       "     runs that saw another CPU inside a locked region: %ld\n", THREADS, bad);
	bpf_object__close(obj);
	return bad != 0;
}

struct reader_job {
	int fd;
	__u64 flags;
	long torn;
};

static void *reader(void *arg)
{
	struct reader_job *r = arg;
	struct hmap_elem v;
	int key = 0, i, k;

	for (i = 0; i < 10000; i++) {
		bpf_map_lookup_elem_flags(r->fd, &key, &v, r->flags);
		for (k = 1; k < 16; k++)
			if (v.var[k] != v.var[0]) {
				r->torn++;
				break;
			}
	}
	return NULL;
}

static long torn_reads(int prog, int map, __u64 flags)
{
	struct reader_job r = { map, flags, 0 };
	pthread_t w[THREADS - 1], rd;
	struct prog_runner j[THREADS - 1];
	int i;

	for (i = 0; i < THREADS - 1; i++) {
		j[i] = (struct prog_runner){ .prog_fd = prog, .runs = 3000, .repeat = 1 };
		pthread_create(&w[i], NULL, prog_runner_thread, &j[i]);
	}
	pthread_create(&rd, NULL, reader, &r);
	pthread_join(rd, NULL);
	for (i = 0; i < THREADS - 1; i++)
		pthread_join(w[i], NULL);
	return r.torn;
}

static int demo_flag_lock(struct kt *t)
{
	struct embedded_obj o = EMBEDDED_OBJ(user_lock);
	struct bpf_object *obj = obj_load(t, &o, (const char *const[]){ "write_uniform", NULL });
	int prog, map;
	long locked, plain;

	if (!obj)
		return 1;
	prog = obj_prog_fd(t, obj, "write_uniform");
	map = obj_map_fd(t, obj, "array_map");
	locked = torn_reads(prog, map, BPF_F_LOCK);
	plain = torn_reads(prog, map, 0);
	printf("3. User space reads 16 ints that programs on %d vCPUs rewrite under the lock,\n"
	       "   10000 lookups each way:\n"
	       "     with BPF_F_LOCK: %ld torn values\n"
	       "     without:         %ld torn values\n", THREADS - 1, locked, plain);
	bpf_object__close(obj);
	return locked != 0;
}

static int demo_reject(void)
{
	struct embedded_obj o = EMBEDDED_OBJ(verifier);
	static char log[1 << 16];
	char *line, *last = NULL;
	int err;

	err = load_one_logged(&o, "helper_call_locked", NULL, NULL, log, sizeof(log));
	for (line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
		if (strncmp(line, "processed ", 10))
			last = line;
	printf("4. The verifier refuses a helper call inside the locked region:\n"
	       "       bpf_spin_lock(&e->lock);\n"
	       "       e->cnt = bpf_get_prandom_u32();\n"
	       "       bpf_spin_unlock(&e->lock);\n"
	       "     load: %s; verifier: \"%s\"\n", strerror(-err), last ? last : "(no log)");
	return err == 0;
}

int main(void)
{
	struct kt t = { .name = "demo" };
	struct utsname u;
	int bad = 0;

	uname(&u);
	printf("\nbpflock demo on Linux %s, %ld CPUs\n\n", u.release, sysconf(_SC_NPROCESSORS_ONLN));
	bad += demo_counter(&t);
	bad += demo_seed(&t);
	bad += demo_flag_lock(&t);
	bad += demo_reject();
	printf("\n%s\n", bad ? "demo: something did not behave as shown above" : "demo: all as expected");
	return bad ? 1 : 0;
}
