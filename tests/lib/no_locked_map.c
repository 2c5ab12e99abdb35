// SPDX-License-Identifier: GPL-2.0
/*
 * locked_map for a libbpf without it (no_locked_map.h): nothing to lock
 * with, every call fails with EOPNOTSUPP and says why on stderr once.
 */
#include <errno.h>
#include <stdio.h>
#include "no_locked_map.h"

static int absent(void)
{
	static int said;

	if (!said++)
		fprintf(stderr, "libbpf of this tree has no locked_map (patch 0020 of the 6.1 series): EOPNOTSUPP\n");
	errno = EOPNOTSUPP;
	return -EOPNOTSUPP;
}

struct locked_map *locked_map__new(int map_fd, const struct locked_map_opts *opts)
{
	absent();
	return NULL;
}

void locked_map__free(struct locked_map *lm)
{
}

__u32 locked_map__lock_off(const struct locked_map *lm)
{
	absent();
	return 0;
}

int locked_map__add(struct locked_map *lm, const void *key,
		    __u32 off, __u32 size, __s64 delta, __u64 *old)
{
	return absent();
}

int locked_map__cmpxchg(struct locked_map *lm, const void *key,
			const void *expected, const void *desired,
			void *current, bool *exchanged)
{
	return absent();
}

int locked_map__add_fn(struct locked_map *lm, const struct bpf_insn *insns,
		       size_t insn_cnt, __u32 data_sz)
{
	return absent();
}

int locked_map__call(struct locked_map *lm, int fn, const void *key,
		     void *data, __u32 data_sz, __s64 *ret)
{
	return absent();
}
