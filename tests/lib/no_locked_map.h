/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libbpf's locked_map (patch 0020 of the 6.1 series) for trees whose
 * libbpf does not have it: stock trees, and the 6.12 base until its series
 * brings it. tests/Makefile force-includes this header and links
 * no_locked_map.c there; every call fails with EOPNOTSUPP. user_rmw's
 * cases that need locked_map skip on such a build of a base other than
 * 6.1 (BPFLOCK_NO_LOCKED_MAP), and fail on 6.1, whose series has it.
 */
#ifndef BPFLOCK_NO_LOCKED_MAP_H
#define BPFLOCK_NO_LOCKED_MAP_H

#define BPFLOCK_NO_LOCKED_MAP 1

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct bpf_insn;
struct locked_map;

struct locked_map_opts {
	size_t sz;
};

struct locked_map *locked_map__new(int map_fd, const struct locked_map_opts *opts);
void locked_map__free(struct locked_map *lm);
__u32 locked_map__lock_off(const struct locked_map *lm);
int locked_map__add(struct locked_map *lm, const void *key,
		    __u32 off, __u32 size, __s64 delta, __u64 *old);
int locked_map__cmpxchg(struct locked_map *lm, const void *key,
			const void *expected, const void *desired,
			void *current, bool *exchanged);
int locked_map__add_fn(struct locked_map *lm, const struct bpf_insn *insns,
		       size_t insn_cnt, __u32 data_sz);
int locked_map__call(struct locked_map *lm, int fn, const void *key,
		     void *data, __u32 data_sz, __s64 *ret);

#endif
