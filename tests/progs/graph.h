/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What graph.bpf.c and graph_fail.bpf.c share: the graph kfuncs, the list
 * element, the map value with a list beside its lock, the tree node and
 * its order. Each object keeps its own maps and global sections.
 */
#ifndef BPFLOCK_GRAPH_H
#define BPFLOCK_GRAPH_H

#include <stdbool.h>
#include <bpf/bpf_core_read.h>

#define __contains(name, node) __attribute__((btf_decl_tag("contains:" #name ":" #node)))
#define private(name) SEC(".data." #name) __attribute__((visibility("hidden"), aligned(8)))

extern void *bpf_obj_new_impl(__u64 local_type_id, void *meta) __ksym;
extern void bpf_obj_drop_impl(void *kptr, void *meta) __ksym;
extern int bpf_list_push_front_impl(struct bpf_list_head *head, struct bpf_list_node *node,
				    void *meta, __u64 off) __ksym;
extern struct bpf_list_node *bpf_list_pop_front(struct bpf_list_head *head) __ksym;
extern int bpf_rbtree_add_impl(struct bpf_rb_root *root, struct bpf_rb_node *node,
			       bool (less)(struct bpf_rb_node *a, const struct bpf_rb_node *b),
			       void *meta, __u64 off) __ksym;
extern struct bpf_rb_node *bpf_rbtree_first(struct bpf_rb_root *root) __ksym;
extern struct bpf_rb_node *bpf_rbtree_remove(struct bpf_rb_root *root,
					     struct bpf_rb_node *node) __ksym;

#define bpf_obj_new(type) ((type *)bpf_obj_new_impl(bpf_core_type_id_local(type), NULL))
#define bpf_obj_drop(kptr) bpf_obj_drop_impl(kptr, NULL)

struct elem {
	long value;
	struct bpf_list_node node;
};

struct list_value {
	struct bpf_spin_lock lock;
	struct bpf_list_head head __contains(elem, node);
};

struct node_data {
	long key;
	struct bpf_rb_node node;
};

static bool less(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	struct node_data *x = container_of(a, struct node_data, node);
	struct node_data *y = container_of(b, struct node_data, node);

	return x->key < y->key;
}

#endif
