// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier's rules for bpf_spin_lock, one program per rule. The seed's
 * eleven test_verifier cases come first (same behaviour, written in C),
 * then the restrictions listed in the seed's "bpf: introduce bpf_spin_lock".
 */
#include "bpflock.h"

struct elem {
	int cnt;
	struct bpf_spin_lock lock;
	int data[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct elem);
} hmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, struct elem);
} amap SEC(".maps");

struct plain {
	int a;
	int b;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct plain);
} nolock SEC(".maps");

static __always_inline struct elem *elem0(void)
{
	int key = 0;

	return bpf_map_lookup_elem(&amap, &key);
}

/* seed test1: lock, touch the value, unlock */
SEC("tc") __success __retval(0)
int lock_unlock(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* seed test2: a 4-byte load of the lock word */
SEC("tc") __failure __msg("bpf_spin_lock cannot be accessed directly by load/store") __errno(EACCES)
int load_lock_word(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	return *(volatile __u32 *)&e->lock;
}

/* seed test3: an 8-byte load that overlaps the lock from the field before */
SEC("tc") __failure __msg("bpf_spin_lock cannot be accessed directly by load/store") __errno(EACCES)
int load_overlapping_lock(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	return *(volatile __u64 *)&e->cnt != 0;
}

/* seed test4: a 1-byte load in the middle of the lock word */
SEC("tc") __failure __msg("bpf_spin_lock cannot be accessed directly by load/store") __errno(EACCES)
int load_lock_byte(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	return *((volatile __u8 *)&e->lock + 2);
}

/* a store into the lock word */
SEC("tc") __failure __msg("bpf_spin_lock cannot be accessed directly by load/store") __errno(EACCES)
int store_lock_word(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	*(volatile __u32 *)&e->lock = 0;
	return 0;
}

/*
 * seed test5: a helper call inside the locked region. Stock refuses every
 * helper call there; ours allows bpf_get_prandom_u32() (6.1: 0017, 6.12:
 * 0028; the refused helpers are in tests/progs/calls.bpf.c).
 */
SEC("tc") __beyond __success __retval(0) __on("6.12", "kind=beyond")
int helper_call_locked(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->cnt = bpf_get_prandom_u32();
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* seed test6: one path returns with the lock held */
SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int missing_unlock(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	if (e->cnt > 10)
		return 2;
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* seed test7 (6.12: misuse of the lock is EINVAL) */
SEC("tc") __failure __msg("bpf_spin_unlock without taking a lock") __errno(EACCES)
__on("6.12", "errno=EINVAL")
int unlock_without_lock(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* seed test8: the second lock call is refused as a call under the lock */
SEC("tc") __failure __msg("function calls are not allowed while holding a lock") __errno(EINVAL)
int double_lock(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	bpf_spin_lock(&e->lock);
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* seed test9: lock one element, unlock another */
SEC("tc") __failure __msg("bpf_spin_unlock of different lock") __errno(EACCES)
__on("6.12", "errno=EINVAL")
int unlock_other_elem(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1;
	struct elem *a, *b;

	a = bpf_map_lookup_elem(&hmap, &k0);
	b = bpf_map_lookup_elem(&hmap, &k1);
	if (!a || !b)
		return 1;
	bpf_spin_lock(&a->lock);
	bpf_spin_unlock(&b->lock);
	return 0;
}

static __noinline int take_lock(struct elem *e)
{
	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	return 1;
}

/*
 * seed test10: a subprogram returns with the lock held (6.12 checks the
 * lock at the main program's exit only: its caller unlocks, accepted)
 */
SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
__on("6.12", "success")
int subprog_keeps_lock(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	take_lock(e);
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* LLVM's intrinsic for BPF_LD | BPF_ABS | BPF_B */
unsigned long long load_byte(void *skb, unsigned long long off) asm("llvm.bpf.load.byte");

/* seed test11: LD_ABS under the lock */
SEC("tc") __failure __msg("BPF_LD_[ABS|IND] cannot be used inside bpf_spin_lock-ed region") __errno(EINVAL)
int ld_abs_locked(struct __sk_buff *skb)
{
	struct elem *e = elem0();
	int v;

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	v = load_byte(skb, 0);
	bpf_spin_unlock(&e->lock);
	return v;
}

static __noinline int add_one(int x)
{
	return x + 1;
}

/* a bpf-to-bpf call inside the locked region: static, so ours allows it */
SEC("tc") __beyond __success __retval(0)
__on("6.12", "kind=feature")
int subprog_call_locked(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->cnt = add_one(e->cnt);
	bpf_spin_unlock(&e->lock);
	return 0;
}

static __noinline int locked_inc(struct elem *e)
{
	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return 1;
}

/* lock and unlock inside one subprogram is fine */
SEC("tc") __success __retval(1)
int subprog_lock_unlock(struct __sk_buff *skb)
{
	return locked_inc(elem0());
}

/* the helper's argument must point exactly at the lock */
SEC("tc") __failure __msg("doesn't point to 'struct bpf_spin_lock'") __errno(EACCES)
__on("6.12", "errno=EINVAL")
int lock_wrong_offset(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_lock((void *)&e->data[0]);
	bpf_spin_unlock((void *)&e->data[0]);
	return 0;
}

/* ... at a constant offset */
SEC("tc") __failure __msg("bpf_spin_lock has to be at the constant offset") __errno(EACCES)
__on("6.12", "errno=EINVAL")
int lock_variable_offset(struct __sk_buff *skb)
{
	struct elem *e = elem0();
	__u32 off = skb->len & 4;

	if (!e)
		return 1;
	bpf_spin_lock((void *)e + off);
	bpf_spin_unlock((void *)e + off);
	return 0;
}

/* the map value must hold a lock */
SEC("tc") __failure __msg("map 'nolock' doesn't have 'struct bpf_spin_lock'") __errno(EACCES)
__on("6.12", "errno=EINVAL") __on("6.12", "msg=map 'nolock' has no valid bpf_spin_lock")
int map_without_lock(struct __sk_buff *skb)
{
	int key = 0;
	struct plain *p = bpf_map_lookup_elem(&nolock, &key);

	if (!p)
		return 1;
	bpf_spin_lock((void *)&p->b);
	bpf_spin_unlock((void *)&p->b);
	return 0;
}

/* not on the stack */
SEC("tc") __failure __msg("R1 type=fp expected=map_value") __errno(EACCES)
int lock_on_stack(struct __sk_buff *skb)
{
	struct bpf_spin_lock l = {};

	bpf_spin_lock(&l);
	bpf_spin_unlock(&l);
	return 0;
}

/* not in the packet */
SEC("tc") __failure __msg("helper access to the packet is not allowed") __errno(EACCES)
int lock_in_packet(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;

	if (data + 4 > end)
		return 1;
	bpf_spin_lock(data);
	bpf_spin_unlock(data);
	return 0;
}

/* not in the context */
SEC("tc") __failure __msg("R1 type=ctx expected=map_value") __errno(EACCES)
int lock_in_ctx(struct __sk_buff *skb)
{
	bpf_spin_lock((void *)skb);
	bpf_spin_unlock((void *)skb);
	return 0;
}

/* every path must unlock, including the early one */
SEC("tc") __success __retval(0)
int unlock_on_every_path(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	if (e->cnt > 1000000) {
		bpf_spin_unlock(&e->lock);
		return 2;
	}
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/* hash values work the same way as array values */
SEC("tc") __success __retval(0)
int hash_lock_unlock(struct __sk_buff *skb)
{
	struct elem init = {}, *e;
	int key = 3;

	e = bpf_map_lookup_elem(&hmap, &key);
	if (!e) {
		bpf_map_update_elem(&hmap, &key, &init, BPF_NOEXIST);
		e = bpf_map_lookup_elem(&hmap, &key);
		if (!e)
			return 1;
	}
	bpf_spin_lock(&e->lock);
	e->data[0] = e->data[1] + 1;
	bpf_spin_unlock(&e->lock);
	return 0;
}

/*
 * Program types stock refuses the lock map in (socket filter: "socket
 * filter progs cannot use bpf_spin_lock yet"; the others: "tracing progs
 * cannot use bpf_spin_lock yet"); ours accepts them (6.1: 0013, 6.12:
 * 0025). They run in tests/tracing.c.
 */
#define TYPE_ACCEPT(sec, name)						\
SEC(sec) __beyond __success __load_only __on("6.12", "kind=beyond")	\
int name(void *ctx)							\
{									\
	struct elem *e = elem0();					\
									\
	if (!e)								\
		return 0;						\
	bpf_spin_lock(&e->lock);					\
	e->cnt++;							\
	bpf_spin_unlock(&e->lock);					\
	return 0;							\
}

TYPE_ACCEPT("socket", type_socket_filter)
TYPE_ACCEPT("kprobe/do_nanosleep", type_kprobe)
TYPE_ACCEPT("tracepoint/syscalls/sys_enter_nanosleep", type_tracepoint)
TYPE_ACCEPT("perf_event", type_perf_event)
TYPE_ACCEPT("raw_tp/sys_enter", type_raw_tp)

/* Program types that may: they load and run. */
SEC("xdp") __success __retval(2)
int type_xdp(struct xdp_md *ctx)
{
	struct elem *e = elem0();

	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return XDP_PASS;
}

SEC("cgroup_skb/ingress") __success __retval(1)
int type_cgroup_skb(struct __sk_buff *skb)
{
	struct elem *e = elem0();

	if (!e)
		return 0;
	bpf_spin_lock(&e->lock);
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return 1;
}
