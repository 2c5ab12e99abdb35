// SPDX-License-Identifier: GPL-2.0
/*
 * Two locks at once: bpf_spin_lock_pair()/bpf_spin_unlock_pair() (6.1:
 * 0022, 6.12: 0029), kfuncs stock does not have, so every program here is
 * "beyond" on both bases.
 *
 * The bank (tests/pair.c): NACC accounts; a transfer moves a random
 * amount between two random accounts (possibly the same one) under the
 * pair lock, only if the payer can afford it, and books it on both
 * sides: payer.sent[payee] and payee.recv[payer]. The auditor locks two
 * random accounts together and counts ledger entries that disagree; the
 * transfer made of two single locks one after the other is the broken
 * twin it must catch.
 */
#include "bpflock.h"

#define NACC 16
#define START 1000

extern void bpf_spin_lock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym;
extern void bpf_spin_unlock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym;

struct account {
	long bal;
	struct bpf_spin_lock lock;
	long sent[NACC];	/* to each account */
	long recv[NACC];	/* from each account */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NACC);
	__type(key, __u32);
	__type(value, struct account);
} bank SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NACC);
	__type(key, __u32);
	__type(value, struct account);
} bank_hash SEC(".maps");

/* [0] transfers made, [1] refused (no funds), [2] audits, [3] mismatches */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, long);
} stats SEC(".maps");

static __always_inline void count(__u32 what)
{
	long *c = bpf_map_lookup_elem(&stats, &what);

	if (c)
		(*c)++;
}

/* Book amt from a (index ia) to b (index ib); both are locked. */
static __always_inline int book(struct account *a, struct account *b, __u32 ia, __u32 ib,
				long amt)
{
	if (a->bal < amt)
		return 0;
	a->bal -= amt;
	b->bal += amt;
	a->sent[ib & (NACC - 1)] += amt;
	b->recv[ia & (NACC - 1)] += amt;
	return 1;
}

static __always_inline int transfer(void *map, int pair)
{
	__u32 r = bpf_get_prandom_u32();
	__u32 ia = r % NACC, ib = (r >> 8) % NACC;
	long amt = (r >> 16) % 100 + 1;
	struct account *a, *b;
	int done;

	a = bpf_map_lookup_elem(map, &ia);
	b = bpf_map_lookup_elem(map, &ib);
	if (!a || !b)
		return 1;
	if (pair) {
		bpf_spin_lock_pair(&a->lock, &b->lock);
		done = book(a, b, ia, ib, amt);
		bpf_spin_unlock_pair(&a->lock, &b->lock);
	} else {
		/* the broken twin: debit and credit in two regions */
		bpf_spin_lock(&a->lock);
		done = a->bal >= amt;
		if (done) {
			a->bal -= amt;
			a->sent[ib & (NACC - 1)] += amt;
		}
		bpf_spin_unlock(&a->lock);
		if (done) {
			bpf_spin_lock(&b->lock);
			b->bal += amt;
			b->recv[ia & (NACC - 1)] += amt;
			bpf_spin_unlock(&b->lock);
		}
	}
	count(done ? 0 : 1);
	return 0;
}

static __always_inline int audit(void *map)
{
	__u32 r = bpf_get_prandom_u32();
	__u32 ia = r % NACC, ib = (r >> 8) % NACC;
	struct account *a, *b;
	int bad;

	a = bpf_map_lookup_elem(map, &ia);
	b = bpf_map_lookup_elem(map, &ib);
	if (!a || !b)
		return 1;
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bad = (a->sent[ib & (NACC - 1)] != b->recv[ia & (NACC - 1)]) +
	      (b->sent[ia & (NACC - 1)] != a->recv[ib & (NACC - 1)]);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	count(2);
	if (bad)
		count(3);
	return 0;
}

/* run by tests/pair.c (the accounts are set up there) */
SEC("tc") __beyond __on("6.12", "kind=beyond") __load_only
int transfer_pair(struct __sk_buff *skb)
{
	return transfer(&bank, 1);
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __load_only
int transfer_pair_hash(struct __sk_buff *skb)
{
	return transfer(&bank_hash, 1);
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __load_only
int transfer_singles(struct __sk_buff *skb)
{
	return transfer(&bank, 0);
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __load_only
int audit_bank(struct __sk_buff *skb)
{
	return audit(&bank);
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __load_only
int audit_bank_hash(struct __sk_buff *skb)
{
	return audit(&bank_hash);
}

/* Verifier cases: what the pair may and may not do. */

#define TWO(a, b)						\
	__u32 ka = 0, kb = 1;					\
	struct account *a = bpf_map_lookup_elem(&bank, &ka);	\
	struct account *b = bpf_map_lookup_elem(&bank, &kb);	\
	if (!a || !b)						\
		return 1

SEC("tc") __beyond __on("6.12", "kind=beyond") __success __retval(0)
int pair_ok(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	a->bal += 0;
	b->bal -= 0;
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

/* the same lock twice is taken once, and released once */
SEC("tc") __beyond __on("6.12", "kind=beyond") __success __retval(0)
int pair_same_lock(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &a->lock);
	a->sent[0] += 0;
	bpf_spin_unlock_pair(&a->lock, &a->lock);
	return 0;
}

/* two lookups of one key: one element, two ids; taken once at run time */
SEC("tc") __beyond __on("6.12", "kind=beyond") __success __retval(0)
int pair_same_key(struct __sk_buff *skb)
{
	__u32 k = 3;
	struct account *a = bpf_map_lookup_elem(&bank, &k);
	struct account *b = bpf_map_lookup_elem(&bank, &k);

	if (!a || !b)
		return 1;
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_spin_unlock_pair(&b->lock, &a->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __success __retval(0)
int pair_two_maps(struct __sk_buff *skb)
{
	__u32 k = 0;
	struct account *a = bpf_map_lookup_elem(&bank, &k);
	struct account *h = bpf_map_lookup_elem(&bank_hash, &k);

	if (!a || !h)
		return 0;
	bpf_spin_lock_pair(&h->lock, &a->lock);
	h->bal += 0;
	bpf_spin_unlock_pair(&a->lock, &h->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("bpf_spin_unlock of a pair of locks: release them with bpf_spin_unlock_pair()")
__on("6.12", "errno=EINVAL")
int pair_then_single_unlock(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_spin_unlock(&a->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("bpf_spin_unlock_pair of a single lock: release it with bpf_spin_unlock()")
int single_then_pair_unlock(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock(&a->lock);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("bpf_spin_lock_pair while holding a lock: release it first")
int pair_under_single(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock(&a->lock);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	bpf_spin_unlock(&a->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EINVAL)
__msg("bpf_spin_lock#93 takes a second lock; take both at once with bpf_spin_lock_pair()")
int single_under_pair(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_spin_lock(&b->lock);
	bpf_spin_unlock(&b->lock);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("bpf_spin_lock_pair while holding a lock")
int pair_under_pair(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EINVAL)
__msg("bpf_spin_unlock is missing")
int pair_missing_unlock(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	if (skb->len > 10)
		bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("bpf_spin_unlock_pair of different locks: R1 and R2 are not the pair locked")
int pair_unlock_other(struct __sk_buff *skb)
{
	__u32 kc = 2;
	struct account *c = bpf_map_lookup_elem(&bank, &kc);

	TWO(a, b);
	if (!c)
		return 1;
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_spin_unlock_pair(&a->lock, &c->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("bpf_spin_unlock_pair without taking a lock")
int pair_unlock_unlocked(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

/* One path locks (a, b), the other (a, c); the join must not be pruned. */
SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("bpf_spin_unlock_pair of different locks")
int pair_prune_paths(struct __sk_buff *skb)
{
	__u32 kc = 2;
	struct account *c = bpf_map_lookup_elem(&bank, &kc);

	TWO(a, b);
	if (!c)
		return 1;
	if (bpf_get_prandom_u32() & 1)
		bpf_spin_lock_pair(&a->lock, &b->lock);
	else
		bpf_spin_lock_pair(&a->lock, &c->lock);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("bpf_spin_lock cannot be accessed directly by load/store")
int pair_writes_lock_word(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	*(volatile __u32 *)&b->lock = 0;
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("R2 is not a pointer to a map value")
int pair_stack_lock(struct __sk_buff *skb)
{
	struct bpf_spin_lock l = {};

	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &l);
	bpf_spin_unlock_pair(&a->lock, &l);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("doesn't point to 'struct bpf_spin_lock'")
int pair_wrong_offset(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, (struct bpf_spin_lock *)&b->sent[2]);
	bpf_spin_unlock_pair(&a->lock, (struct bpf_spin_lock *)&b->sent[2]);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EINVAL)
__msg("function calls are not allowed while holding a lock")
int pair_call_under(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_map_update_elem(&bank, &ka, a, 0);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

static __noinline int release_callers(struct account *a, struct account *b)
{
	if (!a || !b)
		return 0;
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("a subprogram may not release its caller's locks")
__on("6.12", "success")	/* 6.12 lets a subprogram release its caller's lock */
int pair_subprog_unlock(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	release_callers(a, b);
	return 0;
}

/* a static subprogram may work on both while they are held */
static __noinline int move_one(struct account *a, struct account *b)
{
	if (!a || !b)
		return 0;
	a->bal -= 1;
	b->bal += 1;
	return 0;
}

SEC("tc") __beyond __on("6.12", "kind=beyond") __success __retval(0)
int pair_subprog_works(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	move_one(a, b);
	move_one(b, a);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

/* the program types 6.1 lets call kfuncs: not socket filters (6.12: every
 * type that may lock)
 */
SEC("socket") __beyond __on("6.12", "kind=beyond") __failure __errno(EACCES)
__msg("calling kernel function bpf_spin_lock_pair is not allowed")
__on("6.12", "success")
int pair_in_socket_filter(struct __sk_buff *skb)
{
	TWO(a, b);
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}
