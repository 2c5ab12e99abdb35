// SPDX-License-Identifier: GPL-2.0
/*
 * An attacker's review of the 6.12 series' 0010-0012: holes of stock
 * 6.12 that ours-6.12 now refuses (0013, 0014), and the sound programs
 * the review made sure still load. Every case is 6.12's only: on 6.1
 * callbacks may not keep pointers in their caller's stack and tracing
 * programs take locks (behind the guard), so the rules differ there.
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
} lmap612 SEC(".maps");

struct inner612 {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct elem);
} inner612 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, int);
	__array(values, struct inner612);
} outer612 SEC(".maps") = {
	.values = { [0] = &inner612 },
};

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
} jmp612 SEC(".maps");

struct save_ctx {
	struct elem *saved;
};

/* run 2 locks run 1's value (element 0) and unlocks its own (element 1) */
static long lock_saved_unlock_own(struct bpf_map *map, int *key, struct elem *val,
				  struct save_ctx *c)
{
	struct elem *s = c->saved;

	if (s) {
		bpf_spin_lock(&s->lock);
		bpf_spin_unlock(&val->lock);
		return 1;
	}
	c->saved = val;
	return 0;
}

/*
 * Every value bpf_for_each_map_elem() hands its callback had id 0, which
 * names one lock: element 0 was left locked. Each run's value is a lock
 * of its own since 0013.
 */
SEC("tc") __beyond __failure __errno(EINVAL) __msg("bpf_spin_unlock of different lock")
__only_on("6.12") __on("6.12", "kind=beyond")
int cb_values_two_runs(struct __sk_buff *skb)
{
	struct save_ctx c = { .saved = 0 };

	bpf_for_each_map_elem(&lmap612, lock_saved_unlock_own, &c, 0);
	return 0;
}

struct nest_ctx {
	struct elem *outer;
};

/* locks the outer callback's value, unlocks its own */
static long inner_cb(struct bpf_map *map, int *key, struct elem *val, struct nest_ctx *c)
{
	bpf_spin_lock(&c->outer->lock);
	bpf_spin_unlock(&val->lock);
	return 1;
}

static long outer_cb(struct bpf_map *map, int *key, struct elem *val, void *unused)
{
	struct nest_ctx c = { .outer = val };

	bpf_for_each_map_elem(&lmap612, inner_cb, &c, 0);
	return 1;
}

SEC("tc") __beyond __failure __errno(EINVAL) __msg("bpf_spin_unlock of different lock")
__only_on("6.12") __on("6.12", "kind=beyond")
int cb_values_nested(struct __sk_buff *skb)
{
	bpf_for_each_map_elem(&lmap612, outer_cb, NULL, 0);
	return 0;
}

/* each callback locks and unlocks its own value: still loads */
static long inner_cb_own(struct bpf_map *map, int *key, struct elem *val, struct nest_ctx *c)
{
	bpf_spin_lock(&val->lock);
	val->cnt++;
	bpf_spin_unlock(&val->lock);
	return 0;
}

static long outer_cb_own(struct bpf_map *map, int *key, struct elem *val, void *unused)
{
	struct nest_ctx c = { .outer = val };

	bpf_for_each_map_elem(&lmap612, inner_cb_own, &c, 0);
	return 0;
}

SEC("tc") __success __retval(0)
__only_on("6.12") __on("6.12", "kind=feature")
int cb_values_nested_own(struct __sk_buff *skb)
{
	bpf_for_each_map_elem(&lmap612, outer_cb_own, NULL, 0);
	return 0;
}

#define INNER_LOCK_BODY						\
	int k = 0;						\
	struct elem *e;						\
	void *in = bpf_map_lookup_elem(&outer612, &k);		\
								\
	if (!in)						\
		return 0;					\
	e = bpf_map_lookup_elem(in, &k);			\
	if (!e)							\
		return 0;					\
	bpf_spin_lock(&e->lock);				\
	e->cnt++;						\
	bpf_spin_unlock(&e->lock);				\
	return 0

/*
 * The rule that kept programs an NMI may run off lock words was checked
 * on the maps a program names: an inner map's lock was reached (0014).
 * Since 0025 these types may lock, guarded at their entry (tests/guard.c):
 * ours-6.12 loads them, as stock-6.12 does without the guard.
 */
SEC("kprobe/do_nanosleep") __load_only __success
__only_on("6.12") __on("6.12", "kind=feature")
int kprobe_inner_map_lock(void *ctx)
{
	INNER_LOCK_BODY;
}

SEC("socket") __load_only __success
__only_on("6.12") __on("6.12", "kind=feature")
int socket_inner_map_lock(void *ctx)
{
	INNER_LOCK_BODY;
}

/* the same lock from a tc program: allowed */
SEC("tc") __success __retval(0)
__only_on("6.12") __on("6.12", "kind=feature")
int tc_inner_map_lock(struct __sk_buff *skb)
{
	INNER_LOCK_BODY;
}

struct tctx {
	struct __sk_buff *skb;
};

/*
 * A callback that only tail-calls. A bpf_loop() callback that is inlined
 * runs it correctly on stock; called from a helper, as a for_each
 * callback is, the tail call dereferences a NULL tail call counter and
 * oopses, on stock-6.12 as well (which is why this one is only loaded).
 * Ours refuses tail calls in every callback (0015). (0011's first
 * version failed on the first with EFAULT, "BUG regs 1".)
 */
static long tail_only(__u32 i, struct tctx *c)
{
	bpf_tail_call(c->skb, &jmp612, 0);
	return 0;
}

SEC("tc") __beyond __failure __errno(EINVAL)
__msg("tail_call cannot be used in a callback")
__only_on("6.12") __on("6.12", "kind=beyond")
int loop_cb_only_tail_calls(struct __sk_buff *skb)
{
	struct tctx c = { .skb = skb };

	bpf_loop(1, tail_only, &c, 0);
	return 0;
}

static long each_tail_only(struct bpf_map *map, int *key, struct elem *val, struct tctx *c)
{
	bpf_tail_call(c->skb, &jmp612, 0);
	return 0;
}

SEC("tc") __beyond __load_only __failure __errno(EINVAL)
__msg("tail_call cannot be used in a callback")
__only_on("6.12") __on("6.12", "kind=beyond")
int each_cb_only_tail_calls(struct __sk_buff *skb)
{
	struct tctx c = { .skb = skb };

	bpf_for_each_map_elem(&lmap612, each_tail_only, &c, 0);
	return 0;
}
