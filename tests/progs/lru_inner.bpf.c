// SPDX-License-Identifier: GPL-2.0
/*
 * Locks in LRU hash maps and in inner maps (tests/lru_inner.c). Stock 6.1
 * refuses both: a lock in an LRU hash map, and a map holding a lock as
 * the inner map of a map-in-map. Stock 6.12 takes the inner map and still
 * refuses the LRU lock.
 */
#include "bpflock.h"

#define LRU_KEYS 1024

struct lelem {
	long a;
	struct bpf_spin_lock lock;
	long b;			/* equal to a under the lock */
};

/* Much smaller than the key space: inserts evict all the time. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct lelem);
} lru SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct lelem);
} lru_nc SEC(".maps");

static __always_inline int lru_bump(void *map)
{
	__u32 key = bpf_get_prandom_u32() % LRU_KEYS;
	struct lelem *e = bpf_map_lookup_elem(map, &key);

	if (!e) {
		struct lelem zero = {};

		/* may race with another inserter: then use its element */
		bpf_map_update_elem(map, &key, &zero, BPF_NOEXIST);
		e = bpf_map_lookup_elem(map, &key);
		if (!e)
			return 0;
	}
	bpf_spin_lock(&e->lock);
	e->a++;
	e->b++;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* run by tests/lru_inner.c; loads on ours only, both bases */
SEC("tc") __beyond __success __on("6.12", "kind=beyond")
int lru_churn(struct __sk_buff *skb)
{
	return lru_bump(&lru);
}

/* run by tests/lru_inner.c; loads on ours only, both bases */
SEC("tc") __beyond __success __on("6.12", "kind=beyond")
int lru_nc_churn(struct __sk_buff *skb)
{
	return lru_bump(&lru_nc);
}

/* Inner maps: the template and two maps swapped under the programs. */
struct inner_t {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct lelem);
};

struct inner_t inner_a SEC(".maps");
struct inner_t inner_b SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, int);
	__array(values, struct inner_t);
} outer SEC(".maps") = {
	.values = { [0] = &inner_a },
};

/* Same size, lock elsewhere or none: must not replace inner_a. */
struct other_elem {
	struct bpf_spin_lock lock;
	int pad;
	long a;
	long b;
};

struct plain_elem {
	long a;
	long c;
	long b;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct other_elem);
} inner_other SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct plain_elem);
} inner_plain SEC(".maps");

/* run by tests/lru_inner.c; loads on ours only */
SEC("tc") __beyond __success
__on("6.12", "kind=feature")
int inner_bump(struct __sk_buff *skb)
{
	int k = 0;
	struct lelem *e;
	void *inner;

	inner = bpf_map_lookup_elem(&outer, &k);
	if (!inner)
		return 1;
	e = bpf_map_lookup_elem(inner, &k);
	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->a++;
	e->b++;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* The verifier checks lock arguments against the template. */
SEC("tc") __beyond __failure __msg("bpf_spin_lock cannot be accessed directly by load/store")
__errno(EACCES)
__on("6.12", "kind=feature")
int inner_store_lock_word(struct __sk_buff *skb)
{
	int k = 0;
	struct lelem *e;
	void *inner;

	inner = bpf_map_lookup_elem(&outer, &k);
	if (!inner)
		return 1;
	e = bpf_map_lookup_elem(inner, &k);
	if (!e)
		return 1;
	*(int *)&e->lock = 0;
	return 0;
}

SEC("tc") __beyond __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
__on("6.12", "kind=feature")
int inner_exit_holding(struct __sk_buff *skb)
{
	int k = 0;
	struct lelem *e;
	void *inner;

	inner = bpf_map_lookup_elem(&outer, &k);
	if (!inner)
		return 1;
	e = bpf_map_lookup_elem(inner, &k);
	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	return 0;
}
