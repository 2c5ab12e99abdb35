// SPDX-License-Identifier: GPL-2.0
/*
 * BPF_F_LOCK from user space: lookup and update of hash, array and cgroup
 * storage elements under their lock, the flag's rules, and the seed's
 * consistency test (readers never see a half-written element).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "progs.h"

#define VAR_NUM 16

struct hmap_elem {
	struct bpf_spin_lock lock;
	int var[VAR_NUM];
};

static void fill(struct hmap_elem *e, __u32 lockword, int v)
{
	int i;

	e->lock.val = lockword;
	for (i = 0; i < VAR_NUM; i++)
		e->var[i] = v;
}

static bool uniform(const struct hmap_elem *e)
{
	int i;

	for (i = 1; i < VAR_NUM; i++)
		if (e->var[i] != e->var[0])
			return false;
	return true;
}

static struct bpf_object *open_user_lock(struct kt *t, const char *prog)
{
	struct embedded_obj o = EMBEDDED_OBJ(user_lock);

	return obj_load(t, &o, (const char *const[]){ prog, NULL });
}

/*
 * Update and look up one element with BPF_F_LOCK: the data round-trips,
 * the lock word always reads 0 and a written lock word is ignored, so a
 * program can still take the lock afterwards (a clobbered lock word would
 * hang it).
 */
static void roundtrip(struct kt *t, struct bpf_object *obj, int map,
		      const void *key, bool can_create)
{
	__u64 flags[] = { BPF_F_LOCK, 0 };
	struct hmap_elem in, out;
	unsigned int i;
	int prog = obj_prog_fd(t, obj, "write_uniform");

	for (i = 0; i < KT_ARRAY_SIZE(flags); i++) {
		fill(&in, 0xdeadbeef, 42 + i);
		if (!KT_OK(t, bpf_map_update_elem(map, key, &in, flags[i] | (can_create ? 0 : BPF_EXIST)),
			   flags[i] ? "update with BPF_F_LOCK" : "plain update"))
			return;
		memset(&out, 0xff, sizeof(out));
		if (!KT_OK(t, bpf_map_lookup_elem_flags(map, key, &out, BPF_F_LOCK),
			   "lookup with BPF_F_LOCK"))
			return;
		KT_EQ(t, out.var[0], 42 + i, "value read back");
		KT_TRUE(t, uniform(&out), "all 16 ints read back");
		KT_EQ(t, out.lock.val, 0, "lock word as read with BPF_F_LOCK");
		memset(&out, 0xff, sizeof(out));
		if (KT_OK(t, bpf_map_lookup_elem(map, key, &out), "plain lookup"))
			KT_EQ(t, out.lock.val, 0, "lock word as read without the flag");
	}
	/* The lock must still work after the writes above. */
	if (prog >= 0)
		KT_OK(t, prog_run(prog, 10, NULL), "program taking the lock after the updates");
}

static void hash_flag_lock(struct kt *t, const void *arg)
{
	struct bpf_object *obj = open_user_lock(t, "write_uniform");
	int key = 0;

	if (obj)
		roundtrip(t, obj, obj_map_fd(t, obj, "hash_map"), &key, true);
	bpf_object__close(obj);
}

static void array_flag_lock(struct kt *t, const void *arg)
{
	struct bpf_object *obj = open_user_lock(t, "write_uniform");
	int key = 0;

	if (obj)
		roundtrip(t, obj, obj_map_fd(t, obj, "array_map"), &key, true);
	bpf_object__close(obj);
}

/* cgroup storage exists while its program is attached to a cgroup. */
static void cgroup_storage_flag_lock(struct kt *t, const void *arg)
{
	const char *dir = "/sys/fs/cgroup/bpflock-user-lock";
	struct bpf_cgroup_storage_key key = { .attach_type = BPF_CGROUP_INET_INGRESS };
	struct hmap_elem in, out;
	struct bpf_object *obj;
	struct stat st;
	int cg, prog, map;

	obj = open_user_lock(t, "fill_cg_storage");
	if (!obj)
		return;
	mkdir(dir, 0755);
	cg = open(dir, O_RDONLY | O_DIRECTORY);
	if (!KT_OK(t, cg, "open cgroup") || !KT_OK(t, fstat(cg, &st), "stat cgroup"))
		goto out;
	key.cgroup_inode_id = st.st_ino;
	prog = obj_prog_fd(t, obj, "fill_cg_storage");
	map = obj_map_fd(t, obj, "cg_storage");
	if (prog < 0 || map < 0 ||
	    !KT_OK(t, bpf_prog_attach(prog, cg, BPF_CGROUP_INET_INGRESS, 0), "attach"))
		goto out;
	fill(&in, 0xdeadbeef, 1234);
	if (KT_OK(t, bpf_map_update_elem(map, &key, &in, BPF_F_LOCK), "update with BPF_F_LOCK") &&
	    KT_OK(t, bpf_map_lookup_elem_flags(map, &key, &out, BPF_F_LOCK), "lookup with BPF_F_LOCK")) {
		KT_EQ(t, out.var[VAR_NUM - 1], 1234, "value read back");
		KT_EQ(t, out.lock.val, 0, "lock word");
	}
	KT_ERR(t, bpf_map_update_elem(map, &key, &in, BPF_F_LOCK | BPF_NOEXIST), EINVAL,
	       "BPF_F_LOCK | BPF_NOEXIST on cgroup storage");
	bpf_prog_detach2(prog, cg, BPF_CGROUP_INET_INGRESS);
out:
	if (cg >= 0)
		close(cg);
	rmdir(dir);
	bpf_object__close(obj);
}

/* The flag needs a lock in the value; unknown flags are refused too. */
static void flag_rules(struct kt *t, const void *arg)
{
	struct bpf_object *obj = open_user_lock(t, NULL);	/* maps only */
	struct hmap_elem v = {};
	int key = 0, plain, hash;

	if (!obj)
		return;
	plain = obj_map_fd(t, obj, "plain_hash");
	hash = obj_map_fd(t, obj, "hash_map");
	KT_ERR(t, bpf_map_update_elem(plain, &key, v.var, BPF_F_LOCK), EINVAL,
	       "update with BPF_F_LOCK, value without a lock");
	KT_OK(t, bpf_map_update_elem(plain, &key, v.var, 0), "plain update");
	KT_ERR(t, bpf_map_lookup_elem_flags(plain, &key, v.var, BPF_F_LOCK), EINVAL,
	       "lookup with BPF_F_LOCK, value without a lock");
	KT_ERR(t, bpf_map_lookup_elem_flags(hash, &key, &v, 1ULL << 3), EINVAL,
	       "lookup with an unknown flag");
	KT_ERR(t, bpf_map_update_elem(hash, &key, &v, 1ULL << 3), EINVAL,
	       "update with an unknown flag");
	bpf_object__close(obj);
}

/* BPF_F_LOCK combined with BPF_EXIST / BPF_NOEXIST on a hash. */
static void hash_exist_noexist(struct kt *t, const void *arg)
{
	struct bpf_object *obj = open_user_lock(t, "write_uniform");
	struct hmap_elem v, out;
	int key = 0, map;

	if (!obj)
		return;
	map = obj_map_fd(t, obj, "hash_map");
	fill(&v, 0, 1);
	KT_ERR(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK | BPF_EXIST), ENOENT,
	       "BPF_F_LOCK | BPF_EXIST on a missing key");
	KT_OK(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK | BPF_NOEXIST),
	      "BPF_F_LOCK | BPF_NOEXIST creates");
	KT_ERR(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK | BPF_NOEXIST), EEXIST,
	       "BPF_F_LOCK | BPF_NOEXIST on an existing key");
	fill(&v, 0, 2);
	KT_OK(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK | BPF_EXIST),
	      "BPF_F_LOCK | BPF_EXIST updates in place");
	if (KT_OK(t, bpf_map_lookup_elem_flags(map, &key, &out, BPF_F_LOCK), "lookup"))
		KT_EQ(t, out.var[3], 2, "value after the in-place update");
	KT_ERR(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK | BPF_EXIST | BPF_NOEXIST),
	       EINVAL, "BPF_EXIST | BPF_NOEXIST | BPF_F_LOCK");
	key = 1;	/* max_entries is 1: a second key does not fit */
	KT_ERR(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK), E2BIG,
	       "BPF_F_LOCK create in a full map");
	bpf_object__close(obj);
}

struct consistency {
	int prog;
	int hash;
	int array;
	long rounds;
	__u64 flags;
	atomic_int writers_left;
	long torn;		/* non-uniform reads seen by one reader */
	long reads;
	int err;
};

static void *writer(void *arg)
{
	struct consistency *c = arg;
	long i;

	for (i = 0; i < c->rounds && !c->err; i++)
		if (prog_run(c->prog, 1, NULL))
			c->err = errno;
	atomic_fetch_sub(&c->writers_left, 1);
	return NULL;
}

static void *reader(void *arg)
{
	struct consistency *c = arg, *me = malloc(sizeof(*me));
	struct hmap_elem v;
	int key = 0, fds[2] = { c->hash, c->array };
	long i;

	memset(me, 0, sizeof(*me));
	for (i = 0; i < c->rounds; i++) {
		int fd = fds[i & 1];

		if (bpf_map_lookup_elem_flags(fd, &key, &v, c->flags)) {
			me->err = errno;
			break;
		}
		me->reads++;
		if (!uniform(&v) || v.lock.val)
			me->torn++;
	}
	return me;
}

/* 4 writer threads and 2 reader threads; returns torn reads seen. */
static long run_consistency(struct kt *t, __u64 flags, long rounds)
{
	struct bpf_object *obj = open_user_lock(t, "write_uniform");
	struct consistency c = { .rounds = rounds, .flags = flags };
	pthread_t w[4], r[2];
	struct hmap_elem zero = {};
	long torn = 0, reads = 0;
	int i, key = 0;

	if (!obj)
		return -1;
	c.prog = obj_prog_fd(t, obj, "write_uniform");
	c.hash = obj_map_fd(t, obj, "hash_map");
	c.array = obj_map_fd(t, obj, "array_map");
	if (c.prog < 0 || c.hash < 0 ||
	    !KT_OK(t, bpf_map_update_elem(c.hash, &key, &zero, 0), "seed the hash element"))
		goto out;
	atomic_init(&c.writers_left, 4);
	for (i = 0; i < 4; i++)
		pthread_create(&w[i], NULL, writer, &c);
	for (i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, reader, &c);
	for (i = 0; i < 2; i++) {
		struct consistency *res;

		pthread_join(r[i], (void **)&res);
		if (res->err)
			kt_fail(t, "reader %d: lookup failed: %s", i, strerror(res->err));
		torn += res->torn;
		reads += res->reads;
		free(res);
	}
	for (i = 0; i < 4; i++)
		pthread_join(w[i], NULL);
	if (c.err)
		kt_fail(t, "writer: test_run failed: %s", strerror(c.err));
	kt_log(t, "%ld reads%s, %ld torn", reads, flags ? " with BPF_F_LOCK" : " without the flag", torn);
out:
	bpf_object__close(obj);
	return torn;
}

/*
 * Invariant: a reader using BPF_F_LOCK never sees a value whose 16 ints
 * differ, while 4 threads rewrite the element under the lock.
 */
static void consistency_locked(struct kt *t, const void *arg)
{
	long torn = run_consistency(t, BPF_F_LOCK, kt_scaled(10000));

	KT_EQ(t, torn, 0, "torn reads with BPF_F_LOCK");
}

/*
 * The same readers without the flag: not a pass/fail check (tearing is
 * timing-dependent), it shows the reader above can see tearing at all.
 */
static void consistency_unlocked_report(struct kt *t, const void *arg)
{
	run_consistency(t, 0, kt_scaled(10000));
}

static const struct kt_case cases[] = {
	{ "hash_flag_lock", KT_FEATURE, hash_flag_lock },
	{ "array_flag_lock", KT_FEATURE, array_flag_lock },
	{ "cgroup_storage_flag_lock", KT_FEATURE, cgroup_storage_flag_lock },
	{ "flag_rules", KT_COMMON, flag_rules },
	{ "hash_exist_noexist", KT_FEATURE, hash_exist_noexist },
	{ "consistency_locked", KT_FEATURE, consistency_locked },
	{ "consistency_unlocked_report", KT_FEATURE, consistency_unlocked_report },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "user_lock", cases, KT_ARRAY_SIZE(cases));
}
