// SPDX-License-Identifier: GPL-2.0
/*
 * Calls under the lock (tests/calls.c): static subprograms and the
 * helpers that cannot sleep, take no lock and run in bounded time are
 * allowed on ours; stock 6.1 allows no call but bpf_spin_unlock(), stock
 * 6.12 static subprograms and the graph kfuncs, no other helper.
 * Every allowed program increments the element's counter exactly once
 * under the lock, so tests/calls.c runs them on every vCPU and checks the
 * count.
 */
#include "bpflock.h"

struct celem {
	long cnt;
	struct bpf_spin_lock lock;
	int pad;
	__u64 seen;		/* what the call returned */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, struct celem);
} cmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, __u64);
} chash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, __u64);
} clru SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, __u64);
} cpcpu SEC(".maps");

struct inner_arr {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, __u64);
} cinner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, int);
	__array(values, struct inner_arr);
} couter SEC(".maps") = {
	.values = { [0] = &cinner },
};

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, int);
} cjmp SEC(".maps");

static __always_inline struct celem *elem0(void)
{
	int k = 0;

	return bpf_map_lookup_elem(&cmap, &k);
}

/* Each allowed program: lock, count, call, record, unlock. */
#define UNDER_LOCK(name, call)						\
SEC("tc") __beyond __success __retval(0) __on("6.12", "kind=beyond")	\
int name(struct __sk_buff *skb)						\
{									\
	struct celem *e = elem0();					\
									\
	if (!e)								\
		return 1;						\
	bpf_spin_lock(&e->lock);					\
	e->cnt++;							\
	e->seen = (call);						\
	bpf_spin_unlock(&e->lock);					\
	return 0;							\
}

static __always_inline __u64 lookup_in(void *map)
{
	int k = 0;
	__u64 *v = bpf_map_lookup_elem(map, &k);

	return v ? *v + 1 : 0;
}

UNDER_LOCK(call_ktime_get_ns, bpf_ktime_get_ns())
UNDER_LOCK(call_ktime_get_boot_ns, bpf_ktime_get_boot_ns())
UNDER_LOCK(call_get_smp_processor_id, bpf_get_smp_processor_id())
UNDER_LOCK(call_get_numa_node_id, bpf_get_numa_node_id())
UNDER_LOCK(call_get_prandom_u32, bpf_get_prandom_u32())
UNDER_LOCK(call_lookup_array, lookup_in(&cmap))
UNDER_LOCK(call_lookup_hash, lookup_in(&chash))
UNDER_LOCK(call_lookup_lru_hash, lookup_in(&clru))
UNDER_LOCK(call_lookup_percpu_array, lookup_in(&cpcpu))

/* Works on the caller's element, under the caller's lock. */
static __attribute__((noinline)) __u64 add_and_stamp(struct celem *e)
{
	e->cnt += 2;
	return bpf_ktime_get_ns();
}

SEC("tc") __beyond __success __retval(0) __on("6.12", "kind=beyond")
int call_static_subprog(struct __sk_buff *skb)
{
	struct celem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->seen = add_and_stamp(e);
	e->cnt--;		/* one increment per run in all */
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* Called without a lock, it takes and releases one itself (stock too). */
static __attribute__((noinline)) int lock_inside(struct celem *e)
{
	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return 0;
}

SEC("tc") __success __retval(0)
int subprog_takes_own_lock(struct __sk_buff *skb)
{
	return lock_inside(elem0());
}

/* --- what stays refused --- */

#define REFUSED_UNDER_LOCK(name, stmt, m)				\
SEC("tc") __beyond __failure __msg(m) __errno(EINVAL)			\
__on("6.12", "kind=beyond")						\
int name(struct __sk_buff *skb)						\
{									\
	struct celem *e = elem0();					\
									\
	if (!e)								\
		return 1;						\
	bpf_spin_lock(&e->lock);					\
	stmt;								\
	bpf_spin_unlock(&e->lock);					\
	return 0;							\
}

static long nop_cb(__u32 i, void *ctx)
{
	return 0;
}

REFUSED_UNDER_LOCK(refuse_map_update, ({ int k = 1; __u64 v = 0;
	bpf_map_update_elem(&chash, &k, &v, 0); }),
	"bpf_map_update_elem#2 is not one of")
REFUSED_UNDER_LOCK(refuse_map_delete, ({ int k = 1; bpf_map_delete_elem(&chash, &k); }),
	"bpf_map_delete_elem#3 is not one of")
REFUSED_UNDER_LOCK(refuse_other_helper, e->seen = bpf_get_hash_recalc(skb),
	"bpf_get_hash_recalc#34 is not one of")
REFUSED_UNDER_LOCK(refuse_tail_call, bpf_tail_call(skb, &cjmp, 0),
	"bpf_tail_call#12 is not one of")
REFUSED_UNDER_LOCK(refuse_lookup_map_of_maps, e->seen = lookup_in(&couter),
	"bpf_map_lookup_elem#1 is not one of")
REFUSED_UNDER_LOCK(refuse_bpf_loop, bpf_loop(2, nop_cb, NULL, 0),
	"runs a callback any number of times")

__attribute__((noinline)) int global_add(struct __sk_buff *skb)
{
	return skb ? skb->len : 0;
}

/* 6.12's stock words, and its stock refuses it too */
SEC("tc") __beyond __failure __msg("is verified without the caller's lock; make it static")
__errno(EINVAL) __on("6.12", "msg=use static function instead") __on("6.12", "kind=feature")
int refuse_global_subprog(struct __sk_buff *skb)
{
	struct celem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->seen = global_add(skb);
	bpf_spin_unlock(&e->lock);
	return 0;
}

static __attribute__((noinline)) int unlock_for_caller(struct celem *e)
{
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* 6.12 lets a subprogram release its caller's lock, stock and ours alike */
SEC("tc") __beyond __failure __msg("a subprogram may not release its caller's lock")
__errno(EACCES) __on("6.12", "success") __on("6.12", "kind=feature")
int refuse_subprog_unlocks_caller(struct __sk_buff *skb)
{
	struct celem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	return unlock_for_caller(e);
}

static __attribute__((noinline)) int lock_and_leave(struct celem *e)
{
	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	return 0;
}

/*
 * A subprogram returns holding the lock it took: stock refuses it too
 * (6.12 checks the lock at the main program's exit only: accepted).
 */
SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
__on("6.12", "success")
int refuse_subprog_exit_holding(struct __sk_buff *skb)
{
	struct celem *e = elem0();
	int r = lock_and_leave(e);

	if (e)
		bpf_spin_unlock(&e->lock);
	return r;
}
