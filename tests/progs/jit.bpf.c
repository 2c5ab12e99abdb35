// SPDX-License-Identifier: GPL-2.0
/*
 * Programs for tests/jit.c: elements {a, lock, b}; every run adds one to
 * a and b of an element under its lock, so a == b in every locked read and
 * both equal the number of runs that added to it at the end, whichever
 * path (the x86-64 JIT's inline lock or pair, the helper, the kfunc) each
 * run took.
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
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, struct elem);
} elems SEC(".maps");

SEC("tc")
int bump(struct __sk_buff *skb)
{
	int key = 0;
	struct elem *e = bpf_map_lookup_elem(&elems, &key);

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->a++;
	e->b++;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* weak: the object loads without them on stock (the pair cases are ours only) */
extern void bpf_spin_lock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym __weak;
extern void bpf_spin_unlock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym __weak;

static __always_inline void add(struct elem *e)
{
	e->a++;
	e->b++;
}

/*
 * Elements 0 and 1 under one pair lock, released in the other order: the
 * x86-64 JIT's inline pair on ours. Every run adds one to a and b of both.
 */
SEC("tc")
int bump_pair(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1;
	struct elem *e0 = bpf_map_lookup_elem(&elems, &k0);
	struct elem *e1 = bpf_map_lookup_elem(&elems, &k1);

	if (!e0 || !e1)
		return 1;
	bpf_spin_lock_pair(&e0->lock, &e1->lock);
	add(e0);
	add(e1);
	bpf_spin_unlock_pair(&e1->lock, &e0->lock);
	return 0;
}

/* The pair of one element with itself: its word is taken and released once. */
SEC("tc")
int bump_pair_same(struct __sk_buff *skb)
{
	int k0 = 0;
	struct elem *e0 = bpf_map_lookup_elem(&elems, &k0);

	if (!e0)
		return 1;
	bpf_spin_lock_pair(&e0->lock, &e0->lock);
	add(e0);
	bpf_spin_unlock_pair(&e0->lock, &e0->lock);
	return 0;
}

/* Both elements, one single lock each: the copy that runs interpreted. */
SEC("tc")
int bump_both(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1;
	struct elem *e0 = bpf_map_lookup_elem(&elems, &k0);
	struct elem *e1 = bpf_map_lookup_elem(&elems, &k1);

	if (!e0 || !e1)
		return 1;
	bpf_spin_lock(&e1->lock);
	add(e1);
	bpf_spin_unlock(&e1->lock);
	bpf_spin_lock(&e0->lock);
	add(e0);
	bpf_spin_unlock(&e0->lock);
	return 0;
}
