// SPDX-License-Identifier: GPL-2.0
/* Replaces ext_arg_target's ext_fill() with the target's own struct. */
#include "bpflock.h"

struct ext_arg {
	int v;
};

SEC("freplace/ext_fill")
int ext_fill(struct ext_arg *a)
{
	if (!a)
		return 0;
	a->v = 2;
	return 2;
}
