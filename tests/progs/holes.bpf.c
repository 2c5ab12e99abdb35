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
__on("6.12", "kind=feature")
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
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=function calls are not allowed while holding a lock")
__on("6.12", "kind=feature")
int cb_returns_holding(struct __sk_buff *skb)
{
	return bpf_for_each_map_elem(&amap, lock_and_return, NULL, 0);
}

static long unlock_only(struct bpf_map *map, int *key, struct elem *val, void *ctx)
{
	bpf_spin_unlock(&val->lock);
	return 0;
}

/* Releasing a lock the callback never took (6.12: lock misuse is EINVAL). */
SEC("tc") __failure __msg("bpf_spin_unlock without taking a lock") __errno(EACCES)
__on("6.12", "errno=EINVAL")
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
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=bpf_spin_unlock of different lock")
__on("6.12", "kind=feature")
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
 *
 * Ours verifies a callback whose runs are bounded at the call (bpf_loop()
 * with a count of at most 128, bpf_for_each_map_elem() on a small array,
 * bpf_find_vma()) run by run: each case below comes twice, with a
 * bounded count (the verifier sees what every run count leaves, the
 * _runs cases) and with a count above that bound, where the one pass for
 * any number of runs refuses pointer moves in the caller's stack.
 */
#define MANY 1000	/* above BPF_CB_UNROLL_MAX: one pass for any count */
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
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=bpf_spin_unlock of different lock")
__on("6.12", "kind=feature")
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
	bpf_loop(MANY, swap_elems, &c, 0);
	bpf_spin_lock(&c.a->lock);
	bpf_spin_unlock(&b->lock);
	return 0;
}

/* Run by run, the verifier sees the two swaps put a back: wrong unlock. */
SEC("tc") __beyond __failure __msg("bpf_spin_unlock of different lock") __errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=bpf_spin_unlock of different lock")
__on("6.12", "kind=feature")
int loop_swap_pointers_runs(struct __sk_buff *skb)
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

/*
 * One swap: a is element 1 and the program is right. 6.12's verifier
 * walks the callback until its states converge, so it sees the lock
 * taken on an element other than the one unlocked, and refuses.
 */
SEC("tc") __success __retval(0)
__on("6.12", "failure") __on("6.12", "errno=EINVAL")
__on("6.12", "msg=bpf_spin_unlock of different lock")
int loop_swap_once_runs(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1;
	struct elem *b, *e0 = bpf_map_lookup_elem(&amap, &k0);
	struct two_elems c;

	b = bpf_map_lookup_elem(&amap, &k1);
	if (!e0 || !b)
		return 0;
	c.a = e0;
	c.b = b;
	bpf_loop(1, swap_elems, &c, 0);
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
__on("6.12", "msg=R1 type=scalar expected=map_value")
__on("6.12", "kind=feature")
int loop_zero_calls(struct __sk_buff *skb)
{
	int k0 = 0;
	struct two_elems c;

	c.a = bpf_map_lookup_elem(&amap, &k0);
	if (!c.a)
		return 0;
	c.b = NULL;
	bpf_loop(skb->len & 1 ? MANY : 0, copy_elem, &c, 0);
	bpf_spin_lock(&c.b->lock);
	bpf_spin_unlock(&c.b->lock);
	return 0;
}

/* Run by run: after zero runs b is still NULL, and that path is walked. */
SEC("tc") __beyond __failure __msg("R1 type=scalar expected=map_value") __errno(EACCES)
__on("6.12", "kind=feature")
int loop_zero_calls_runs(struct __sk_buff *skb)
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
__on("6.12", "msg=R1 type=scalar expected=map_value")
__on("6.12", "kind=feature")
int loop_scalar_over_pointer(struct __sk_buff *skb)
{
	int k0 = 0;
	struct two_elems c = {};

	c.a = bpf_map_lookup_elem(&amap, &k0);
	if (!c.a)
		return 0;
	bpf_loop(MANY, lock_then_forget, &c, 0);
	return 0;
}

/* Run by run: the second run locks through the scalar 8. */
SEC("tc") __beyond __failure __msg("R1 type=scalar expected=map_value") __errno(EACCES)
__on("6.12", "kind=feature")
int loop_scalar_over_pointer_runs(struct __sk_buff *skb)
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
__on("6.12", "kind=feature")
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
 * (attacker review S2). Stock accepts it. Ours follows the zero runs
 * too, where off is still sizeof(struct elem).
 */
SEC("tc") __beyond __failure __msg("R1 off 20 doesn't point to 'struct bpf_spin_lock' at off 4")
__errno(EACCES)
__on("6.12", "errno=EINVAL")
__on("6.12", "msg=off 20 doesn't point to 'struct bpf_spin_lock' that is at 4")
__on("6.12", "kind=feature")
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
 *
 * Sound on 6.12: the zero-run path is walked, and a use refused there
 * (loop_builds_dynptr_runs). No lock there: baseline-6.12 loads it too.
 */
SEC("tc") __beyond __failure __msg("a callback cannot create or release a dynptr")
__errno(EACCES)
__on("6.12", "success") __on("6.12", "kind=common")
int loop_builds_dynptr(struct __sk_buff *skb)
{
	struct bpf_dynptr d;

	bpf_loop(MANY, build_dynptr, &d, 0);
	return 0;
}

/* Run by run: after zero runs there is no dynptr to read through. */
SEC("tc") __beyond __failure __msg("Expected an initialized dynptr") __errno(EINVAL)
__on("6.12", "kind=common")
int loop_builds_dynptr_runs(struct __sk_buff *skb)
{
	struct bpf_dynptr d;
	int buf;

	bpf_loop(skb->len & 1, build_dynptr, &d, 0);
	return bpf_dynptr_read(&buf, sizeof(buf), &d, 0, 0);
}

/*
 * Callbacks whose runs are not bounded at the call (a hash map's
 * elements may come and go while bpf_for_each_map_elem() walks them) are
 * verified in one pass for any number of runs: what they write in their
 * callers' stacks is forgotten around every run, and only that. The
 * verifier finds what they write as it goes, and verifies the program
 * again when it finds a slot it had kept.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct elem);
} hmap SEC(".maps");

struct scalars {
	long keep;	/* the callback never writes it */
	long out;	/* the callback writes it */
};

static long write_out(struct bpf_map *map, int *key, struct elem *val, struct scalars *c)
{
	c->out = 0;
	return 0;
}

/* out may be 1 (no element) or 0: the return holding the lock is walked. */
SEC("tc") __beyond __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
__on("6.12", "kind=feature")
int hash_cb_scalar_hides_exit(struct __sk_buff *skb)
{
	struct scalars c = { .keep = 0, .out = 1 };
	int k0 = 0;
	struct elem *e;

	bpf_for_each_map_elem(&hmap, write_out, &c, 0);
	e = bpf_map_lookup_elem(&amap, &k0);
	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	if (*(volatile long *)&c.out)
		return 1;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* keep is never written: still known 0, the return holding the lock is dead. */
SEC("tc") __success __retval(0)
int hash_cb_keeps_unwritten(struct __sk_buff *skb)
{
	struct scalars c = { .keep = 0, .out = 1 };
	int k0 = 0;
	struct elem *e;

	bpf_for_each_map_elem(&hmap, write_out, &c, 0);
	e = bpf_map_lookup_elem(&amap, &k0);
	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	if (*(volatile long *)&c.keep)
		return 1;
	bpf_spin_unlock(&e->lock);
	return 0;
}

static long read_into_out(struct bpf_map *map, int *key, struct elem *val, struct scalars *c)
{
	bpf_probe_read_kernel(&c->out, sizeof(c->out), val);
	return 0;
}

/* A helper's write into the caller's stack counts as the callback's. */
SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int hash_cb_helper_write_hides_exit(struct __sk_buff *skb)
{
	struct scalars c = { .keep = 0, .out = 0 };
	int k0 = 0;
	struct elem *e;

	bpf_for_each_map_elem(&hmap, read_into_out, &c, 0);
	e = bpf_map_lookup_elem(&amap, &k0);
	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	if (*(volatile long *)&c.out)
		return 1;
	bpf_spin_unlock(&e->lock);
	return 0;
}

static long swap_in_caller(struct bpf_map *map, int *key, struct elem *val,
			   struct two_elems *c)
{
	bpf_loop(1, swap_elems, c, 0);
	return 0;
}

/*
 * A bounded callback inside an unbounded one: the pointers it swaps lie
 * below the unbounded one, which may run any number of times.
 *
 * Sound on 6.12, which walks both callbacks to convergence: every path
 * locks and unlocks the same c.a.
 */
SEC("tc") __beyond __failure __msg("a callback cannot store a pointer into its caller's stack")
__errno(EACCES)
__on("6.12", "success") __on("6.12", "kind=feature")
int hash_cb_nested_swap(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1;
	struct two_elems c;

	c.a = bpf_map_lookup_elem(&amap, &k0);
	c.b = bpf_map_lookup_elem(&amap, &k1);
	if (!c.a || !c.b)
		return 0;
	bpf_for_each_map_elem(&hmap, swap_in_caller, &c, 0);
	bpf_spin_lock(&c.a->lock);
	bpf_spin_unlock(&c.a->lock);
	return 0;
}

static long count_elem(struct bpf_map *map, int *key, struct elem *val, long *n)
{
	(*n)++;
	return 0;
}

/*
 * A bounded loop whose counter lives on the stack and whose body walks a
 * hash map: the callback never writes the counter, so the loop stays
 * bounded (it was "infinite loop detected" while every scalar of the
 * caller was forgotten). No lock: the same on every kernel.
 */
SEC("tc") __common __success __retval(0)
int hash_cb_in_bounded_loop(struct __sk_buff *skb)
{
	volatile long i;
	long n = 0;

	for (i = 0; i < 4; i++)
		bpf_for_each_map_elem(&hmap, count_elem, &n, 0);
	return n;
}

static long leak_own_stack(__u32 i, long **slot)
{
	long local = 1;

	*(long *volatile *)slot = &local;
	return 0;
}

/*
 * A callback verified run by run stores pointers into its caller's
 * stack like any code, but not one into its own frame, which is gone
 * when the caller reads through it (the tree's rule for every call).
 */
SEC("tc") __common __failure __msg("cannot spill pointers to stack into stack frame of the caller")
__errno(EINVAL)
int loop_leaks_callee_stack(struct __sk_buff *skb)
{
	long *p = NULL;

	bpf_loop(1, leak_own_stack, &p, 0);
	if (p)
		return *p;
	return 0;
}

/*
 * A dynptr built on one path only: the path without it must not be
 * pruned against the path with it (the dynptr's slots are read).
 */
SEC("tc") __beyond __failure __msg("Expected an initialized dynptr") __errno(EINVAL)
__on("6.12", "kind=common")
int dynptr_maybe_uninit(struct __sk_buff *skb)
{
	int k0 = 0, buf;
	struct elem *e = bpf_map_lookup_elem(&amap, &k0);
	struct bpf_dynptr d;

	if (e && skb->len > 10)
		bpf_dynptr_from_mem(&e->data, sizeof(e->data), 0, &d);
	return bpf_dynptr_read(&buf, sizeof(buf), &d, 0, 0);
}
