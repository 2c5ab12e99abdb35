// SPDX-License-Identifier: GPL-2.0
/*
 * Graph structures under bpf_spin_lock_pair() (tests/graph.c; 6.12's
 * series only): two lists, or a list and the global tree, locked at once
 * and changed together, as a scheduler moves a task between two run
 * queues. Either lock of the pair guards the roots beside it, no other
 * root; the nodes reached under the pair are not the program's after
 * the unlock; an object of bpf_obj_new() is not locked in a pair. Stock
 * has no pair: each case is ours only. The cases after pair_of_object_lock
 * are the attacker review's of 0028-0029: a less() callback that drops
 * and retakes the pair in a subprogram, a root reached by a lookup under
 * the pair (0028 allows it), a node removed through the other root of the
 * pair (refused at run time: the node's owner is checked), and an unlock
 * that names one lock twice.
 */
#include "bpflock.h"
#include "graph.h"

extern void bpf_spin_lock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym;
extern void bpf_spin_unlock_pair(struct bpf_spin_lock *a, struct bpf_spin_lock *b) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, struct list_value);
} plists SEC(".maps");

private(PTREE) struct bpf_spin_lock ptree_lock;
private(PTREE) struct bpf_rb_root ptree __contains(node_data, node);

private(PAUX) struct bpf_spin_lock paux_lock;
private(PAUX) long paux;

struct tree_value {
	struct bpf_spin_lock lock;
	struct bpf_rb_root root __contains(node_data, node);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, struct tree_value);
} ptrees SEC(".maps");

/* an object that holds a lock of its own */
struct locked_obj {
	long v;
	struct bpf_spin_lock lock;
};

static struct list_value *plist(int key)
{
	return bpf_map_lookup_elem(&plists, &key);
}

/* Push on list 0, then move the node to list 1 under both locks. */
SEC("tc") __beyond __success __retval(0) __on("6.12", "kind=beyond")
int pair_moves_between_lists(struct __sk_buff *skb)
{
	struct list_value *a = plist(0), *b = plist(1);
	struct bpf_list_node *n;
	struct elem *e;
	long got = 0;

	if (!a || !b)
		return 1;
	e = bpf_obj_new(struct elem);
	if (!e)
		return 2;
	e->value = 7;
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_list_push_front_impl(&a->head, &e->node, NULL, 0);
	n = bpf_list_pop_front(&a->head);
	if (n)
		bpf_list_push_front_impl(&b->head, n, NULL, 0);
	n = bpf_list_pop_front(&b->head);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	if (!n)
		return 3;
	e = container_of(n, struct elem, node);
	got = e->value;
	bpf_obj_drop(e);
	return got == 7 ? 0 : 4;
}

/* A map value's list and the global tree, each beside its own lock. */
SEC("tc") __beyond __success __retval(0) __on("6.12", "kind=beyond")
int pair_list_and_tree(struct __sk_buff *skb)
{
	struct list_value *a = plist(0);
	struct bpf_rb_node *rn = NULL;
	struct node_data *d;
	struct elem *e;

	if (!a)
		return 1;
	e = bpf_obj_new(struct elem);
	if (!e)
		return 2;
	d = bpf_obj_new(struct node_data);
	if (!d) {
		bpf_obj_drop(e);
		return 2;
	}
	d->key = 5;
	bpf_spin_lock_pair(&ptree_lock, &a->lock);
	bpf_list_push_front_impl(&a->head, &e->node, NULL, 0);
	bpf_rbtree_add_impl(&ptree, &d->node, less, NULL, 0);
	rn = bpf_rbtree_first(&ptree);
	if (rn)
		rn = bpf_rbtree_remove(&ptree, rn);
	bpf_spin_unlock_pair(&a->lock, &ptree_lock);
	if (rn)
		bpf_obj_drop(container_of(rn, struct node_data, node));
	return rn ? 0 : 3;
}

/* A list beside neither lock of the pair: another lookup of key 0. */
SEC("tc") __beyond __failure __errno(EINVAL) __on("6.12", "kind=beyond")
__msg("held lock and object are not in the same allocation")
int pair_root_beside_neither(struct __sk_buff *skb)
{
	struct list_value *a = plist(0), *b = plist(1), *c = plist(0);
	struct elem *e;

	if (!a || !b || !c)
		return 1;
	e = bpf_obj_new(struct elem);
	if (!e)
		return 2;
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_list_push_front_impl(&c->head, &e->node, NULL, 0);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

/* A node reached under the pair is not the program's after the unlock. */
SEC("tc") __beyond __failure __errno(EACCES) __on("6.12", "kind=beyond")
__msg("invalid mem access 'scalar'")
int pair_node_after_unlock(struct __sk_buff *skb)
{
	struct list_value *a = plist(0);
	struct bpf_rb_node *rn;
	struct node_data *d;
	long k = 0;

	if (!a)
		return 1;
	d = bpf_obj_new(struct node_data);
	if (!d)
		return 2;
	bpf_spin_lock_pair(&a->lock, &ptree_lock);
	bpf_rbtree_add_impl(&ptree, &d->node, less, NULL, 0);
	rn = bpf_rbtree_first(&ptree);
	bpf_spin_unlock_pair(&a->lock, &ptree_lock);
	if (rn)
		k = container_of(rn, struct node_data, node)->key;
	return k;
}

/* The lock of an object of bpf_obj_new() is taken alone. */
SEC("tc") __beyond __failure __errno(EACCES) __on("6.12", "kind=beyond")
__msg("R2 is not a pointer to a map value")
int pair_of_object_lock(struct __sk_buff *skb)
{
	struct list_value *a = plist(0);
	struct locked_obj *o;

	if (!a)
		return 1;
	o = bpf_obj_new(struct locked_obj);
	if (!o)
		return 2;
	bpf_spin_lock_pair(&a->lock, &o->lock);
	bpf_spin_unlock_pair(&a->lock, &o->lock);
	bpf_obj_drop(o);
	return 0;
}

static __attribute__((noinline)) int drop_and_retake(int x)
{
	bpf_spin_unlock_pair(&ptree_lock, &paux_lock);
	bpf_spin_lock_pair(&ptree_lock, &paux_lock);
	return x;
}

static bool less_retakes(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	return drop_and_retake(bpf_get_prandom_u32() & 1);
}

/* less() runs under the tree's lock: a subprogram of it may not drop it */
SEC("tc") __beyond __failure __errno(EACCES) __on("6.12", "kind=beyond")
__msg("can't spin_{lock,unlock} in rbtree cb: the tree's lock is already held")
int pair_less_drops_pair(struct __sk_buff *skb)
{
	struct node_data *d = bpf_obj_new(struct node_data);

	if (!d)
		return 1;
	bpf_spin_lock_pair(&ptree_lock, &paux_lock);
	bpf_rbtree_add_impl(&ptree, &d->node, less_retakes, NULL, 0);
	bpf_spin_unlock_pair(&ptree_lock, &paux_lock);
	return 0;
}

static struct tree_value *ptree_at(int key)
{
	return bpf_map_lookup_elem(&ptrees, &key);
}

/* another lookup of key 0, made under the pair, is not the value locked */
SEC("tc") __beyond __failure __errno(EINVAL) __on("6.12", "kind=beyond")
__msg("held lock and object are not in the same allocation")
int pair_root_looked_up_under_pair(struct __sk_buff *skb)
{
	struct tree_value *a = ptree_at(0), *b = ptree_at(1), *c;
	struct node_data *d;

	if (!a || !b)
		return 1;
	d = bpf_obj_new(struct node_data);
	if (!d)
		return 2;
	bpf_spin_lock_pair(&a->lock, &b->lock);
	c = ptree_at(0);
	if (c)
		bpf_rbtree_add_impl(&c->root, &d->node, less, NULL, 0);
	else
		bpf_rbtree_add_impl(&a->root, &d->node, less, NULL, 0);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	return 0;
}

/*
 * A node of tree a passed to bpf_rbtree_remove() with tree b's root, both
 * locked: accepted (both roots are guarded), and the kfunc finds the node
 * is not b's and returns NULL, leaving it in a.
 */
SEC("tc") __beyond __success __retval(0) __on("6.12", "kind=beyond")
int pair_remove_through_other_root(struct __sk_buff *skb)
{
	struct tree_value *a = ptree_at(0), *b = ptree_at(1);
	struct bpf_rb_node *n, *r = NULL;
	struct node_data *d;

	if (!a || !b)
		return 1;
	d = bpf_obj_new(struct node_data);
	if (!d)
		return 2;
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_rbtree_add_impl(&a->root, &d->node, less, NULL, 0);
	n = bpf_rbtree_first(&a->root);
	if (n)
		r = bpf_rbtree_remove(&b->root, n);
	bpf_spin_unlock_pair(&a->lock, &b->lock);
	if (r) {
		bpf_obj_drop(container_of(r, struct node_data, node));
		return 3;
	}
	return n ? 0 : 4;
}

/* two lookups of one key are two locks: unlock(b, b) leaves a held */
SEC("tc") __beyond __failure __errno(EACCES) __on("6.12", "kind=beyond")
__msg("bpf_spin_unlock_pair of different locks: R1 and R2 are not the pair locked")
int pair_unlock_one_twice(struct __sk_buff *skb)
{
	struct list_value *a = plist(0), *b = plist(0);

	if (!a || !b)
		return 1;
	bpf_spin_lock_pair(&a->lock, &b->lock);
	bpf_spin_unlock_pair(&b->lock, &b->lock);
	return 0;
}
