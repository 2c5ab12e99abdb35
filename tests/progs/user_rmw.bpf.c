// SPDX-License-Identifier: GPL-2.0
/*
 * The programs that contend with user space's read-modify-write calls
 * (libbpf's locked_map, tests/user_rmw.c): each locks element 0 of its
 * map and adds 1 to a and to b together, and 1 to c, the count of its
 * runs. User space adds to a and b through locked_map__add(), so under
 * every lock a == b, and at the end a = runs + user adds.
 */
#include "bpflock.h"

struct rval {
	long a;
	struct bpf_spin_lock lock;
	long b;
	long c;			/* program runs, under the lock */
	long pad[4];		/* a value larger than one copy step */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, struct rval);
} rmw_array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct rval);
} rmw_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct rval);
} rmw_lru SEC(".maps");

static __always_inline int bump(void *map)
{
	__u32 key = 0;
	struct rval *v = bpf_map_lookup_elem(map, &key);

	if (!v)
		return 1;
	bpf_spin_lock(&v->lock);
	v->a++;
	v->b++;
	v->c++;
	bpf_spin_unlock(&v->lock);
	return 0;
}

/* run by tests/user_rmw.c */
SEC("tc") __success
int rmw_bump_array(struct __sk_buff *skb)
{
	return bump(&rmw_array);
}

/* run by tests/user_rmw.c; element 0 must exist */
SEC("tc") __load_only
int rmw_bump_hash(struct __sk_buff *skb)
{
	return bump(&rmw_hash);
}

/* run by tests/user_rmw.c; loads on ours only (stock: no LRU locks) */
SEC("tc") __beyond __load_only __on("6.12", "kind=beyond")
int rmw_bump_lru(struct __sk_buff *skb)
{
	return bump(&rmw_lru);
}
