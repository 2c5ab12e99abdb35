// SPDX-License-Identifier: GPL-2.0
/*
 * 6.12: a kprobe program whose global functions take the context through
 * the bpf_user_pt_regs_t typedef (of a local struct the size of x86-64's
 * struct pt_regs), and 8 bytes of a map value. 6.12 takes a pointer to
 * bpf_user_pt_regs_t for a kprobe's context whatever struct it names.
 */
#include "bpflock.h"

struct ext_regs {
	unsigned long r[21];
};
typedef struct ext_regs bpf_user_pt_regs_t;

struct ext_small {
	long v;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, int);
	__type(value, struct ext_small);
} ext_kp_map SEC(".maps");

__attribute__((noinline)) int ext_kp_ctx(bpf_user_pt_regs_t *ctx)
{
	return ctx ? 1 : 0;
}

__attribute__((noinline)) int ext_kp_mem(struct ext_small *s)
{
	if (!s)
		return 0;
	return s->v != 0;
}

SEC("kprobe")
int ext_kp_target(bpf_user_pt_regs_t *ctx)
{
	int key = 0, r;
	struct ext_small *e;

	r = ext_kp_ctx(ctx);
	e = bpf_map_lookup_elem(&ext_kp_map, &key);
	if (e)
		r += ext_kp_mem(e);
	return r;
}
