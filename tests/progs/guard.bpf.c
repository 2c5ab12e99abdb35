// SPDX-License-Identifier: GPL-2.0
/*
 * Tracing programs that take a lock where a CPU may already hold or wait
 * for one: in NMI (nmi:nmi_handler as tp_btf, tracepoint and raw
 * tracepoint; a kprobe on show_regs(), which the backtrace NMI calls) and
 * in the lock's own slow path (lock:contention_begin as tp_btf and as a
 * tracepoint), against tc programs taking the same lock; and the pair of
 * two elements, in NMI against tc programs taking it. Stock 6.1 allows
 * only the tp_btf ones to lock, and has no pair.
 */
#include "bpflock.h"

struct gelem {
	long cnt;
	struct bpf_spin_lock lock;
	int pad;
};

/* element 1: the pair's second word (tc_pair, nmi_pair) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, struct gelem);
} gmap SEC(".maps");

/* Lockless run counts of the tracing programs (this map holds no lock). */
struct gstats {
	long nmi_runs;
	long cont_runs;
	long plain_runs;
	long bucket_runs;	/* nmi_bucket */
	long freelist_runs;	/* freelist_lock */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct gstats);
} gstats SEC(".maps");

static __always_inline int lock_inc(void)
{
	int key = 0;
	struct gelem *e = bpf_map_lookup_elem(&gmap, &key);

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return 0;
}

static __always_inline struct gstats *stats(void)
{
	int key = 0;

	return bpf_map_lookup_elem(&gstats, &key);
}

SEC("tc")
int tc_inc(struct __sk_buff *skb)
{
	return lock_inc();
}

SEC("tp_btf/nmi_handler")
int nmi_inc(void *ctx)
{
	struct gstats *s = stats();

	if (s && !lock_inc())
		__sync_fetch_and_add(&s->nmi_runs, 1);
	return 0;
}

/* Uses no lock map: never skipped by the guard. */
SEC("tp_btf/nmi_handler")
int nmi_plain(void *ctx)
{
	struct gstats *s = stats();

	if (s)
		__sync_fetch_and_add(&s->plain_runs, 1);
	return 0;
}

SEC("tp_btf/contention_begin")
int cont_inc(void *ctx)
{
	struct gstats *s = stats();

	if (s && !lock_inc())
		__sync_fetch_and_add(&s->cont_runs, 1);
	return 0;
}

#define NMI_INC(sec, name)						\
SEC(sec)								\
int name(void *ctx)							\
{									\
	struct gstats *s = stats();					\
									\
	if (s && !lock_inc())						\
		__sync_fetch_and_add(&s->nmi_runs, 1);			\
	return 0;							\
}

NMI_INC("tp/nmi/nmi_handler", nmi_tp_inc)
NMI_INC("raw_tp/nmi_handler", nmi_raw_tp_inc)
NMI_INC("kprobe/show_regs", nmi_kprobe_inc)

/* weak: the object loads without them on stock (the pair case is ours only) */
extern void bpf_spin_lock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym __weak;
extern void bpf_spin_unlock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym __weak;

/* Both elements under one pair lock, taken in the order opposite to tc_pair's. */
static __always_inline int pair_inc(int first)
{
	int k0 = first, k1 = !first;
	struct gelem *a = bpf_map_lookup_elem(&gmap, &k0);
	struct gelem *b = bpf_map_lookup_elem(&gmap, &k1);

	if (!a || !b)
		return 1;
	bpf_spin_lock_pair(&a->lock, &b->lock);
	a->cnt++;
	b->cnt++;
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

SEC("tc")
int tc_pair(struct __sk_buff *skb)
{
	return pair_inc(0);
}

SEC("tp_btf/nmi_handler")
int nmi_pair(void *ctx)
{
	struct gstats *s = stats();

	if (s && !pair_inc(1))
		__sync_fetch_and_add(&s->nmi_runs, 1);
	return 0;
}

SEC("tp/lock/contention_begin")
int cont_tp_inc(void *ctx)
{
	struct gstats *s = stats();

	if (s && !lock_inc())
		__sync_fetch_and_add(&s->cont_runs, 1);
	return 0;
}

/*
 * A cycle through a kernel lock (attacker review): in an NMI on a CPU that
 * holds the element's lock, nmi_bucket (no lock map) spins on the only
 * bucket of hq; the CPU holding that bucket, in an update, runs
 * freelist_lock (fentry on __pcpu_freelist_pop, which the update calls
 * with the bucket held), which spins on the element. Stock deadlocks; ours
 * starts no tracing program inside a lock region.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, long);
} hq SEC(".maps");

#define R10(x) x x x x x x x x x x
#define R1000(x) R10(R10(R10(x)))

/* tc_inc with a long region (3000 instructions), for a wide NMI window. */
SEC("tc")
int tc_inc_slow(struct __sk_buff *skb)
{
	int key = 0;
	struct gelem *e = bpf_map_lookup_elem(&gmap, &key);
	long x = 0;

	if (!e)
		return 1;
	bpf_spin_lock(&e->lock);
	R1000(asm volatile("%0 += 1" : "+r"(x));)
	R1000(asm volatile("%0 += 1" : "+r"(x));)
	R1000(asm volatile("%0 += 1" : "+r"(x));)
	e->cnt++;
	bpf_spin_unlock(&e->lock);
	return x != 3000;
}

SEC("raw_tp/nmi_handler")
int nmi_bucket(void *ctx)
{
	struct gstats *s = stats();
	int k = 2;

	bpf_map_delete_elem(&hq, &k);
	if (s)
		__sync_fetch_and_add(&s->bucket_runs, 1);
	return 0;
}

SEC("fentry/__pcpu_freelist_pop")
int freelist_lock(void *ctx)
{
	struct gstats *s = stats();

	if (s && !lock_inc())
		__sync_fetch_and_add(&s->freelist_runs, 1);
	return 0;
}
