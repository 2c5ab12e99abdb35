// SPDX-License-Identifier: GPL-2.0
/*
 * `make run`: the feature at work in the guest, in a form to show a
 * colleague: what stock 6.1 already does (1-4), then what only ours does
 * (5-6). Not a test, but every step states what it expects: the demo
 * exits 1, and says so, when a step does not behave as printed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
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

	err = load_one_logged(&o, "missing_unlock", NULL, NULL, log, sizeof(log));
	for (line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
		if (strncmp(line, "processed ", 10))
			last = line;
	printf("4. The verifier refuses a path that returns with the lock held:\n"
	       "       bpf_spin_lock(&e->lock);\n"
	       "       if (e->cnt > 10)\n"
	       "               return 2;\n"
	       "     load: %s; verifier: \"%s\"\n", strerror(-err), last ? last : "(no log)");
	return err != -EINVAL || !last || !strstr(last, "bpf_spin_unlock is missing");
}

/* Only ours from here on: stock 6.1 refuses or lacks each of these. */

struct telem {
	long a;
	struct bpf_spin_lock lock;
	long b;
};

struct tstats {
	long kprobe;
	long rest[5];
};

static void *getppid_thread(void *arg)
{
	long i, n = (long)arg;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	return NULL;
}

struct tc_job {
	int prog_fd;
	long runs, repeat, done;
	int err;
};

static void *tc_loop(void *arg)
{
	struct tc_job *j = arg;

	for (; j->done < j->runs; j->done++)
		if (prog_run(j->prog_fd, j->repeat, NULL)) {
			j->err = errno;
			break;
		}
	return NULL;
}

static int demo_kprobe_tc(struct kt *t)
{
	struct embedded_obj o = EMBEDDED_OBJ(tracing);
	struct bpf_object *obj = obj_load(t, &o,
		(const char *const[]){ "kprobe_bump", "tc_bump", NULL });
	struct tc_job tc = { .runs = 100, .repeat = 100 };
	long per_thread = 2000, calls = THREADS * per_thread, tc_incs;
	pthread_t g[THREADS], tcth;
	struct bpf_link *link;
	struct tstats st = {};
	struct telem e = {};
	int key = 0, tgid = getpid(), i;

	if (!obj)
		return 1;
	link = bpf_program__attach(bpf_object__find_program_by_name(obj, "kprobe_bump"));
	if (!link) {
		printf("5. kprobe_bump: attach failed: %s\n", strerror(errno));
		bpf_object__close(obj);
		return 1;
	}
	bpf_map_update_elem(obj_map_fd(t, obj, "tcfg"), &key, &tgid, 0);
	tc.prog_fd = obj_prog_fd(t, obj, "tc_bump");
	pthread_create(&tcth, NULL, tc_loop, &tc);
	for (i = 0; i < THREADS; i++)
		pthread_create(&g[i], NULL, getppid_thread, (void *)per_thread);
	for (i = 0; i < THREADS; i++)
		pthread_join(g[i], NULL);
	pthread_join(tcth, NULL);
	bpf_link__destroy(link);
	bpf_map_lookup_elem_flags(obj_map_fd(t, obj, "tmap"), &key, &e, BPF_F_LOCK);
	bpf_map_lookup_elem(obj_map_fd(t, obj, "tstats"), &key, &st);
	tc_incs = tc.done * tc.repeat;
	printf("5. A kprobe (on getppid) and a tc program lock the same element\n"
	       "   (stock: \"tracing progs cannot use bpf_spin_lock yet\"):\n"
	       "     getppid() calls:      %ld from %d threads, kprobe increments %ld\n"
	       "     tc increments:        %ld\n"
	       "     element a, b:         %ld, %ld (expected %ld: nothing lost)\n",
	       calls, THREADS, st.kprobe, tc_incs, e.a, e.b, calls + tc_incs);
	bpf_object__close(obj);
	return tc.err || tc.done != tc.runs || st.kprobe != calls || e.a != e.b ||
	       e.a != calls + tc_incs;
}

struct rval {
	long a;
	struct bpf_spin_lock lock;
	long b;
	long c;
	long pad[4];
};

struct adder_job {
	struct locked_map *lm;
	int fd;
	long n;
	int err;
};

static void *api_adder(void *arg)
{
	struct adder_job *j = arg;
	__u32 key = 0;
	__u64 old;
	long i;

	for (i = 0; i < j->n; i++)
		if (locked_map__add(j->lm, &key, offsetof(struct rval, a), 8, 1, &old))
			j->err = errno;
	return NULL;
}

static void *plain_adder(void *arg)
{
	struct adder_job *j = arg;
	__u32 key = 0;
	struct rval v;
	long i;

	for (i = 0; i < j->n; i++) {
		if (bpf_map_lookup_elem_flags(j->fd, &key, &v, BPF_F_LOCK)) {
			j->err = errno;
			continue;
		}
		v.a++;
		if (bpf_map_update_elem(j->fd, &key, &v, BPF_F_LOCK))
			j->err = errno;
	}
	return NULL;
}

/* Adds n from each thread; returns the final value of a (or -1). */
static long user_adds(struct locked_map *lm, int fd, void *(*fn)(void *), long n)
{
	struct adder_job j[THREADS];
	pthread_t th[THREADS];
	struct rval v = {};
	__u32 key = 0;
	int i, err = 0;

	bpf_map_update_elem(fd, &key, &v, 0);
	for (i = 0; i < THREADS; i++) {
		j[i] = (struct adder_job){ .lm = lm, .fd = fd, .n = n };
		pthread_create(&th[i], NULL, fn, &j[i]);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		err |= j[i].err;
	}
	bpf_map_lookup_elem_flags(fd, &key, &v, BPF_F_LOCK);
	return err ? -1 : v.a;
}

static int demo_user_rmw(struct kt *t)
{
	struct embedded_obj o = EMBEDDED_OBJ(user_rmw);
	struct bpf_object *obj = obj_load(t, &o, (const char *const[]){ NULL });
	long n = 2000, want = THREADS * n, api, plain;
	struct locked_map *lm;
	int fd;

	if (!obj)
		return 1;
	fd = obj_map_fd(t, obj, "rmw_array");
	lm = locked_map__new(fd, NULL);
	if (!lm) {
		printf("6. locked_map__new: %s\n", strerror(errno));
		bpf_object__close(obj);
		return 1;
	}
	api = user_adds(lm, fd, api_adder, n);
	plain = user_adds(lm, fd, plain_adder, n);
	printf("6. User space adds 1 to one element, %d threads x %ld adds:\n"
	       "     locked_map__add() (libbpf, one locked step): %ld (%ld lost)\n"
	       "     BPF_F_LOCK lookup, then BPF_F_LOCK update:   %ld (%ld lost between the two)\n",
	       THREADS, n, api, want - api, plain, want - plain);
	locked_map__free(lm);
	bpf_object__close(obj);
	return api != want || plain < 0;
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
	if (strcmp(kt_base(), "6.1")) {
		/* on 6.12 stock's kernel lets syscall programs lock: locked_map
		 * needs only bpflock's libbpf
		 */
		printf("\nOnly on ours:\n\n");
		bad += demo_kprobe_tc(&t);
		printf("\nWith bpflock's libbpf (on any 6.12 kernel with the lock):\n\n");
		bad += demo_user_rmw(&t);
	} else {
		printf("\nOnly on ours:\n\n");
		bad += demo_kprobe_tc(&t);
		bad += demo_user_rmw(&t);
	}
	printf("\n%s\n", bad ? "demo: something did not behave as shown above" : "demo: all as expected");
	return bad ? 1 : 0;
}
