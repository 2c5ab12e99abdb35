// SPDX-License-Identifier: GPL-2.0
/* A tracing program with a global function that an extension replaces. */
#include "bpflock.h"

volatile int sink;

__attribute__((noinline)) int global_fn(int x)
{
	return x + 1;
}

/* runs in NMI; fentry and fexit programs cannot be extended at all */
SEC("tp_btf/nmi_handler")
int ext_target(void *ctx)
{
	sink = global_fn(0);
	return 0;
}
