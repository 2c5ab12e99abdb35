// SPDX-License-Identifier: GPL-2.0
/*
 * Soundness holes that stock 6.1 leaves open, as programs with their
 * verdicts: callbacks handed a map value (which element is it?). The
 * pruning cases need exact control of registers and are hand-assembled
 * in tests/holes.c; the iterator programs are in holes_iter.bpf.c.
 */
#include "bpflock.h"

struct bpf_map;

struct elem {
	int cnt;
	struct bpf_spin_lock lock;
	int data[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct elem);
} amap SEC(".maps");

static long lock_and_count(struct bpf_map *map, int *key, struct elem *val, void *ctx)
{
	bpf_spin_lock(&val->lock);
	val->cnt++;
	bpf_spin_unlock(&val->lock);
	return 0;
}

/*
 * A callback locks the element it is handed: the value has a lock
 * identity of its own, like a lookup's. Stock gives it none and refuses
 * the program ("verifier internal error" on ours before the fix).
 */
SEC("tc") __beyond __success __retval(4)
int cb_lock_unlock(struct __sk_buff *skb)
{
	return bpf_for_each_map_elem(&amap, lock_and_count, NULL, 0);
}

static long lock_and_return(struct bpf_map *map, int *key, struct elem *val, void *ctx)
{
	bpf_spin_lock(&val->lock);
	val->cnt++;
	return 0;
}

/* A callback that returns holding its element's lock: stock accepts it. */
SEC("tc") __beyond __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int cb_returns_holding(struct __sk_buff *skb)
{
	return bpf_for_each_map_elem(&amap, lock_and_return, NULL, 0);
}

static long unlock_only(struct bpf_map *map, int *key, struct elem *val, void *ctx)
{
	bpf_spin_unlock(&val->lock);
	return 0;
}

/* Releasing a lock the callback never took. */
SEC("tc") __failure __msg("bpf_spin_unlock without taking a lock") __errno(EACCES)
int cb_unlock_not_taken(struct __sk_buff *skb)
{
	return bpf_for_each_map_elem(&amap, unlock_only, NULL, 0);
}

static long lock_other(struct bpf_map *map, int *key, struct elem *val, void *ctx)
{
	struct elem *other;
	int k = 0;

	other = bpf_map_lookup_elem(&amap, &k);
	if (!other)
		return 1;
	bpf_spin_lock(&val->lock);
	bpf_spin_unlock(&other->lock);
	return 0;
}

/* Locking the handed element and releasing another one. */
SEC("tc") __beyond __failure __msg("bpf_spin_unlock of different lock") __errno(EACCES)
int cb_unlock_other(struct __sk_buff *skb)
{
	return bpf_for_each_map_elem(&amap, lock_other, NULL, 0);
}

__attribute__((noinline)) int global_write(struct elem *e)
{
	if (!e)
		return 0;
	e->data[0] = 1;
	return 0;
}

/*
 * A global function is verified once, for any memory of its argument's
 * size, and may write all of it: the caller may not hand it a value
 * whose lock word lies inside that size.
 */
SEC("tc") __failure __msg("bpf_spin_lock cannot be accessed directly by load/store")
__msg("Caller passes invalid args into func#1") __errno(EINVAL)
int global_fn_gets_lock(struct __sk_buff *skb)
{
	int k = 0;
	struct elem *e = bpf_map_lookup_elem(&amap, &k);

	return e ? global_write(e) : 0;
}
