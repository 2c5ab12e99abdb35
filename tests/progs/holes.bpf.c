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

/*
 * bpf_loop() may run its callback any number of times, zero included,
 * but 6.1 verifies it once. A callback that moves pointers in its
 * caller's stack leaves the verifier believing in a layout the run does
 * not have (attacker review, P4 and P5).
 */
struct two_elems {
	struct elem *a;
	struct elem *b;
};

static long swap_elems(__u32 i, struct two_elems *c)
{
	struct elem *t = c->a;

	c->a = c->b;
	c->b = t;
	return 0;
}

/*
 * Two calls swap the pointers back: the verifier believes a is element
 * 1 and accepts lock(a), unlock(element 1); the run locks element 0 and
 * leaves it locked. Stock accepts it.
 */
SEC("tc") __beyond __failure __msg("a callback cannot store a pointer into its caller's stack")
__errno(EACCES)
int loop_swap_pointers(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1;
	struct elem *b, *e0 = bpf_map_lookup_elem(&amap, &k0);
	struct two_elems c;

	b = bpf_map_lookup_elem(&amap, &k1);
	if (!e0 || !b)
		return 0;
	c.a = e0;
	c.b = b;
	bpf_loop(2, swap_elems, &c, 0);
	bpf_spin_lock(&c.a->lock);
	bpf_spin_unlock(&b->lock);
	return 0;
}

static long copy_elem(__u32 i, struct two_elems *c)
{
	c->b = c->a;
	return 0;
}

/*
 * Zero calls leave b NULL where the verifier believes the callback
 * copied a: stock accepts it and locks address 4 (an oops).
 */
SEC("tc") __beyond __failure __msg("a callback cannot store a pointer into its caller's stack")
__errno(EACCES)
int loop_zero_calls(struct __sk_buff *skb)
{
	int k0 = 0;
	struct two_elems c;

	c.a = bpf_map_lookup_elem(&amap, &k0);
	if (!c.a)
		return 0;
	c.b = NULL;
	bpf_loop(skb->len & 1, copy_elem, &c, 0);
	bpf_spin_lock(&c.b->lock);
	bpf_spin_unlock(&c.b->lock);
	return 0;
}

static long lock_then_forget(__u32 i, struct two_elems *c)
{
	struct elem *e = c->a;

	bpf_spin_lock(&e->lock);
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	*(volatile long *)&c->a = 8;
	return 0;
}

/*
 * The second call finds the scalar 8 where the first (the only one the
 * verifier walked) found the element: stock accepts it and the second
 * run locks address 12.
 */
SEC("tc") __beyond __failure __msg("a callback cannot overwrite the pointer its caller spilled")
__errno(EACCES)
int loop_scalar_over_pointer(struct __sk_buff *skb)
{
	int k0 = 0;
	struct two_elems c = {};

	c.a = bpf_map_lookup_elem(&amap, &k0);
	if (!c.a)
		return 0;
	bpf_loop(2, lock_then_forget, &c, 0);
	return 0;
}

struct counter_ctx {
	struct elem *e;
	long sum;
};

static long lock_and_sum(__u32 i, struct counter_ctx *c)
{
	struct elem *e = c->e;

	bpf_spin_lock(&e->lock);
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	c->sum += i;
	return 0;
}

/*
 * What the rule keeps: a callback reads the caller's pointers, locks
 * through them and stores scalars into the caller's stack.
 */
SEC("tc") __success __retval(6)
int loop_reads_pointer_stores_scalar(struct __sk_buff *skb)
{
	int k0 = 3;
	struct counter_ctx c = {};

	c.e = bpf_map_lookup_elem(&amap, &k0);
	if (!c.e)
		return 0;
	bpf_loop(4, lock_and_sum, &c, 0);
	return c.sum;
}

static long zero_it(__u32 i, long *c)
{
	*c = 0;
	return 0;
}

/*
 * A scalar the callback rewrites steers a branch: the verifier believed
 * c == 0 after the call and never walked the return that keeps the lock;
 * bpf_loop(0, ...) leaves c == 1 and the program returns holding it
 * (attacker review S1). Stock accepts it.
 */
SEC("tc") __beyond __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int loop_scalar_hides_exit(struct __sk_buff *skb)
{
	int k0 = 0;
	long c = 1;
	struct elem *e;

	bpf_loop(0, zero_it, &c, 0);
	e = bpf_map_lookup_elem(&amap, &k0);
	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	if (*(volatile long *)&c)
		return 1;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/*
 * A scalar the callback rewrites moves the lock pointer: the verifier
 * believed off == 0 (lock element 0, unlock element 0); bpf_loop(0, ...)
 * leaves off == sizeof(struct elem): element 1 is locked and left so
 * (attacker review S2). Stock accepts it.
 */
SEC("tc") __beyond __failure __msg("bpf_spin_lock has to be at the constant offset")
__errno(EACCES)
int loop_scalar_moves_lock(struct __sk_buff *skb)
{
	int k0 = 0;
	long off = sizeof(struct elem);
	struct elem *e, *x;

	bpf_loop(0, zero_it, &off, 0);
	e = bpf_map_lookup_elem(&amap, &k0);
	if (!e)
		return 0;
	/* off is 0 or 16 at run time: the mask keeps the math bounded */
	x = (void *)e + (*(volatile long *)&off & sizeof(struct elem));
	bpf_spin_lock(&x->lock);
	bpf_spin_unlock(&e->lock);
	return 0;
}

static long build_dynptr(__u32 i, struct bpf_dynptr *d)
{
	int k0 = 0;
	struct elem *e = bpf_map_lookup_elem(&amap, &k0);

	if (e)
		bpf_dynptr_from_mem(&e->data, sizeof(e->data), 0, d);
	return 0;
}

/*
 * A dynptr is a pointer: one a callback builds in its caller's stack is
 * there after one run and not after zero (attacker review D1 forged one
 * over a lock word this way). Stock accepts it.
 */
SEC("tc") __beyond __failure __msg("a callback cannot create or release a dynptr")
__errno(EACCES)
int loop_builds_dynptr(struct __sk_buff *skb)
{
	struct bpf_dynptr d;

	bpf_loop(1, build_dynptr, &d, 0);
	return 0;
}
