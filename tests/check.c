// SPDX-License-Identifier: GPL-2.0
/*
 * bpflock-check: is the running kernel one with bpflock? It loads a socket
 * filter that takes a bpf_spin_lock (stock 6.1 refuses that program type
 * any lock), runs it from every CPU's worth of threads and checks the
 * locked counter. Prints one line; exit 0 = bpflock, 1 = not, 2 = cannot
 * tell (not root, no BPF).
 *
 * usage: bpflock-check [-v]   (-v: the verifier's log when the load fails)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define THREADS 4
#define RUNS 2500

extern const char _binary_check_bpf_o_start[];
extern const char _binary_check_bpf_o_end[];

static char log_buf[1 << 16];
static int prog_fd;

struct check_val {
	struct bpf_spin_lock lock;
	__u64 runs;
	__u64 twin;
};

static void *runner(void *arg)
{
	unsigned char pkt[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = RUNS);

	*(int *)arg = bpf_prog_test_run_opts(prog_fd, &o) ? -errno : 0;
	return NULL;
}

/* The verifier's reason: its log's last line other than the statistics. */
static const char *last_line(char *log)
{
	char *p;

	for (;;) {
		size_t len = strlen(log);

		while (len && (log[len - 1] == '\n' || log[len - 1] == ' '))
			log[--len] = '\0';
		p = strrchr(log, '\n');
		p = p ? p + 1 : log;
		if (p == log || (strncmp(p, "processed ", 10) && strncmp(p, "verification time", 17)))
			return p;
		*p = '\0';
	}
}

int main(int argc, char **argv)
{
	bool verbose = argc > 1 && !strcmp(argv[1], "-v");
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "bpflock_check",
		    .kernel_log_buf = log_buf, .kernel_log_size = sizeof(log_buf),
		    .kernel_log_level = 1);
	struct check_val v = {};
	struct bpf_object *obj;
	pthread_t th[THREADS];
	int err[THREADS], i, key = 0;
	struct utsname u;

	uname(&u);
	libbpf_set_print(NULL);
	obj = bpf_object__open_mem(_binary_check_bpf_o_start,
				   _binary_check_bpf_o_end - _binary_check_bpf_o_start, &oo);
	if (!obj) {
		printf("bpflock-check: %s: cannot open the check program: %s\n", u.release,
		       strerror(errno));
		return 2;
	}
	if (bpf_object__load(obj)) {
		int e = errno;

		if (e == EPERM) {
			printf("bpflock-check: %s: run me as root (BPF needs CAP_BPF)\n", u.release);
			return 2;
		}
		printf("bpflock-check: %s: NOT bpflock: a socket filter holding a bpf_spin_lock "
		       "was refused: %s\n", u.release, log_buf[0] ? last_line(log_buf) : strerror(e));
		if (verbose)
			fputs(log_buf, stdout);
		return 1;
	}
	prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "check_lock"));
	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, runner, &err[i]);
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		if (err[i]) {
			printf("bpflock-check: %s: the check program loaded but did not run: %s\n",
			       u.release, strerror(-err[i]));
			return 2;
		}
	}
	bpf_map_lookup_elem_flags(bpf_map__fd(bpf_object__find_map_by_name(obj, "check_map")),
				  &key, &v, BPF_F_LOCK);
	if (v.runs != THREADS * RUNS || v.twin != v.runs) {
		printf("bpflock-check: %s: locked counter is %llu/%llu, expected %d: lock broken\n",
		       u.release, (unsigned long long)v.runs, (unsigned long long)v.twin,
		       THREADS * RUNS);
		return 1;
	}
	printf("bpflock-check: %s: bpflock: a socket filter counted %llu runs from %d threads "
	       "under bpf_spin_lock, none lost\n", u.release, (unsigned long long)v.runs, THREADS);
	bpf_object__close(obj);
	return 0;
}
