// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input, each with the errno it must get and no splat: BPF_F_LOCK
 * with flags it does not go with on every command that takes it,
 * BPF_F_LOCK on maps of every type without a lock, and seeded random
 * mutations of accepted lock programs fed to the verifier (none may
 * crash or hang the kernel; every accepted mutant runs and leaves the
 * lock free).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "insn.h"
#include "progs.h"

struct elem {
	int cnt;
	struct bpf_spin_lock lock;
	int data[2];
};

static struct bpf_object *lock_maps(struct kt *t)
{
	struct embedded_obj o = EMBEDDED_OBJ(verifier);

	return obj_load(t, &o, NULL);
}

/* Every command that takes BPF_F_LOCK refuses it with flags it does not go with. */
static void flag_combinations(struct kt *t, const void *arg)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bad_elem, .elem_flags = BPF_F_LOCK | (1ULL << 3));
	LIBBPF_OPTS(bpf_map_batch_opts, bad_flags, .elem_flags = BPF_F_LOCK, .flags = 1);
	struct bpf_object *obj = lock_maps(t);
	struct elem v = {}, vals[4];
	int keys[4], key = 0, hash, array;
	__u32 count, batch;

	if (!obj)
		return;
	hash = obj_map_fd(t, obj, "hmap");
	array = obj_map_fd(t, obj, "amap");
	KT_OK(t, bpf_map_update_elem(hash, &key, &v, 0), "seed element");
	KT_ERR(t, bpf_map_lookup_elem_flags(hash, &key, &v, BPF_F_LOCK | BPF_EXIST), EINVAL,
	       "lookup BPF_F_LOCK | BPF_EXIST");
	KT_ERR(t, bpf_map_lookup_elem_flags(array, &key, &v, BPF_F_LOCK | (1ULL << 8)), EINVAL,
	       "lookup BPF_F_LOCK | bit 8");
	KT_ERR(t, bpf_map_update_elem(hash, &key, &v, BPF_F_LOCK | BPF_EXIST | BPF_NOEXIST),
	       EINVAL, "hash update BPF_F_LOCK | BPF_EXIST | BPF_NOEXIST");
	KT_ERR(t, bpf_map_update_elem(array, &key, &v, BPF_F_LOCK | (1ULL << 4)), EINVAL,
	       "array update BPF_F_LOCK | bit 4");
	KT_ERR(t, bpf_map_update_elem(array, &key, &v, BPF_F_LOCK | BPF_NOEXIST), EEXIST,
	       "array update BPF_F_LOCK | BPF_NOEXIST");
	KT_ERR(t, bpf_map_lookup_and_delete_elem_flags(hash, &key, &v, BPF_F_LOCK | (1ULL << 3)),
	       EINVAL, "lookup_and_delete BPF_F_LOCK | bit 3");
	count = 4;
	KT_ERR(t, bpf_map_lookup_batch(hash, NULL, &batch, keys, vals, &count, &bad_elem), EINVAL,
	       "hash lookup_batch elem_flags BPF_F_LOCK | bit 3");
	count = 4;
	KT_ERR(t, bpf_map_lookup_batch(array, NULL, &batch, keys, vals, &count, &bad_elem), EINVAL,
	       "array lookup_batch elem_flags BPF_F_LOCK | bit 3");
	count = 4;
	KT_ERR(t, bpf_map_lookup_batch(hash, NULL, &batch, keys, vals, &count, &bad_flags), EINVAL,
	       "hash lookup_batch with batch flags");
	count = 1;
	KT_ERR(t, bpf_map_update_batch(array, &key, &v, &count, &bad_elem), EINVAL,
	       "array update_batch elem_flags BPF_F_LOCK | bit 3");
	count = 1;
	KT_ERR(t, bpf_map_delete_batch(hash, &key, &count, &bad_elem), EINVAL,
	       "hash delete_batch elem_flags BPF_F_LOCK | bit 3");
	bpf_object__close(obj);
}

struct nolock_type {
	enum bpf_map_type type;
	const char *name;
	__u32 key_size;
};

/* BPF_F_LOCK on a map whose value has no lock: EINVAL, for every type. */
static void flag_on_lockless_maps(struct kt *t, const void *arg)
{
	static const struct nolock_type types[] = {
		{ BPF_MAP_TYPE_HASH, "hash", 4 },
		{ BPF_MAP_TYPE_ARRAY, "array", 4 },
		{ BPF_MAP_TYPE_PERCPU_HASH, "percpu_hash", 4 },
		{ BPF_MAP_TYPE_PERCPU_ARRAY, "percpu_array", 4 },
		{ BPF_MAP_TYPE_LRU_HASH, "lru_hash", 4 },
		{ BPF_MAP_TYPE_LRU_PERCPU_HASH, "lru_percpu_hash", 4 },
		{ BPF_MAP_TYPE_QUEUE, "queue", 0 },
		{ BPF_MAP_TYPE_STACK, "stack", 0 },
	};
	char value[8 * 64] = {};
	unsigned int i;
	int key = 0;

	for (i = 0; i < KT_ARRAY_SIZE(types); i++) {
		const struct nolock_type *ty = &types[i];
		char what[96];
		int fd;

		fd = bpf_map_create(ty->type, ty->name, ty->key_size, 8, 4, NULL);
		if (!KT_OK(t, fd, ty->name))
			continue;
		if (ty->key_size)
			bpf_map_update_elem(fd, &key, value, 0);
		snprintf(what, sizeof(what), "%s: update with BPF_F_LOCK", ty->name);
		KT_ERR(t, bpf_map_update_elem(fd, ty->key_size ? &key : NULL, value, BPF_F_LOCK),
		       EINVAL, what);
		snprintf(what, sizeof(what), "%s: lookup with BPF_F_LOCK", ty->name);
		KT_ERR(t, bpf_map_lookup_elem_flags(fd, ty->key_size ? &key : NULL, value,
						    BPF_F_LOCK), EINVAL, what);
		snprintf(what, sizeof(what), "%s: lookup_and_delete with BPF_F_LOCK", ty->name);
		KT_ERR(t, bpf_map_lookup_and_delete_elem_flags(fd, ty->key_size ? &key : NULL,
							       value, BPF_F_LOCK), EINVAL, what);
		close(fd);
	}
}

/* xorshift64*: reproducible from the seed alone */
static __u64 rnd(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

#define MAX_INSNS 32

/* Change one instruction at random (never the second half of ld_imm64). */
static void mutate(struct bpf_insn *p, int n, __u64 *s)
{
	int i = rnd(s) % n;

	if (i > 0 && p[i - 1].code == (BPF_LD | BPF_DW | BPF_IMM))
		i--;
	switch (rnd(s) % 7) {
	case 0:
		p[i].code ^= 1 << (rnd(s) % 8);
		break;
	case 1:
		p[i].dst_reg = rnd(s) % 11;
		break;
	case 2:
		p[i].src_reg = rnd(s) % 11;
		break;
	case 3:
		p[i].off += (int)(rnd(s) % 17) - 8;
		break;
	case 4:
		p[i].imm += (int)(rnd(s) % 17) - 8;
		break;
	case 5: {	/* swap with another instruction */
		int j = rnd(s) % n;
		struct bpf_insn tmp;

		if (p[i].code == (BPF_LD | BPF_DW | BPF_IMM) ||
		    p[j].code == (BPF_LD | BPF_DW | BPF_IMM) ||
		    (j > 0 && p[j - 1].code == (BPF_LD | BPF_DW | BPF_IMM)))
			break;
		tmp = p[i];
		p[i] = p[j];
		p[j] = tmp;
		break;
	}
	default:	/* a no-op in its place */
		if (p[i].code != (BPF_LD | BPF_DW | BPF_IMM))
			p[i] = (struct bpf_insn){ BPF_JMP | BPF_JA, 0, 0, 0, 0 };
		break;
	}
}

/*
 * Seeded mutants of accepted programs. Invariants: every load returns
 * (the kernel neither crashes nor hangs: the harness's timeout and the
 * console scan watch that), every accepted mutant runs, and after each
 * run user space can still take the element's lock (BPF_F_LOCK lookup):
 * no accepted program leaves a lock held.
 */
static void verifier_mutants(struct kt *t, const void *arg)
{
	const char *seed_env = getenv("BPFLOCK_FUZZ_SEED");
	__u64 seed = seed_env ? strtoull(seed_env, NULL, 0) : 1, s = seed;
	long n = kt_scaled(3000), i, accepted = 0, eacces = 0, einval = 0, other = 0;
	struct bpf_object *obj = lock_maps(t);
	int maps[2], key = 0;
	struct elem v = {};

	if (!obj)
		return;
	maps[0] = obj_map_fd(t, obj, "amap");
	maps[1] = obj_map_fd(t, obj, "hmap");
	bpf_map_update_elem(maps[1], &key, &v, 0);
	for (i = 0; i < n && !t->failed; i++) {
		int map = maps[i & 1];
		struct bpf_insn base[] = LOCK_PROG(map, 4);
		struct bpf_insn calls[] = LOCK_CALLS_PROG(map, 4);
		struct bpf_insn p[MAX_INSNS];
		int cnt, k, fd;
		__u32 retval;

		/* every other pair of mutants starts from calls under the lock */
		if (i & 2) {
			cnt = KT_ARRAY_SIZE(calls);
			memcpy(p, calls, sizeof(calls));
		} else {
			cnt = KT_ARRAY_SIZE(base);
			memcpy(p, base, sizeof(base));
		}
		for (k = 0; k < 1 + (int)(rnd(&s) % 3); k++)
			mutate(p, cnt, &s);
		fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "mutant", "GPL", p, cnt, NULL);
		if (fd < 0) {
			if (errno == EACCES)
				eacces++;
			else if (errno == EINVAL)
				einval++;
			else
				other++;
			continue;
		}
		accepted++;
		if (prog_run(fd, 1, &retval))
			kt_fail(t, "mutant %ld (seed %llu) was accepted but does not run: %s",
				i, (unsigned long long)seed, strerror(errno));
		/* hangs here if the mutant left the lock held */
		if (bpf_map_lookup_elem_flags(map, &key, &v, BPF_F_LOCK) && errno != ENOENT &&
		    errno != EINVAL)
			kt_fail(t, "BPF_F_LOCK lookup after mutant %ld: %s", i, strerror(errno));
		close(fd);
	}
	kt_log(t, "seed %llu: %ld mutants, %ld accepted and run, rejected: %ld EACCES, "
	       "%ld EINVAL, %ld other", (unsigned long long)seed, n, accepted, eacces, einval,
	       other);
	bpf_object__close(obj);
}

static const struct kt_case cases[] = {
	{ "flag_combinations", KT_FEATURE, flag_combinations },
	{ "flag_on_lockless_maps", KT_COMMON, flag_on_lockless_maps },
	{ "verifier_mutants", KT_COMMON, verifier_mutants },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "bad_input", cases, KT_ARRAY_SIZE(cases));
}
