// SPDX-License-Identifier: GPL-2.0
/*
 * Verifier rules for bpf_spin_lock: every annotated program of
 * progs/verifier.bpf.c is a case, plus the rules that need a map or a
 * process set up in a way a BPF object cannot describe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
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

struct elem {
	int cnt;
	struct bpf_spin_lock lock;
	int data[2];
};

static int use_map_without_btf(struct bpf_object *obj, void *ctx)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "amap");
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "nobtf", sizeof(int),
			    sizeof(struct elem), 2, NULL);
	if (fd < 0)
		return -errno;
	err = bpf_map__reuse_fd(m, fd);
	close(fd);
	return err;
}

/* A map created without BTF cannot be used with the lock helpers. */
static void map_needs_btf(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(verifier);
	static char log[1 << 16];
	int err;

	err = load_one_logged(&o, "lock_unlock", use_map_without_btf, NULL,
			      log, sizeof(log));
	/* 6.12 refuses misuse of the lock with EINVAL, 6.1 with EACCES */
	KT_ERR(t, err, strcmp(kt_base(), "6.1") ? EINVAL : EACCES, "load with a BTF-less map");
	if (!log_has(log, "map 'nobtf' has to have BTF in order to use bpf_spin_lock"))
		kt_fail(t, "verifier log lacks the BTF message; log:\n%s", log);
}

/* Write a short string to a /proc file; 0 or -1. */
static int write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int bad;

	if (!f)
		return -1;
	bad = fputs(val, f) < 0;
	return fclose(f) || bad ? -1 : 0;
}

/* Unprivileged users cannot call the lock helpers at all. */
static void unprivileged_rejected(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(verifier);
	static const char *knob = "/proc/sys/kernel/unprivileged_bpf_disabled";
	static char log[1 << 16];
	int status, err, off = 0;
	FILE *f = fopen(knob, "r");
	pid_t pid;

	/*
	 * Distribution configs (Debian: BPF_UNPRIV_DEFAULT_OFF) boot with 2,
	 * which root may lower for the test; 1 holds until the next boot.
	 */
	if (f) {
		if (fscanf(f, "%d", &off) != 1)
			off = 0;
		fclose(f);
	}
	if (off == 1) {
		kt_skip(t, "%s is 1: unprivileged BPF is off until reboot", knob);
		return;
	}
	if (off == 2 && write_file(knob, "0")) {
		kt_fail(t, "cannot set %s to 0", knob);
		return;
	}
	if (off == 2)
		kt_log(t, "%s was 2 (the distribution default): 0 for this case", knob);
	pid = fork();
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(100);
		err = load_one_logged(&o, "type_cgroup_skb", NULL, NULL, log, sizeof(log));
		if (err != -EINVAL)
			_exit(101);
		_exit(log_has(log, NO_LOCK_HELPER) ? 0 : 102);
	}
	if (!KT_OK(t, pid, "fork") || !KT_OK(t, waitpid(pid, &status, 0), "waitpid"))
		return;
	if (off == 2)
		write_file(knob, "2");
	KT_TRUE(t, WIFEXITED(status), "child exited");
	switch (WEXITSTATUS(status)) {
	case 0:
		break;
	case 100:
		kt_fail(t, "could not drop privileges");
		break;
	case 101:
		kt_fail(t, "unprivileged load did not fail with EINVAL");
		break;
	default:
		kt_fail(t, "unprivileged load failed without \"%s\"", NO_LOCK_HELPER);
	}
}

int main(int argc, char **argv)
{
	struct embedded_obj o = EMBEDDED_OBJ(verifier);
	static const struct kt_case extra[] = {
		{ "map_needs_btf", KT_FEATURE, map_needs_btf },
		{ "unprivileged_rejected", KT_COMMON, unprivileged_rejected },
	};
	struct kt_case *cases;
	int n, i;

	n = annotated_cases(&o, &cases);
	if (n < 0) {
		fprintf(stderr, "cannot read the programs of %s\n", o.name);
		return 1;
	}
	cases = realloc(cases, (n + KT_ARRAY_SIZE(extra)) * sizeof(*cases));
	for (i = 0; i < (int)KT_ARRAY_SIZE(extra); i++)
		cases[n++] = extra[i];
	return kt_main(argc, argv, "verifier", cases, n);
}
