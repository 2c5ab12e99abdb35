// SPDX-License-Identifier: GPL-2.0
/*
 * Replaces ext_arg_target's ext_fill() with one whose argument is tagged
 * never NULL (6.12's __arg_nonnull), where the target's may be NULL: its
 * callers may pass NULL, and the store below would then fault in the
 * kernel. 6.1 reads no argument tags.
 */
#include "bpflock.h"

struct ext_arg {
	int v;
};

SEC("freplace/ext_fill")
int ext_fill(struct ext_arg *a __attribute__((btf_decl_tag("arg:nonnull"))))
{
	a->v = 3;
	return 3;
}
