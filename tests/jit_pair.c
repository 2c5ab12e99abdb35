// SPDX-License-Identifier: GPL-2.0
/*
 * The x86-64 JIT's inline pair (0032), its slow paths (0030) and the lock
 * call's map record (0031), as an attacker would use them
 * (progs/jit_pair.bpf.c). Stock has no pair kfuncs: every case is beyond.
 *
 * pair_storm: eight threads, each its own program, on four vCPUs: inline
 * pairs of elements {0,1} {1,0} {1,2} {2,0}, an element with itself
 * through two lookups, a single inline lock, a pair across two maps, a
 * pair of a hash and an array element; a ninth thread reads with
 * BPF_F_LOCK. Invariants: no hang, no program saw a torn element or a
 * changed live value, every element's a == b == the runs that added to it.
 *
 * tail_pair: a tail_call_reachable program that takes the pair, calls a
 * subprogram, and a subprogram that takes it again and tail calls the
 * program: 34 executions per run (the tail call count survives the inline
 * pair, which clobbers rax without RESTORE_TAIL_CALL_CNT).
 *
 * harden_pair: the same storm's pairs loaded with bpf_jit_harden=2.
 *
 * two_maps_poison: 0031's record: a call site that locks elements of two
 * maps passes no map (R2 = 0) and counts in neither; one that locks one
 * map's elements in a loop, visited once per iteration, passes that map.
 *
 * slowpath_tracer: fentry and fexit programs on queued_spin_lock_slowpath,
 * which the inline pair's waits reach inside the region, take the pair of
 * elements 0 and 1 while tc programs contend on them with inline pairs
 * (both orders, an element with itself) and single locks, and a thread
 * updates other elements with BPF_F_LOCK. Invariants: no CPU waits on
 * itself (the guard skips the tracers inside regions), and each element
 * counts exactly the tc runs and the tracer runs that added to it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progs.h"

struct elem {
	__u64 a;
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 b;
};

#define REPEAT 100

#define HARDEN "/proc/sys/net/core/bpf_jit_harden"

static struct bpf_object *load(struct kt *t, const char *const *progs)
{
	struct embedded_obj o = EMBEDDED_OBJ(jit_pair);

	return obj_load(t, &o, progs);
}

struct reader {
	int map, hmap;
	volatile int stop;
	long reads, torn;
};

static void *read_locked(void *arg)
{
	struct reader *r = arg;
	struct elem v;
	int key = 0;

	while (!r->stop) {
		key = (key + 1) % 4;
		if (!bpf_map_lookup_elem_flags(r->map, &key, &v, BPF_F_LOCK)) {
			r->reads++;
			r->torn += v.a != v.b;
		}
		if (!bpf_map_lookup_elem_flags(r->hmap, &(int){ 0 }, &v, BPF_F_LOCK)) {
			r->reads++;
			r->torn += v.a != v.b;
		}
	}
	return NULL;
}

static __u8 img[65536];

/* Is the pair inline in the program's image? */
/*
 * Run n programs, one thread each, runs x REPEAT times; fail on a test_run
 * error or a bad return value. want[k] (k < nelems) gains the runs of every
 * program whose adds[] has bit k: the element counts it must end with.
 */
static void run_programs(struct kt *t, const int *fd, const char *const *names,
			 const int *adds, int n, long runs, long *want, int nelems)
{
	struct prog_runner r[8];
	pthread_t th[8];
	int i, k;

	for (i = 0; i < n; i++) {
		r[i] = (struct prog_runner){ .prog_fd = fd[i], .runs = runs, .repeat = REPEAT };
		pthread_create(&th[i], NULL, prog_runner_thread, &r[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		KT_EQ(t, r[i].err, 0, "test_run");
		if (r[i].bad)
			kt_fail(t, "%s: %ld bad runs, last retval %u", names[i], r[i].bad,
				r[i].bad_retval);
		for (k = 0; k < nelems; k++)
			if (adds[i] & (1 << k))
				want[k] += runs * REPEAT;
	}
}

/*
 * The pair is emitted as the JIT should: inline (lock cmpxchg on the
 * higher word in rsi), except on debug kernels, which keep the kfunc
 * calls (CONFIG_BPF_LOCK_DEBUG) and run every case through them.
 */
/* The programs count what went wrong by code (1..4) in badc: none may have */
static void check_codes(struct kt *t, int badc)
{
	__u64 bad;
	int k;

	for (k = 1; k < 5; k++) {
		bad = 0;
		bpf_map_lookup_elem(badc, &k, &bad);
		if (bad)
			kt_fail(t, "programs reported code %d %llu times", k, (unsigned long long)bad);
	}
}

static bool pair_inline(struct kt *t, int fd)
{
	static const __u8 cmpxchg_rsi[] = { 0xf0, 0x0f, 0xb1, 0x16 };
	const char *flavour = getenv("BPFLOCK_FLAVOUR");
	bool want = !flavour || strcmp(flavour, "debug");
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.jited_prog_len ||
	    info.jited_prog_len > sizeof(img))
		return false;
	len = sizeof(info);
	info = (struct bpf_prog_info){ .jited_prog_len = sizeof(img),
				       .jited_prog_insns = (__u64)(unsigned long)img };
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return false;
	return has_bytes(img, info.jited_prog_len, cmpxchg_rsi, sizeof(cmpxchg_rsi)) == want;
}

static const char *const storm_progs[] = { "pair01", "pair10", "pair12", "pair20", "pair00",
					   "single1", "pair_maps_rev", "pair_hash", NULL };

static void storm(struct kt *t, bool harden)
{
	/* which elements of elems (bits 0-3), elems2[0] (bit 4), helems[0] (bit 5) each adds to */
	static const int adds[8] = { 0x3, 0x3, 0x6, 0x5, 0x1, 0x2, 0x11, 0x22 };
	int old = sysctl_get(HARDEN), map, map2, hmap, badc, fd[8], i, k;
	long runs = kt_scaled(300), per = runs * REPEAT, want[6] = {};
	struct reader rd = {};
	pthread_t rth;
	struct bpf_object *obj;
	struct elem v, zero = {};

	if (harden && !KT_TRUE(t, sysctl_set(HARDEN, 2), "bpf_jit_harden=2"))
		return;
	obj = load(t, storm_progs);
	if (harden)
		sysctl_set(HARDEN, old);
	if (!obj)
		return;
	map = obj_map_fd(t, obj, "elems");
	map2 = obj_map_fd(t, obj, "elems2");
	hmap = obj_map_fd(t, obj, "helems");
	badc = obj_map_fd(t, obj, "badc");
	if (!KT_OK(t, bpf_map_update_elem(hmap, &(int){ 0 }, &zero, BPF_ANY), "hash element"))
		goto out;
	for (i = 0; i < 8; i++) {
		fd[i] = obj_prog_fd(t, obj, storm_progs[i]);
		if (fd[i] < 0)
			goto out;
		if (i != 5)
			KT_TRUE(t, pair_inline(t, fd[i]), storm_progs[i]);
	}
	rd.map = map;
	rd.hmap = hmap;
	pthread_create(&rth, NULL, read_locked, &rd);
	run_programs(t, fd, storm_progs, adds, 8, runs, want, 6);
	rd.stop = 1;
	pthread_join(rth, NULL);
	kt_log(t, "%ld runs per program; %ld locked reads, %ld torn", per, rd.reads, rd.torn);
	KT_EQ(t, rd.torn, 0, "torn locked reads");
	check_codes(t, badc);
	for (k = 0; k < 6; k++) {
		int fdm = k < 4 ? map : k == 4 ? map2 : hmap, key = k < 4 ? k : 0;

		if (!KT_OK(t, bpf_map_lookup_elem_flags(fdm, &key, &v, BPF_F_LOCK), "final read"))
			break;
		kt_log(t, "element %d: a=%llu b=%llu want %ld", k, (unsigned long long)v.a,
		       (unsigned long long)v.b, want[k]);
		KT_EQ(t, v.a, want[k], "a");
		KT_EQ(t, v.b, want[k], "b");
	}
out:
	bpf_object__close(obj);
}

static void pair_storm(struct kt *t, const void *arg)
{
	storm(t, false);
}

static void harden_pair(struct kt *t, const void *arg)
{
	storm(t, true);
}

static void tail_pair(struct kt *t, const void *arg)
{
	struct bpf_object *obj = load(t, (const char *const[]){ "tail_pair", NULL });
	long runs = kt_scaled(100), per = runs * 10;
	int fd, jmp, map, badc, k, i;
	struct prog_runner r[4];
	pthread_t th[4];
	struct elem v;

	if (!obj)
		return;
	fd = obj_prog_fd(t, obj, "tail_pair");
	jmp = obj_map_fd(t, obj, "jmp");
	map = obj_map_fd(t, obj, "elems");
	badc = obj_map_fd(t, obj, "badc");
	if (fd < 0 || jmp < 0 ||
	    !KT_OK(t, bpf_map_update_elem(jmp, &(int){ 0 }, &fd, BPF_ANY), "jmp[0] = self"))
		goto out;
	KT_TRUE(t, pair_inline(t, fd), "tail_pair: the pair inline (kfunc calls on debug kernels)");
	for (i = 0; i < 4; i++) {
		r[i] = (struct prog_runner){ .prog_fd = fd, .runs = runs, .repeat = 10 };
		pthread_create(&th[i], NULL, prog_runner_thread, &r[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		KT_EQ(t, r[i].err, 0, "test_run");
		if (r[i].bad)
			kt_fail(t, "%ld bad runs, last retval %u", r[i].bad, r[i].bad_retval);
	}
	check_codes(t, badc);
	for (k = 2; k < 4; k++) {
		if (!KT_OK(t, bpf_map_lookup_elem_flags(map, &k, &v, BPF_F_LOCK), "final read"))
			break;
		kt_log(t, "element %d: a=%llu b=%llu, want 34 * %ld", k, (unsigned long long)v.a,
		       (unsigned long long)v.b, 4 * per);
		KT_EQ(t, v.a, 34 * 4 * per, "a");
		KT_EQ(t, v.b, 34 * 4 * per, "b");
	}
	bpf_map_delete_elem(jmp, &(int){ 0 });
out:
	bpf_object__close(obj);
}

/*
 * The hidden R2 of each bpf_spin_lock() call in the translated program: the
 * call follows a load of R2, a map (ld_imm64, src BPF_PSEUDO_MAP_FD) or 0
 * (mov r2, 0). Returns the number of such calls; *named counts those whose
 * R2 is a map.
 */
static int lock_calls(struct kt *t, int fd, int *named)
{
	struct bpf_insn insns[512];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), i, n;
	int calls = 0;

	info.xlated_prog_len = sizeof(insns);
	info.xlated_prog_insns = (__u64)(unsigned long)insns;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -1;
	n = info.xlated_prog_len / sizeof(insns[0]);
	for (i = 2; i < n; i++) {
		if (insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].src_reg)
			continue;
		if (insns[i - 2].code == (BPF_LD | BPF_IMM | BPF_DW) && insns[i - 2].dst_reg == 2) {
			kt_log(t, "insn %u: r2 = map (src %u, id %d), call", i, insns[i - 2].src_reg,
			       insns[i - 2].imm);
			*named += insns[i - 2].src_reg == BPF_PSEUDO_MAP_FD;
			calls++;
		} else if (insns[i - 1].code == (BPF_ALU64 | BPF_MOV | BPF_K) &&
			   insns[i - 1].dst_reg == 2) {
			kt_log(t, "insn %u: r2 = %d, call", i, insns[i - 1].imm);
			calls++;
		}
	}
	return calls;
}

static void two_maps_poison(struct kt *t, const void *arg)
{
	struct bpf_object *obj = load(t, (const char *const[]){ "two_maps", "loop_one_map", NULL });
	int fd, fd2, map, map2, named = 0, named2 = 0;
	long long c;

	if (!obj)
		return;
	fd = obj_prog_fd(t, obj, "two_maps");
	fd2 = obj_prog_fd(t, obj, "loop_one_map");
	map = obj_map_fd(t, obj, "elems");
	map2 = obj_map_fd(t, obj, "elems2");
	if (fd < 0 || fd2 < 0)
		goto out;
	KT_EQ(t, lock_calls(t, fd, &named), 1, "two_maps: one call site");
	KT_EQ(t, named, 0, "two_maps: the call site names no map");
	KT_EQ(t, lock_calls(t, fd2, &named2), 1, "loop_one_map: one call site");
	KT_EQ(t, named2, 1, "loop_one_map: the call site names its map");
	KT_EQ(t, prog_run_threads(t, fd, 4, kt_scaled(300), REPEAT, 0), 0, "two_maps runs");
	c = fdinfo_value(map, "lock_contended");
	kt_log(t, "two_maps on elems: elems lock_contended %lld, elems2 %lld", c,
	       fdinfo_value(map2, "lock_contended"));
	KT_EQ(t, c, 0, "a poisoned call site counts in no map");
	KT_EQ(t, prog_run_threads(t, fd2, 4, kt_scaled(300), REPEAT, 0), 0, "loop_one_map runs");
	kt_log(t, "loop_one_map: elems lock_contended %lld, elems2 %lld",
	       fdinfo_value(map, "lock_contended"), fdinfo_value(map2, "lock_contended"));
	/* contention itself depends on scheduling (0 on some TCG runs): not checked */
out:
	bpf_object__close(obj);
}

/*
 * fentry/fexit on queued_spin_lock_slowpath taking the pair of elements 0
 * and 1 while tc programs contend on them with inline pairs and single
 * locks, and a thread updates elems2[0] and helems[0] with BPF_F_LOCK.
 */
static void *update_locked(void *arg)
{
	struct reader *r = arg;
	struct elem v = {};

	while (!r->stop) {
		v.a = v.b = v.a + 1000;
		bpf_map_update_elem(r->map, &(int){ 0 }, &v, BPF_F_LOCK);
		bpf_map_update_elem(r->hmap, &(int){ 0 }, &v, BPF_F_LOCK | BPF_EXIST);
	}
	return NULL;
}

static void slowpath_tracer(struct kt *t, const void *arg)
{
	static const char *const progs[] = { "pair01", "pair10", "pair00", "single1",
					     "pair_maps_rev", "pair_hash", "fe_slow", "fx_slow",
					     NULL };
	/* elems[0] and elems[1] adds of the tc programs above, by thread */
	static const int adds[6] = { 0x3, 0x3, 0x1, 0x2, 0x1, 0x2 };
	struct bpf_link *l1 = NULL, *l2 = NULL;
	long runs = kt_scaled(200), want[2] = {};
	int map, map2, hmap, badc, tr, fd[6], i, k;
	struct bpf_prog_info info;
	__u32 len;
	pthread_t uth;
	struct reader up = {};
	struct bpf_object *obj = load(t, progs);
	struct elem v, zero = {};
	__u64 c[2] = {};

	if (!obj)
		return;
	map = obj_map_fd(t, obj, "elems");
	map2 = obj_map_fd(t, obj, "elems2");
	hmap = obj_map_fd(t, obj, "helems");
	badc = obj_map_fd(t, obj, "badc");
	tr = obj_map_fd(t, obj, "trcnt");
	if (!KT_OK(t, bpf_map_update_elem(hmap, &(int){ 0 }, &zero, BPF_ANY), "hash element"))
		goto out;
	l1 = bpf_program__attach(bpf_object__find_program_by_name(obj, "fe_slow"));
	l2 = bpf_program__attach(bpf_object__find_program_by_name(obj, "fx_slow"));
	if (!KT_TRUE(t, l1 && l2, "attach fentry/fexit queued_spin_lock_slowpath"))
		goto out;
	for (i = 0; i < 6; i++)
		if ((fd[i] = obj_prog_fd(t, obj, progs[i])) < 0)
			goto out;
	up.map = map2;
	up.hmap = hmap;
	pthread_create(&uth, NULL, update_locked, &up);
	run_programs(t, fd, progs, adds, 6, runs, want, 2);
	up.stop = 1;
	pthread_join(uth, NULL);
	bpf_link__destroy(l1);
	bpf_link__destroy(l2);
	l1 = l2 = NULL;
	for (k = 0; k < 2; k++)
		bpf_map_lookup_elem(tr, &k, &c[k]);
	for (k = 0; k < 2; k++) {
		int pfd = bpf_program__fd(bpf_object__find_program_by_name(obj, k ? "fx_slow" : "fe_slow"));

		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		bpf_obj_get_info_by_fd(pfd, &info, &len);
		kt_log(t, "%s: %llu runs, %llu misses (guard skips + recursion)", k ? "fexit" : "fentry",
		       (unsigned long long)c[k], (unsigned long long)info.recursion_misses);
	}
	check_codes(t, badc);
	for (k = 0; k < 2; k++) {
		if (!KT_OK(t, bpf_map_lookup_elem_flags(map, &k, &v, BPF_F_LOCK), "final read"))
			break;
		kt_log(t, "element %d: a=%llu b=%llu want %ld + %llu traced", k,
		       (unsigned long long)v.a, (unsigned long long)v.b, want[k],
		       (unsigned long long)(c[0] + c[1]));
		KT_EQ(t, v.a, want[k] + c[0] + c[1], "a");
		KT_EQ(t, v.b, want[k] + c[0] + c[1], "b");
	}
out:
	bpf_link__destroy(l1);
	bpf_link__destroy(l2);
	bpf_object__close(obj);
}

static const struct kt_case cases[] = {
	{ "slowpath_tracer", KT_BEYOND, slowpath_tracer, NULL, KT_ON_BASE("6.12", KT_BEYOND) },
	{ "pair_storm", KT_BEYOND, pair_storm, NULL, KT_ON_BASE("6.12", KT_BEYOND) },
	{ "tail_pair", KT_BEYOND, tail_pair, NULL, KT_ON_BASE("6.12", KT_BEYOND) },
	{ "harden_pair", KT_BEYOND, harden_pair, NULL, KT_ON_BASE("6.12", KT_BEYOND) },
	{ "two_maps_poison", KT_BEYOND, two_maps_poison, NULL, KT_ON_BASE("6.12", KT_BEYOND) },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "jit_pair", cases, KT_ARRAY_SIZE(cases));
}
