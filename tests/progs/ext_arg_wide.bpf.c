// SPDX-License-Identifier: GPL-2.0
/*
 * Replaces ext_arg_target's ext_fill() with a struct ext_arg of 16 bytes
 * where the target's has 4: verified with its own size, it would store
 * into the lock word that follows the caller's 4 bytes, and past it.
 */
#include "bpflock.h"

struct ext_arg {
	int v;
	int lock;
	int data[2];
};

SEC("freplace/ext_fill")
int ext_fill(struct ext_arg *a)
{
	if (!a)
		return 0;
	a->lock = 0x7777;
	a->data[0] = 0x7777;
	return 2;
}
