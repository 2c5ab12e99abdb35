// SPDX-License-Identifier: GPL-2.0
/*
 * What the verifier refuses around graph structures and their lock
 * (tests/graph.c), built only from trees that have them (6.12 on): a list
 * changed outside its lock or under another one, an unlock of another
 * lock, a lock left held at exit or at bpf_throw(), a node used after the
 * unlock. Each program carries its verdict; the messages are the words
 * stock-6.12 and ours share.
 */
#include <stdbool.h>
#include "bpflock.h"
#include <bpf/bpf_core_read.h>

#define __contains(name, node) __attribute__((btf_decl_tag("contains:" #name ":" #node)))
#define private(name) SEC(".data." #name) __attribute__((visibility("hidden"), aligned(8)))

extern void *bpf_obj_new_impl(__u64 local_type_id, void *meta) __ksym;
extern void bpf_obj_drop_impl(void *kptr, void *meta) __ksym;
extern int bpf_list_push_front_impl(struct bpf_list_head *head, struct bpf_list_node *node,
				    void *meta, __u64 off) __ksym;
extern int bpf_rbtree_add_impl(struct bpf_rb_root *root, struct bpf_rb_node *node,
			       bool (less)(struct bpf_rb_node *a, const struct bpf_rb_node *b),
			       void *meta, __u64 off) __ksym;
extern struct bpf_rb_node *bpf_rbtree_first(struct bpf_rb_root *root) __ksym;
extern void bpf_throw(__u64 cookie) __ksym;

#define bpf_obj_new(type) ((type *)bpf_obj_new_impl(bpf_core_type_id_local(type), NULL))

struct elem {
	long value;
	struct bpf_list_node node;
};

struct list_value {
	struct bpf_spin_lock lock;
	struct bpf_list_head head __contains(elem, node);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, struct list_value);
} lists SEC(".maps");

struct node_data {
	long key;
	struct bpf_rb_node node;
};

private(TREE) struct bpf_spin_lock tree_lock;
private(TREE) struct bpf_rb_root tree __contains(node_data, node);

static bool less(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	struct node_data *x = container_of(a, struct node_data, node);
	struct node_data *y = container_of(b, struct node_data, node);

	return x->key < y->key;
}

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
