// SPDX-License-Identifier: GPL-2.0
/*
 * Graph structures under bpf_spin_lock (tests/graph.c), built only from
 * trees that have them (6.12 on): a list in a map value beside its lock,
 * and a red-black tree in global data beside a global lock, as
 * tools/sched_ext/scx_flatcg.bpf.c keeps its cgroup tree.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "graph.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, int);
	__type(value, struct list_value);
} lists SEC(".maps");

/* The same value in a hash map, for lookup_and_delete (tests/graph.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, int);
	__type(value, struct list_value);
} hlists SEC(".maps");

/* Push an object on the element's list and pop it back under the lock. */
SEC("tc")
int list_push_pop(struct __sk_buff *skb)
{
	struct bpf_list_node *n;
	struct list_value *v;
	struct elem *e;
	int key = 0;
	long got;

	v = bpf_map_lookup_elem(&lists, &key);
	if (!v)
		return 1;
	e = bpf_obj_new(struct elem);
	if (!e)
		return 2;
	e->value = 42;
	bpf_spin_lock(&v->lock);
	bpf_list_push_front_impl(&v->head, &e->node, NULL, 0);
	n = bpf_list_pop_front(&v->head);
	bpf_spin_unlock(&v->lock);
	if (!n)
		return 3;
	e = container_of(n, struct elem, node);
	got = e->value;
	bpf_obj_drop(e);
	return got == 42 ? 0 : 4;
}

private(TREE) struct bpf_spin_lock tree_lock;
private(TREE) struct bpf_rb_root tree __contains(node_data, node);

/* Add a node to the global tree and take the first one back out. */
SEC("tc")
int rbtree_add_first(struct __sk_buff *skb)
{
	struct bpf_rb_node *f;
	struct node_data *n;
	long key;

	n = bpf_obj_new(struct node_data);
	if (!n)
		return 1;
	n->key = 7;
	bpf_spin_lock(&tree_lock);
	bpf_rbtree_add_impl(&tree, &n->node, less, NULL, 0);
	f = bpf_rbtree_first(&tree);
	if (!f) {
		bpf_spin_unlock(&tree_lock);
		return 2;
	}
	f = bpf_rbtree_remove(&tree, f);
	bpf_spin_unlock(&tree_lock);
	if (!f)
		return 3;
	n = container_of(f, struct node_data, node);
	key = n->key;
	bpf_obj_drop(n);
	return key == 7 ? 0 : 4;
}

char _license[] SEC("license") = "GPL";
