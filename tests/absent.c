// SPDX-License-Identifier: GPL-2.0
/*
 * The baseline kernel (stock support removed, ours not yet added) must
 * really lack the feature, and lack it in the documented way: helpers
 * unknown to the verifier, BPF_F_LOCK refused, struct bpf_spin_lock plain
 * data. These cases pass only there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/version.h>

/*
 * What the verifier says of a helper the program type has no prototype
 * for: 6.12's check_helper_call() words it differently from 6.1's.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#define NO_LOCK_HELPER "program of this type cannot use helper bpf_spin_lock#93"
#else
#define NO_LOCK_HELPER "unknown func bpf_spin_lock#93"
#endif

#include "progs.h"

#define ENOTSUPP 524

struct locked {
	struct bpf_spin_lock lock;
	int var[16];
};

static void helpers_unknown(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(verifier);
	static char log[1 << 16];
	int err;

	err = load_one_logged(&o, "lock_unlock", NULL, NULL, log, sizeof(log));
	KT_ERR(t, err, EINVAL, "load of a program calling bpf_spin_lock");
	if (!log_has(log, NO_LOCK_HELPER))
		kt_fail(t, "verifier log lacks \"%s\":\n%s", NO_LOCK_HELPER, log);
}

static void flag_lock_refused(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(user_lock);
	struct bpf_object *obj = obj_load(t, &o, NULL);
	struct locked v = {};
	int key = 0, map;

	if (!obj)
		return;
	map = obj_map_fd(t, obj, "hash_map");
	KT_ERR(t, bpf_map_update_elem(map, &key, &v, BPF_F_LOCK), EINVAL,
	       "update with BPF_F_LOCK");
	KT_OK(t, bpf_map_update_elem(map, &key, &v, 0), "plain update");
	KT_ERR(t, bpf_map_lookup_elem_flags(map, &key, &v, BPF_F_LOCK), EINVAL,
	       "lookup with BPF_F_LOCK");
	bpf_object__close(obj);
}

/* The lock word is ordinary data: it round-trips through the syscalls. */
static void lock_is_plain_data(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(user_lock);
	struct bpf_object *obj = obj_load(t, &o, NULL);
	struct locked v = { .lock.val = 0xdeadbeef }, out;
	int key = 0, map;

	if (!obj)
		return;
	map = obj_map_fd(t, obj, "array_map");
	if (KT_OK(t, bpf_map_update_elem(map, &key, &v, 0), "update") &&
	    KT_OK(t, bpf_map_lookup_elem(map, &key, &out), "lookup"))
		KT_EQ(t, out.lock.val, 0xdeadbeef, "lock word read back");
	bpf_object__close(obj);
}

static const struct kt_case cases[] = {
	{ "helpers_unknown", KT_ABSENT, helpers_unknown },
	{ "flag_lock_refused", KT_ABSENT, flag_lock_refused },
	{ "lock_is_plain_data", KT_ABSENT, lock_is_plain_data },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "absent", cases, KT_ARRAY_SIZE(cases));
}
