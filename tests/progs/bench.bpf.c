// SPDX-License-Identifier: GPL-2.0
/*
 * Programs for the benchmarks (bench.c): PAIRS lock/unlock pairs per run
 * on one shared element, on a per-CPU element, or the same work without
 * the lock as the floor, or with only the atomic and the release store.
 */
#include "bpflock.h"

#define PAIRS 64
#define ELEMS 8

struct elem {
	struct bpf_spin_lock lock;
	__u32 pad0;
	__u64 cnt;
	__u64 pad[6];	/* one cache line per element */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ELEMS);
	__type(key, int);
	__type(value, struct elem);
} elems SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ELEMS);
	__type(key, int);
	__type(value, struct elem);
} helems SEC(".maps");

static __always_inline int pairs(int key)
{
	struct elem *e = bpf_map_lookup_elem(&elems, &key);
	int i;

	if (!e)
		return 1;
	for (i = 0; i < PAIRS; i++) {
		bpf_spin_lock(&e->lock);
		e->cnt++;
		bpf_spin_unlock(&e->lock);
	}
	return 0;
}

SEC("tc")
int lock_shared(struct __sk_buff *skb)
{
	return pairs(0);
}

SEC("tc")
int lock_distinct(struct __sk_buff *skb)
{
	return pairs(bpf_get_smp_processor_id() % ELEMS);
}

SEC("tc")
int nolock(struct __sk_buff *skb)
{
	int key = 0, i;
	struct elem *e = bpf_map_lookup_elem(&elems, &key);

	if (!e)
		return 1;
	for (i = 0; i < PAIRS; i++)
		*(volatile __u64 *)&e->cnt += 1;
	return 0;
}

/*
 * The limit: the cheapest correct sequence on the same element, the
 * atomic and the release store alone (pad0 as the word), with no
 * interrupt save and restore and no region mark. Not a lock a BPF program
 * could be given: an interrupt or NMI program taking the same word on
 * this CPU would spin forever. Uncontended here, so never held when tried.
 */
SEC("tc")
int bare_atomic(struct __sk_buff *skb)
{
	int key = 0, i;
	struct elem *e = bpf_map_lookup_elem(&elems, &key);

	if (!e)
		return 1;
	for (i = 0; i < PAIRS; i++) {
		if (__sync_val_compare_and_swap(&e->pad0, 0, 1))
			return 2;
		e->cnt++;
		/* release: on x86-64 a plain store orders after the loads and stores before it */
		*(volatile __u32 *)&e->pad0 = 0;
	}
	return 0;
}

/* Writes the hash element under its lock, for the syscall rows. */
SEC("tc")
int hash_writer(struct __sk_buff *skb)
{
	int key = 0;
	struct elem *e = bpf_map_lookup_elem(&helems, &key);

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->cnt++;
	e->pad[0] = e->cnt;
	bpf_spin_unlock(&e->lock);
	return pairs(0);
}

/* weak: the object loads without them on stock (the pair row is ours only) */
extern void bpf_spin_lock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym __weak;
extern void bpf_spin_unlock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym __weak;

/* Two elements updated together: one pair lock, or two single locks. */
SEC("tc")
int lock_pair(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1, i;
	struct elem *a = bpf_map_lookup_elem(&elems, &k0);
	struct elem *b = bpf_map_lookup_elem(&elems, &k1);

	if (!a || !b)
		return 1;
	for (i = 0; i < PAIRS; i++) {
		bpf_spin_lock_pair(&a->lock, &b->lock);
		a->cnt++;
		b->cnt++;
		bpf_spin_unlock_pair(&a->lock, &b->lock);
	}
	return 0;
}

SEC("tc")
int lock_two_singles(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1, i;
	struct elem *a = bpf_map_lookup_elem(&elems, &k0);
	struct elem *b = bpf_map_lookup_elem(&elems, &k1);

	if (!a || !b)
		return 1;
	for (i = 0; i < PAIRS; i++) {
		bpf_spin_lock(&a->lock);
		a->cnt++;
		bpf_spin_unlock(&a->lock);
		bpf_spin_lock(&b->lock);
		b->cnt++;
		bpf_spin_unlock(&b->lock);
	}
	return 0;
}

/*
 * A typical per-packet critical section, PAIRS times per run: look the
 * flow up, lock it, update its counters and last-seen fields, unlock.
 */
static __always_inline int flow_update(struct __sk_buff *skb, int i)
{
	int key = i % ELEMS;
	struct elem *e = bpf_map_lookup_elem(&elems, &key);

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->cnt++;
	e->pad[0] += skb->len;
	e->pad[1] = skb->protocol;
	if (e->pad[2] < skb->len)
		e->pad[2] = skb->len;
	bpf_spin_unlock(&e->lock);
	return 0;
}

SEC("tc")
int packet_section(struct __sk_buff *skb)
{
	int i;

	for (i = 0; i < PAIRS; i++)
		if (flow_update(skb, i))
			return 1;
	return 0;
}
