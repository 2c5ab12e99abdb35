// SPDX-License-Identifier: GPL-2.0
/*
 * What the verifier refuses around graph structures and their lock
 * (tests/graph.c), built only from trees that have them (6.12 on): a list
 * changed outside its lock or under another one, an unlock of another
 * lock, a lock left held at exit or at bpf_throw(), a node used after the
 * unlock. Each program carries its verdict; the messages are the words
 * stock-6.12 and ours share.
 *
 * The review probes below (an attacker's pass on patches/6.12/0002-0008)
 * add: a lock left held by a bpf_loop() or bpf_for_each_map_elem()
 * callback, by a static subprogram, on one branch; the lock held across
 * bpf_loop() and a global function; the lock word of global data, of a
 * map value and of an object read or written; an unlock of another
 * object's or another inner map's lock; a root changed under the lock of
 * another lookup of the same key, of another object, of another global
 * section, of a map value; a node dropped while in a list; non-owning
 * references used after an unlock (also one in a static subprogram, and
 * across a new lock); less() callbacks that unlock or drop and retake the
 * lock; bpf_throw() in a static subprogram under the caller's lock.
 * Accepted, as on stock-6.12: a static subprogram returning with the
 * lock held, a lock taken and released in each bpf_loop() run, an
 * object's own list, and less() callbacks that change the
 * tree or a list beside it under the lock (rb_add re-reads each link after
 * less(), so the tree stays well formed).
 */
#include "bpflock.h"
#include "graph.h"

extern void bpf_throw(__u64 cookie) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, struct list_value);
} lists SEC(".maps");

private(TREE) struct bpf_spin_lock tree_lock;
private(TREE) struct bpf_rb_root tree __contains(node_data, node);

static struct list_value *list_at(int key)
{
	return bpf_map_lookup_elem(&lists, &key);
}

SEC("tc") __failure __msg("must be held for bpf_list_head") __errno(EINVAL)
int list_push_unlocked(struct __sk_buff *skb)
{
	struct list_value *v = list_at(0);
	struct elem *e;

	if (!v)
		return 1;
	e = bpf_obj_new(struct elem);
	if (!e)
		return 2;
	bpf_list_push_front_impl(&v->head, &e->node, NULL, 0);
	return 0;
}

/* the lock of element 1 held, the list of element 0 changed */
SEC("tc") __failure __msg("must be held for bpf_list_head") __errno(EINVAL)
int list_push_other_lock(struct __sk_buff *skb)
{
	struct list_value *v0 = list_at(0), *v1 = list_at(1);
	struct elem *e;

	if (!v0 || !v1)
		return 1;
	e = bpf_obj_new(struct elem);
	if (!e)
		return 2;
	bpf_spin_lock(&v1->lock);
	bpf_list_push_front_impl(&v0->head, &e->node, NULL, 0);
	bpf_spin_unlock(&v1->lock);
	return 0;
}

SEC("tc") __failure __msg("bpf_spin_unlock of different lock") __errno(EINVAL)
int unlock_other_lock(struct __sk_buff *skb)
{
	struct list_value *v = list_at(0);

	if (!v)
		return 1;
	bpf_spin_lock(&v->lock);
	bpf_spin_unlock(&tree_lock);
	return 0;
}

SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int exit_with_lock(struct __sk_buff *skb)
{
	bpf_spin_lock(&tree_lock);
	return 0;
}

SEC("tc") __failure __msg("function calls are not allowed while holding a lock")
__errno(EINVAL)
int throw_with_lock(struct __sk_buff *skb)
{
	bpf_spin_lock(&tree_lock);
	bpf_throw(0);
	bpf_spin_unlock(&tree_lock);
	return 0;
}

/* bpf_rbtree_first()'s node is the tree's: gone with the unlock */
SEC("tc") __failure __msg("invalid mem access 'scalar'") __errno(EACCES)
int node_after_unlock(struct __sk_buff *skb)
{
	struct bpf_rb_node *f;
	struct node_data *n;

	n = bpf_obj_new(struct node_data);
	if (!n)
		return 1;
	n->key = 3;
	bpf_spin_lock(&tree_lock);
	bpf_rbtree_add_impl(&tree, &n->node, less, NULL, 0);
	f = bpf_rbtree_first(&tree);
	bpf_spin_unlock(&tree_lock);
	if (!f)
		return 2;
	return container_of(f, struct node_data, node)->key;
}

/* ---- review probes (attacker pass on 0002-0008) ---- */

extern void *bpf_refcount_acquire_impl(void *kptr, void *meta) __ksym;

struct lock_obj {
	long value;
	struct bpf_spin_lock lock;
};

/* a refcounted node that can be in a list and in a tree at once */
struct rnode {
	struct bpf_refcount ref;
	long key;
	struct bpf_rb_node node;
	struct bpf_list_node lnode;
};

private(RT) struct bpf_spin_lock rt_lock;
private(RT) struct bpf_rb_root rtree __contains(rnode, node);
private(RT) struct bpf_list_head rlist __contains(rnode, lnode);

static bool rless(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	struct rnode *x = container_of(a, struct rnode, node);
	struct rnode *y = container_of(b, struct rnode, node);

	return x->key < y->key;
}

/* less() changes the very tree bpf_rbtree_add() is walking */
static bool rless_adds(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	struct bpf_list_node *l = bpf_list_pop_front(&rlist);

	if (l)
		bpf_rbtree_add_impl(&rtree, &container_of(l, struct rnode, lnode)->node,
				    rless, NULL, 0);
	return container_of(a, struct rnode, node)->key <
	       container_of(b, struct rnode, node)->key;
}

SEC("tc") __success __retval(0)
int less_changes_tree(struct __sk_buff *skb)
{
	struct rnode *n, *m;

	n = bpf_obj_new(struct rnode);
	if (!n)
		return 1;
	m = bpf_refcount_acquire_impl(n, NULL);
	if (!m) {
		bpf_obj_drop_impl(n, NULL);
		return 2;
	}
	bpf_spin_lock(&rt_lock);
	bpf_list_push_front_impl(&rlist, &n->lnode, NULL, 0);
	bpf_rbtree_add_impl(&rtree, &m->node, rless_adds, NULL, 0);
	bpf_spin_unlock(&rt_lock);
	return 0;
}

/* less() pushes on a list beside the tree: a list of the same lock */
static bool rless_pops(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	struct bpf_list_node *l = bpf_list_pop_front(&rlist);

	if (l)
		bpf_list_push_front_impl(&rlist, l, NULL, 0);
	return container_of(a, struct rnode, node)->key <
	       container_of(b, struct rnode, node)->key;
}

SEC("tc") __success __retval(0)
int less_changes_list(struct __sk_buff *skb)
{
	struct rnode *n;

	n = bpf_obj_new(struct rnode);
	if (!n)
		return 1;
	bpf_spin_lock(&rt_lock);
	bpf_rbtree_add_impl(&rtree, &n->node, rless_pops, NULL, 0);
	bpf_spin_unlock(&rt_lock);
	return 0;
}

/* less() drops and retakes the tree's lock from a static subprogram */
static __attribute__((noinline)) int relock(void)
{
	bpf_spin_unlock(&rt_lock);
	bpf_spin_lock(&rt_lock);
	return 0;
}

static bool rless_relocks(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	relock();
	return container_of(a, struct rnode, node)->key <
	       container_of(b, struct rnode, node)->key;
}

SEC("tc") __failure __msg("can't spin_{lock,unlock} in rbtree cb") __errno(EACCES)
int less_relocks(struct __sk_buff *skb)
{
	struct rnode *n;

	n = bpf_obj_new(struct rnode);
	if (!n)
		return 1;
	bpf_spin_lock(&rt_lock);
	bpf_rbtree_add_impl(&rtree, &n->node, rless_relocks, NULL, 0);
	bpf_spin_unlock(&rt_lock);
	return 0;
}

/* a lock taken in a bpf_loop() callback, released after the loop */
static int lock_cb(__u32 i, void *ctx)
{
	bpf_spin_lock(&tree_lock);
	return 0;
}

SEC("tc") __failure __msg("bpf_spin_unlock without taking a lock") __errno(EINVAL)
int lock_in_loop_cb(struct __sk_buff *skb)
{
	bpf_loop(1, lock_cb, NULL, 0);
	bpf_spin_unlock(&tree_lock);
	return 0;
}

/* the lock held across bpf_loop() */
static int nop_cb(__u32 i, void *ctx)
{
	return 0;
}

SEC("tc") __failure __msg("function calls are not allowed while holding a lock") __errno(EINVAL)
int loop_under_lock(struct __sk_buff *skb)
{
	bpf_spin_lock(&tree_lock);
	bpf_loop(1, nop_cb, NULL, 0);
	bpf_spin_unlock(&tree_lock);
	return 0;
}

/* the lock held across a global function */
__attribute__((noinline)) int global_nop(int x)
{
	return x + 1;
}

SEC("tc") __failure __msg("global function calls are not allowed while holding a lock") __errno(EINVAL)
int global_under_lock(struct __sk_buff *skb)
{
	int r;

	bpf_spin_lock(&tree_lock);
	r = global_nop(skb->len);
	bpf_spin_unlock(&tree_lock);
	return r;
}

/* a static subprogram returns with the lock held; the caller unlocks */
static __attribute__((noinline)) int take(void)
{
	bpf_spin_lock(&tree_lock);
	return 0;
}

SEC("tc") __success __retval(0)
int static_returns_locked(struct __sk_buff *skb)
{
	take();
	bpf_spin_unlock(&tree_lock);
	return 0;
}

/* ... and the caller forgets to */
SEC("tc") __failure __msg("bpf_spin_unlock is missing") __errno(EINVAL)
int static_locked_exit(struct __sk_buff *skb)
{
	take();
	return 0;
}

/* the lock taken on one branch only */
SEC("tc") __failure __msg("bpf_spin_unlock without taking a lock") __errno(EINVAL)
int lock_one_branch(struct __sk_buff *skb)
{
	if (skb->len > 10)
		bpf_spin_lock(&tree_lock);
	bpf_spin_unlock(&tree_lock);
	return 0;
}

/* the lock word of global data written directly */
SEC("tc") __failure __msg("bpf_spin_lock cannot be accessed directly by load/store") __errno(EACCES)
int global_lock_word_store(struct __sk_buff *skb)
{
	*(volatile __u32 *)&tree_lock = 0;
	return 0;
}

/* the lock word of a map value read directly */
SEC("tc") __failure __msg("bpf_spin_lock cannot be accessed directly by load/store") __errno(EACCES)
int value_lock_word_load(struct __sk_buff *skb)
{
	struct list_value *v = list_at(0);

	if (!v)
		return 1;
	return *(volatile __u32 *)&v->lock;
}

/* the lock word of a map value written by a helper */
SEC("tc") __failure __msg("bpf_spin_lock cannot be accessed directly by load/store") __errno(EACCES)
int value_lock_word_helper(struct __sk_buff *skb)
{
	struct list_value *v = list_at(0);

	if (!v)
		return 1;
	bpf_skb_load_bytes(skb, 0, &v->lock, 4);
	return 0;
}

/* the lock word of an object written directly */
SEC("tc") __failure __msg("direct access to bpf_spin_lock is disallowed") __errno(EACCES)
int object_lock_word_store(struct __sk_buff *skb)
{
	struct lock_obj *o = bpf_obj_new(struct lock_obj);

	if (!o)
		return 1;
	*(volatile __u32 *)&o->lock = 0;
	bpf_obj_drop_impl(o, NULL);
	return 0;
}

/* an object's lock left held at exit (the object dropped) */
SEC("tc") __failure __msg("function calls are not allowed while holding a lock") __errno(EINVAL)
int object_lock_dropped_held(struct __sk_buff *skb)
{
	struct lock_obj *o = bpf_obj_new(struct lock_obj);

	if (!o)
		return 1;
	bpf_spin_lock(&o->lock);
	bpf_spin_unlock(&o->lock);
	bpf_spin_lock(&o->lock);
	bpf_obj_drop_impl(o, NULL);
	return 0;
}

/* two objects: lock one, unlock the other */
SEC("tc") __failure __msg("bpf_spin_unlock of different lock") __errno(EINVAL)
int object_unlock_other(struct __sk_buff *skb)
{
	struct lock_obj *a = bpf_obj_new(struct lock_obj);
	struct lock_obj *b;

	if (!a)
		return 1;
	b = bpf_obj_new(struct lock_obj);
	if (!b) {
		bpf_obj_drop_impl(a, NULL);
		return 2;
	}
	bpf_spin_lock(&a->lock);
	bpf_spin_unlock(&b->lock);
	bpf_obj_drop_impl(a, NULL);
	bpf_obj_drop_impl(b, NULL);
	return 0;
}

/* two lookups of the same key: the lock of one, the list of the other */
SEC("tc") __failure __msg("must be held for bpf_list_head") __errno(EINVAL)
int list_same_key_other_lookup(struct __sk_buff *skb)
{
	struct list_value *v = list_at(0), *w = list_at(0);
	struct elem *e;

	if (!v || !w)
		return 1;
	e = bpf_obj_new(struct elem);
	if (!e)
		return 2;
	bpf_spin_lock(&v->lock);
	bpf_list_push_front_impl(&w->head, &e->node, NULL, 0);
	bpf_spin_unlock(&v->lock);
	return 0;
}

/* the global tree changed under the lock of a map value */
SEC("tc") __failure __msg("must be held for bpf_rb_root") __errno(EINVAL)
int tree_under_value_lock(struct __sk_buff *skb)
{
	struct list_value *v = list_at(0);
	struct node_data *n;

	if (!v)
		return 1;
	n = bpf_obj_new(struct node_data);
	if (!n)
		return 2;
	bpf_spin_lock(&v->lock);
	bpf_rbtree_add_impl(&tree, &n->node, less, NULL, 0);
	bpf_spin_unlock(&v->lock);
	return 0;
}

/* a list node pushed, then dropped while in the list */
SEC("tc") __failure __msg("must be referenced or trusted") __errno(EINVAL)
int drop_node_in_list(struct __sk_buff *skb)
{
	struct list_value *v = list_at(0);
	struct elem *e;

	if (!v)
		return 1;
	e = bpf_obj_new(struct elem);
	if (!e)
		return 2;
	bpf_spin_lock(&v->lock);
	bpf_list_push_front_impl(&v->head, &e->node, NULL, 0);
	bpf_spin_unlock(&v->lock);
	bpf_obj_drop_impl(e, NULL);
	return 0;
}

/* a refcounted node's non-owning reference kept past the unlock */
SEC("tc") __failure __msg("invalid mem access 'scalar'") __errno(EACCES)
int rnode_after_unlock(struct __sk_buff *skb)
{
	struct rnode *n = bpf_obj_new(struct rnode);

	if (!n)
		return 1;
	bpf_spin_lock(&rt_lock);
	bpf_rbtree_add_impl(&rtree, &n->node, rless, NULL, 0);
	bpf_spin_unlock(&rt_lock);
	n->key = 5;
	return 0;
}

/* the tree's lock released inside less(): a callback's own frame */
static bool rless_unlocks(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	bpf_spin_unlock(&rt_lock);
	return false;
}

SEC("tc") __failure __msg("can't spin_{lock,unlock} in rbtree cb") __errno(EACCES)
int less_unlocks(struct __sk_buff *skb)
{
	struct rnode *n = bpf_obj_new(struct rnode);

	if (!n)
		return 1;
	bpf_spin_lock(&rt_lock);
	bpf_rbtree_add_impl(&rtree, &n->node, rless_unlocks, NULL, 0);
	bpf_spin_unlock(&rt_lock);
	return 0;
}

/* a bpf_for_each_map_elem() callback takes its element's lock, keeps it */
static long lock_elem_cb(void *map, int *key, struct list_value *v, void *ctx)
{
	bpf_spin_lock(&v->lock);
	return 0;
}

SEC("tc") __failure __msg("function calls are not allowed while holding a lock") __errno(EINVAL)
int lock_in_for_each_cb(struct __sk_buff *skb)
{
	bpf_for_each_map_elem(&lists, lock_elem_cb, NULL, 0);
	return 0;
}

/* a static subprogram takes a second lock while the caller holds one */
SEC("tc") __failure __msg("function calls are not allowed while holding a lock") __errno(EINVAL)
int second_lock_in_static(struct __sk_buff *skb)
{
	struct list_value *v = list_at(0);

	if (!v)
		return 1;
	bpf_spin_lock(&v->lock);
	take();
	bpf_spin_unlock(&tree_lock);
	bpf_spin_unlock(&v->lock);
	return 0;
}

/* the lock on a pointer chosen on a branch, the list of one of the two */
SEC("tc") __failure __msg("must be held for bpf_list_head") __errno(EINVAL)
int list_lock_chosen_on_branch(struct __sk_buff *skb)
{
	struct list_value *v0 = list_at(0), *v1 = list_at(1), *p;
	struct elem *e;

	if (!v0 || !v1)
		return 1;
	e = bpf_obj_new(struct elem);
	if (!e)
		return 2;
	p = skb->len > 10 ? v0 : v1;
	bpf_spin_lock(&p->lock);
	bpf_list_push_front_impl(&v0->head, &e->node, NULL, 0);
	bpf_spin_unlock(&p->lock);
	return 0;
}

/* two inner maps of one outer map: lock one's value, unlock the other's */
struct lock_value {
	long value;
	struct bpf_spin_lock lock;
};

struct inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct lock_value);
};

struct inner inner0 SEC(".maps"), inner1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, int);
	__array(values, struct inner);
} outer SEC(".maps") = {
	.values = { &inner0, &inner1 },
};

SEC("tc") __failure __msg("bpf_spin_unlock of different lock") __errno(EINVAL)
int inner_unlock_other(struct __sk_buff *skb)
{
	int k0 = 0, k1 = 1, z = 0;
	struct lock_value *a, *b;
	void *m0, *m1;

	m0 = bpf_map_lookup_elem(&outer, &k0);
	m1 = bpf_map_lookup_elem(&outer, &k1);
	if (!m0 || !m1)
		return 1;
	a = bpf_map_lookup_elem(m0, &z);
	b = bpf_map_lookup_elem(m1, &z);
	if (!a || !b)
		return 2;
	bpf_spin_lock(&a->lock);
	bpf_spin_unlock(&b->lock);
	return 0;
}

/* the unlock in a static subprogram ends the caller's non-owning refs */
static __attribute__((noinline)) int drop_tree_lock(void)
{
	bpf_spin_unlock(&tree_lock);
	return 0;
}

SEC("tc") __failure __msg("invalid mem access 'scalar'") __errno(EACCES)
int node_after_unlock_in_static(struct __sk_buff *skb)
{
	struct bpf_rb_node *f;
	struct node_data *n;

	n = bpf_obj_new(struct node_data);
	if (!n)
		return 1;
	n->key = 3;
	bpf_spin_lock(&tree_lock);
	bpf_rbtree_add_impl(&tree, &n->node, less, NULL, 0);
	f = bpf_rbtree_first(&tree);
	drop_tree_lock();
	if (!f)
		return 2;
	return container_of(f, struct node_data, node)->key;
}

/* an owning node pushed, and the list popped into a node of another map value */
SEC("tc") __failure __msg("must be held for bpf_list_head") __errno(EINVAL)
int pop_other_value_list(struct __sk_buff *skb)
{
	struct list_value *v0 = list_at(0), *v1 = list_at(1);
	struct bpf_list_node *l;

	if (!v0 || !v1)
		return 1;
	bpf_spin_lock(&v0->lock);
	l = bpf_list_pop_front(&v1->head);
	bpf_spin_unlock(&v0->lock);
	if (l)
		bpf_obj_drop_impl(container_of(l, struct elem, node), NULL);
	return 0;
}

/* a non-owning reference kept across an unlock and a new lock */
SEC("tc") __failure __msg("rbtree_remove node input must be non-owning ref") __errno(EINVAL)
int remove_after_relock(struct __sk_buff *skb)
{
	struct bpf_rb_node *f;

	bpf_spin_lock(&tree_lock);
	f = bpf_rbtree_first(&tree);
	bpf_spin_unlock(&tree_lock);
	if (!f)
		return 1;
	bpf_spin_lock(&tree_lock);
	f = bpf_rbtree_remove(&tree, f);
	bpf_spin_unlock(&tree_lock);
	if (f)
		bpf_obj_drop_impl(container_of(f, struct node_data, node), NULL);
	return 0;
}

/* objects holding a lock and a list: lock one, push on the other's list */
struct lobj {
	struct bpf_spin_lock lock;
	struct bpf_list_head head __contains(elem, node);
};

SEC("tc") __failure __msg("must be held for bpf_list_head") __errno(EINVAL)
int object_list_other_lock(struct __sk_buff *skb)
{
	struct lobj *a, *b;
	struct elem *e;

	a = bpf_obj_new(struct lobj);
	if (!a)
		return 1;
	b = bpf_obj_new(struct lobj);
	if (!b) {
		bpf_obj_drop_impl(a, NULL);
		return 2;
	}
	e = bpf_obj_new(struct elem);
	if (!e) {
		bpf_obj_drop_impl(a, NULL);
		bpf_obj_drop_impl(b, NULL);
		return 3;
	}
	bpf_spin_lock(&a->lock);
	bpf_list_push_front_impl(&b->head, &e->node, NULL, 0);
	bpf_spin_unlock(&a->lock);
	bpf_obj_drop_impl(a, NULL);
	bpf_obj_drop_impl(b, NULL);
	return 0;
}

/* the same with one object: accepted, and its list freed with it */
SEC("tc") __success __retval(0)
int object_list_own_lock(struct __sk_buff *skb)
{
	struct lobj *a;
	struct elem *e;

	a = bpf_obj_new(struct lobj);
	if (!a)
		return 1;
	e = bpf_obj_new(struct elem);
	if (!e) {
		bpf_obj_drop_impl(a, NULL);
		return 3;
	}
	bpf_spin_lock(&a->lock);
	bpf_list_push_front_impl(&a->head, &e->node, NULL, 0);
	bpf_spin_unlock(&a->lock);
	bpf_obj_drop_impl(a, NULL);
	return 0;
}

/* two global data sections, each a lock and a tree: one's lock, the other's tree */
private(TREE2) struct bpf_spin_lock tree2_lock;
private(TREE2) struct bpf_rb_root tree2 __contains(node_data, node);

SEC("tc") __failure __msg("must be held for bpf_rb_root") __errno(EINVAL)
int tree_under_other_section_lock(struct __sk_buff *skb)
{
	struct node_data *n = bpf_obj_new(struct node_data);

	if (!n)
		return 1;
	bpf_spin_lock(&tree2_lock);
	bpf_rbtree_add_impl(&tree, &n->node, less, NULL, 0);
	bpf_spin_unlock(&tree2_lock);
	return 0;
}

/* paths that join holding different locks: pruning must tell them apart */
SEC("tc") __failure __msg("bpf_spin_unlock of different lock") __errno(EINVAL)
int unlock_joined_paths(struct __sk_buff *skb)
{
	struct list_value *v0 = list_at(0), *v1 = list_at(1);

	if (!v0 || !v1)
		return 1;
	if (skb->len > 10)
		bpf_spin_lock(&v0->lock);
	else
		bpf_spin_lock(&v1->lock);
	bpf_spin_unlock(&v0->lock);
	return 0;
}

/* bpf_throw() in a static subprogram that runs under its caller's lock */
static __attribute__((noinline)) int throw_sub(int x)
{
	if (x > 100)
		bpf_throw(0);
	return x;
}

SEC("tc") __failure __msg("function calls are not allowed while holding a lock") __errno(EINVAL)
int throw_in_static_under_lock(struct __sk_buff *skb)
{
	int r;

	bpf_spin_lock(&tree_lock);
	r = throw_sub(skb->len);
	bpf_spin_unlock(&tree_lock);
	return r;
}

/* a lock taken and released inside each run of a bpf_loop() callback */
static int lock_unlock_cb(__u32 i, void *ctx)
{
	bpf_spin_lock(&tree_lock);
	bpf_spin_unlock(&tree_lock);
	return 0;
}

SEC("tc") __success __retval(0)
int lock_unlock_in_loop_cb(struct __sk_buff *skb)
{
	bpf_loop(4, lock_unlock_cb, NULL, 0);
	return 0;
}
