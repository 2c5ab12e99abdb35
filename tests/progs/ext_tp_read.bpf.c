// SPDX-License-Identifier: GPL-2.0
/*
 * Replaces ext_tp_target's ext_tp_fn(). Its context would be checked as
 * the arguments of ext_tp_fn()'s prototype (the extension's
 * attach_func_proto, the first skipped as a tp_btf's __data): four u64
 * where sys_enter's context has two, so it reads the struct pt_regs
 * pointer as a scalar and ctx[2], ctx[3] past the tracepoint's arguments,
 * on the kernel stack.
 */
#include "bpflock.h"
#include "ext.h"


unsigned long long ext_tp_leak[4];

SEC("freplace/ext_tp_fn")
int ext_tp_fn(EXT_TP_CTX, unsigned long long a, unsigned long long b,
	      unsigned long long c, unsigned long long d)
{
	unsigned long long *p = (void *)ctx;

	ext_tp_leak[0] = p[0];
	ext_tp_leak[1] = p[1];
	ext_tp_leak[2] = p[2];
	ext_tp_leak[3] = p[3];
	return 0;
}
