/* SPDX-License-Identifier: GPL-2.0 */
/* Map values of the torture run, shared by torture.bpf.c and torture.c. */
#ifndef BPFLOCK_TORTURE_H
#define BPFLOCK_TORTURE_H

#include <linux/bpf.h>

#define NELEMS 4
#define NVARS 8
#define BIG_VARS 256

struct counter {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 cnt;
};

struct pattern {
	struct bpf_spin_lock lock;
	int var[NVARS];
};

/* big values, so that a torn copy is likely to be seen */
struct big {
	struct bpf_spin_lock lock;
	int var[BIG_VARS];
};

#endif
