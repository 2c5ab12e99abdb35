// SPDX-License-Identifier: GPL-2.0
/*
 * Programs for the torture run (torture.c). Several program types take
 * the locks of a few shared elements at once:
 * - counters (hash and array, never deleted or written by user space):
 *   every run adds 1 under the lock to the element it picked;
 * - patterns (hash and array, also rewritten by user space): every run
 *   writes one value into all NVARS ints under the lock, so any reader
 *   holding the lock sees them equal;
 * - a churned pattern hash, the same but with keys that user space also
 *   deletes and re-inserts;
 * - a cgroup storage counter, for the cgroup_skb program.
 */
#include "bpflock.h"
#include "torture.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NELEMS);
	__type(key, int);
	__type(value, struct counter);
} cnt_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NELEMS);
	__type(key, int);
	__type(value, struct counter);
} cnt_array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NELEMS);
	__type(key, int);
	__type(value, struct pattern);
} pat_hash SEC(".maps");

/* Room for twice the keys: churn never runs a preallocated map dry. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * NELEMS);
	__type(key, int);
	__type(value, struct pattern);
} churn_hash SEC(".maps");

/* For torture.c's churn case. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct big);
} big_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NELEMS);
	__type(key, int);
	__type(value, struct pattern);
} pat_array SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct counter);
} cg_cnt SEC(".maps");

static __always_inline int bump(void *map, int key)
{
	struct counter *c = bpf_map_lookup_elem(map, &key);

	if (!c)
		return 1;
	bpf_spin_lock(&c->lock);
	c->cnt++;
	bpf_spin_unlock(&c->lock);
	return 0;
}

static __always_inline void paint(void *map, int key, int v)
{
	struct pattern *p = bpf_map_lookup_elem(map, &key);
	int i;

	if (!p)
		return;	/* deleted by user space just now */
	bpf_spin_lock(&p->lock);
	for (i = 0; i < NVARS; i++)
		p->var[i] = v;
	bpf_spin_unlock(&p->lock);
}

/* One round: 2 counter increments (hash, array) and 3 paints. */
static __always_inline int round(void)
{
	__u32 r = bpf_get_prandom_u32();
	int key = r % NELEMS, err;

	err = bump(&cnt_hash, key);
	err |= bump(&cnt_array, (r >> 8) % NELEMS);
	paint(&pat_hash, (r >> 16) % NELEMS, r);
	paint(&pat_array, (r >> 24) % NELEMS, r);
	paint(&churn_hash, (r >> 4) % NELEMS, r);
	return err;
}

SEC("tc")
int tort_tc(struct __sk_buff *skb)
{
	return round();
}

SEC("xdp")
int tort_xdp(struct xdp_md *ctx)
{
	return round() ? XDP_ABORTED : XDP_PASS;
}

SEC("cgroup_skb/ingress")
int tort_cg(struct __sk_buff *skb)
{
	struct counter *c = bpf_get_local_storage(&cg_cnt, 0);
	int err = round();

	bpf_spin_lock(&c->lock);
	c->cnt++;
	bpf_spin_unlock(&c->lock);
	return !err;
}

/* weak: the object still loads (without tort_pair) where they are absent */
extern void bpf_spin_lock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym __weak;
extern void bpf_spin_unlock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym __weak;

/*
 * The pair lock among the others (ours only, 0022): a hash counter and an
 * array counter incremented together (2 increments, as round()), and two
 * patterns painted together, one of them in the churned hash whose keys
 * user space deletes and re-inserts. Single locks, BPF_F_LOCK copies and
 * the reused-element write contend for the same words.
 */
SEC("tc")
int tort_pair(struct __sk_buff *skb)
{
	__u32 r = bpf_get_prandom_u32(), k1 = r % NELEMS, k2 = (r >> 8) % NELEMS;
	__u32 k3 = (r >> 16) % NELEMS, k4 = (r >> 4) % NELEMS;
	struct counter *c1 = bpf_map_lookup_elem(&cnt_hash, &k1);
	struct counter *c2 = bpf_map_lookup_elem(&cnt_array, &k2);
	struct pattern *p1, *p2;
	int i;

	if (!c1 || !c2)
		return 1;
	bpf_spin_lock_pair(&c1->lock, &c2->lock);
	c1->cnt++;
	c2->cnt++;
	bpf_spin_unlock_pair(&c1->lock, &c2->lock);

	p1 = bpf_map_lookup_elem(&pat_hash, &k3);
	p2 = bpf_map_lookup_elem(&churn_hash, &k4);
	if (!p1 || !p2)
		return 0;	/* deleted by user space just now */
	bpf_spin_lock_pair(&p2->lock, &p1->lock);
	for (i = 0; i < NVARS; i++) {
		p1->var[i] = r;
		p2->var[i] = r;
	}
	bpf_spin_unlock_pair(&p1->lock, &p2->lock);
	return 0;
}
