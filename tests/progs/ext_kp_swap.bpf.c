// SPDX-License-Identifier: GPL-2.0
/*
 * 6.12: replaces ext_kp_target's functions with the context and memory
 * swapped, same struct names and sizes, no tags. ext_kp_ctx() without the
 * typedef is 168 bytes of memory: it stores into the kprobe's struct
 * pt_regs (here the probed function's first argument, rdi), which kprobe
 * programs may not write. ext_kp_mem() with the typedef is a non-NULL
 * context, read past the 8 bytes its callers checked.
 */
#include "bpflock.h"

struct ext_regs {
	unsigned long r[21];
};

struct ext_small {
	long v;
};
typedef struct ext_small bpf_user_pt_regs_t;

long ext_leak[2];

SEC("freplace/ext_kp_ctx")
int ext_kp_ctx(struct ext_regs *r)
{
	if (!r)
		return 0;
	if (r->r[14] == 0x7777)
		r->r[14] = 1;
	return 0;
}

SEC("freplace/ext_kp_mem")
int ext_kp_mem(bpf_user_pt_regs_t *s)
{
	ext_leak[0] = *(long *)((char *)s + 8);
	ext_leak[1] = *(long *)((char *)s + 160);
	return 0;
}
