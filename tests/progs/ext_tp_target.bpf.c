// SPDX-License-Identifier: GPL-2.0
/*
 * A tp_btf program (sys_enter: two arguments) with a global function whose
 * first argument is its context (6.1: a pointer to an anonymous struct,
 * tracing's context; 6.12: tagged arg:ctx) and four more are scalars.
 */
#include "bpflock.h"
#include "ext.h"


volatile int ext_tp_sink;

__attribute__((noinline)) int ext_tp_fn(EXT_TP_CTX, unsigned long long a, unsigned long long b,
					unsigned long long c, unsigned long long d)
{
	return (int)(a + b + c + d);
}

SEC("tp_btf/sys_enter")
int ext_tp_target(void *ctx)
{
	ext_tp_sink = ext_tp_fn(ctx, 1, 2, 3, 4);
	return 0;
}
