// SPDX-License-Identifier: GPL-2.0
/*
 * Programs for tests/jit_pair.c: the x86-64 JIT's inline pair, its slow
 * paths and the lock call's map record, as an attacker would use them.
 *
 * Every element is {a, lock, b}; each program adds one to a and b of the
 * elements it holds and checks a == b while it holds them (a torn
 * element inside a region means two CPUs were inside it). Values kept
 * live across the lock calls (callee-saved registers and stack slots)
 * are checked after the unlock: the inline pair and its slow-path calls
 * must leave R6-R9 and the stack alone.
 */
#include "bpflock.h"

struct elem {
	__u64 a;
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 b;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct elem);
} elems SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct elem);
} elems2 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, int);
	__type(value, struct elem);
} helems SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, int);
} jmp SEC(".maps");

/* runs that saw something wrong, by code: 1 lookup, 2 registers, 3 torn, 4 call */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, int);
	__type(value, __u64);
} badc SEC(".maps");

static __noinline int fin(int code)
{
	__u64 *c;

	if (!code)
		return 0;
	c = bpf_map_lookup_elem(&badc, &code);
	if (c)
		__sync_fetch_and_add(c, 1);
	return code;
}

extern void bpf_spin_lock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym;
extern void bpf_spin_unlock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym;

#define opaque(x) asm volatile("" : "+r"(x))

static __always_inline struct elem *get(void *map, int k)
{
	return bpf_map_lookup_elem(map, &k);
}

static __always_inline int add_check(struct elem *e)
{
	int torn = e->a != e->b;

	e->a++;
	e->b++;
	return torn;
}

/*
 * The pair of keys ka, kb, released in the order ua/ub (0: as taken, 1:
 * reversed), with four random values live across the region.
 */
static __always_inline int pair_body(void *map, int ka, int kb, int rev)
{
	struct elem *x = get(map, ka), *y = get(map, kb);
	__u64 r1 = bpf_get_prandom_u32(), r2 = bpf_get_prandom_u32();
	__u64 r3 = bpf_get_prandom_u32(), r4 = bpf_get_prandom_u32();
	volatile __u64 chk;
	int torn;

	if (!x || !y)
		return 1;
	chk = r1 + 3 * r2 + 5 * r3 + 7 * r4;
	opaque(r1);
	opaque(r2);
	opaque(r3);
	opaque(r4);
	bpf_spin_lock_pair(&x->lock, &y->lock);
	torn = add_check(x);
	if (ka != kb)
		torn |= add_check(y);
	if (rev)
		bpf_spin_unlock_pair(&y->lock, &x->lock);
	else
		bpf_spin_unlock_pair(&x->lock, &y->lock);
	opaque(r1);
	opaque(r2);
	opaque(r3);
	opaque(r4);
	if (r1 + 3 * r2 + 5 * r3 + 7 * r4 != chk)
		return 2;
	return torn ? 3 : 0;
}

SEC("tc") int pair01(struct __sk_buff *skb) { return fin(pair_body(&elems, 0, 1, 1)); }
SEC("tc") int pair10(struct __sk_buff *skb) { return fin(pair_body(&elems, 1, 0, 0)); }
SEC("tc") int pair12(struct __sk_buff *skb) { return fin(pair_body(&elems, 1, 2, 0)); }
SEC("tc") int pair20(struct __sk_buff *skb) { return fin(pair_body(&elems, 2, 0, 1)); }

/* One element twice, through two lookups (two ids, one word). */
SEC("tc")
int pair00(struct __sk_buff *skb)
{
	struct elem *x = get(&elems, 0), *y = get(&elems, 0);
	__u64 r1 = bpf_get_prandom_u32(), r2 = bpf_get_prandom_u32();
	volatile __u64 chk;
	int torn;

	if (!x || !y)
		return 1;
	chk = r1 ^ (r2 << 7);
	opaque(r1);
	opaque(r2);
	bpf_spin_lock_pair(&x->lock, &y->lock);
	torn = add_check(x);
	bpf_spin_unlock_pair(&y->lock, &x->lock);
	opaque(r1);
	opaque(r2);
	if ((r1 ^ (r2 << 7)) != chk)
		return fin(2);
	return fin(torn ? 3 : 0);
}

/* Single locks on the same elements (the inline single lock). */
SEC("tc")
int single1(struct __sk_buff *skb)
{
	struct elem *x = get(&elems, 1);
	int torn;

	if (!x)
		return 1;
	bpf_spin_lock(&x->lock);
	torn = add_check(x);
	bpf_spin_unlock(&x->lock);
	return fin(torn ? 3 : 0);
}

/* Elements of two maps in one pair (address order across maps). */
SEC("tc")
int pair_maps(struct __sk_buff *skb)
{
	struct elem *x = get(&elems2, 0), *y = get(&elems, 0);
	int torn;

	if (!x || !y)
		return 1;
	bpf_spin_lock_pair(&x->lock, &y->lock);
	torn = add_check(x) | add_check(y);
	bpf_spin_unlock_pair(&x->lock, &y->lock);
	return fin(torn ? 3 : 0);
}

SEC("tc")
int pair_maps_rev(struct __sk_buff *skb)
{
	struct elem *x = get(&elems, 0), *y = get(&elems2, 0);
	int torn;

	if (!x || !y)
		return 1;
	bpf_spin_lock_pair(&x->lock, &y->lock);
	torn = add_check(x) | add_check(y);
	bpf_spin_unlock_pair(&y->lock, &x->lock);
	return fin(torn ? 3 : 0);
}

/* A hash element and an array element. */
SEC("tc")
int pair_hash(struct __sk_buff *skb)
{
	int k = 0;
	struct elem *x = bpf_map_lookup_elem(&helems, &k), *y = get(&elems, 1);
	int torn;

	if (!x || !y)
		return 1;
	bpf_spin_lock_pair(&x->lock, &y->lock);
	torn = add_check(x) | add_check(y);
	bpf_spin_unlock_pair(&x->lock, &y->lock);
	return fin(torn ? 3 : 0);
}

/*
 * tail_call_reachable: the main program takes the pair, calls a static
 * subprogram that takes it again in the other order and then tail calls
 * the main program (jmp[0]). Each execution adds one to elements 2 and 3;
 * a run is 1 + 33 executions if the tail call count survives the inline
 * pair (which clobbers rax, and emits no RESTORE_TAIL_CALL_CNT).
 */
static __noinline int sub_tail(struct __sk_buff *skb)
{
	struct elem *x = get(&elems, 3), *y = get(&elems, 2);
	__u64 r1 = bpf_get_prandom_u32();
	volatile __u64 chk = r1;
	int torn;

	if (!x || !y)
		return 1;
	opaque(r1);
	bpf_spin_lock_pair(&x->lock, &y->lock);
	torn = x->a != x->b || y->a != y->b;
	bpf_spin_unlock_pair(&x->lock, &y->lock);
	if (r1 != chk)
		return fin(2);
	if (torn)
		return fin(3);
	bpf_tail_call(skb, &jmp, 0);
	return 0;
}

static __noinline int sub_plain(int v)
{
	return v + 1;
}

SEC("tc")
int tail_pair(struct __sk_buff *skb)
{
	struct elem *x = get(&elems, 2), *y = get(&elems, 3);
	__u64 r1 = bpf_get_prandom_u32();
	volatile __u64 chk = r1;
	int torn, ret;

	if (!x || !y)
		return 1;
	opaque(r1);
	bpf_spin_lock_pair(&x->lock, &y->lock);
	torn = add_check(x) | add_check(y);
	bpf_spin_unlock_pair(&y->lock, &x->lock);
	/* a bpf2bpf call right after the inline pair: rax is the tail call count */
	ret = sub_plain(torn);
	if (ret != 1 + torn)
		return fin(4);
	ret = sub_tail(skb);
	if (r1 != chk)
		return fin(2);
	return ret ? ret : fin(torn ? 3 : 0);
}

/*
 * 0031: one bpf_spin_lock() call site that locks elements of two maps
 * (the map chosen by the packet's length): the record must be poisoned,
 * the hidden R2 NULL, no counter of either map touched.
 */
SEC("tc")
int two_maps(struct __sk_buff *skb)
{
	void *map = skb->len & 1 ? (void *)&elems2 : (void *)&elems;
	struct elem *x;
	int k = 1, torn;

	x = bpf_map_lookup_elem(map, &k);
	if (!x)
		return 1;
	bpf_spin_lock(&x->lock);
	torn = add_check(x);
	bpf_spin_unlock(&x->lock);
	return fin(torn ? 3 : 0);
}

/* The same call site in a loop, one map: visited many times, recorded once. */
SEC("tc")
int loop_one_map(struct __sk_buff *skb)
{
	int i, torn = 0;

#pragma clang loop unroll(disable)
	for (i = 0; i < 4; i++) {
		struct elem *x = get(&elems2, i & 1);

		if (!x)
			return 1;
		bpf_spin_lock(&x->lock);
		torn |= add_check(x);
		bpf_spin_unlock(&x->lock);
	}
	return fin(torn ? 3 : 0);
}

/*
 * A program inside the pair's slow path: fentry and fexit of
 * queued_spin_lock_slowpath(), which bpf_lock_pair_wait(),
 * bpf_lock_word_wait() (and the working tree's bpf_lock_pair_wait_hi())
 * reach with a word held or being waited for. Each run takes the pair of
 * elements 0 and 1 and adds to both; trcnt[0] counts its runs. Without
 * the guard, a CPU spinning (fentry) or holding (fexit) inside its inline
 * pair would wait here for a word it holds.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, __u64);
} trcnt SEC(".maps");

static __always_inline int traced_pair(int idx)
{
	struct elem *x = get(&elems, 0), *y = get(&elems, 1);
	__u64 *c = bpf_map_lookup_elem(&trcnt, &idx);
	int torn;

	if (!x || !y || !c)
		return 0;
	bpf_spin_lock_pair(&y->lock, &x->lock);
	torn = add_check(x) | add_check(y);
	bpf_spin_unlock_pair(&x->lock, &y->lock);
	__sync_fetch_and_add(c, 1);
	fin(torn ? 3 : 0);
	return 0;
}

SEC("fentry/queued_spin_lock_slowpath")
int fe_slow(void *ctx)
{
	return traced_pair(0);
}

SEC("fexit/queued_spin_lock_slowpath")
int fx_slow(void *ctx)
{
	return traced_pair(1);
}
