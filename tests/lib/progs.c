// SPDX-License-Identifier: GPL-2.0
/* See progs.h. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/btf.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <bpf/btf.h>

#include "progs.h"

#define LOG_SIZE (1 << 20)
#define MAX_MSGS 4

struct expect {
	const struct embedded_obj *obj;
	char prog[64];
	bool failure;
	int err;
	bool has_retval;
	bool load_only;		/* a type BPF_PROG_TEST_RUN cannot run */
	bool needs_error_injection;
	bool caps_bpf;		/* load with CAP_BPF and CAP_NET_ADMIN only */
	char only[16];		/* run on this base only (__only_on) */
	long long retval;
	int nmsg;
	char msg[MAX_MSGS][160];
};

static const struct { const char *name; int err; } errnos[] = {
	{ "EINVAL", EINVAL }, { "EACCES", EACCES }, { "EPERM", EPERM },
	{ "E2BIG", E2BIG }, { "EFAULT", EFAULT }, { "ENOTSUPP", 524 },
	{ "EOPNOTSUPP", EOPNOTSUPP },
};

static int errno_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < KT_ARRAY_SIZE(errnos); i++)
		if (!strcmp(errnos[i].name, name))
			return errnos[i].err;
	return -1;
}

static int silent_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_WARN && getenv("BPFLOCK_VERBOSE") ?
		vfprintf(stderr, fmt, ap) : 0;
}

static bool wanted(const char *name, const char *const *progs)
{
	for (; progs && *progs; progs++)
		if (!strcmp(name, *progs))
			return true;
	return false;
}

struct bpf_object *obj_open(struct kt *t, const struct embedded_obj *o,
			    const char *const *progs)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o->name);
	struct bpf_program *p;
	struct bpf_object *obj;

	libbpf_set_print(silent_print);
	obj = bpf_object__open_mem(o->data, o->size, &opts);
	if (!obj) {
		kt_fail(t, "cannot open BPF object %s: %s", o->name, strerror(errno));
		return NULL;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, wanted(bpf_program__name(p), progs));
	return obj;
}

struct bpf_object *obj_load(struct kt *t, const struct embedded_obj *o,
			    const char *const *progs)
{
	struct bpf_object *obj = obj_open(t, o, progs);
	int err;

	if (!obj)
		return NULL;
	err = bpf_object__load(obj);
	if (err) {
		kt_fail(t, "loading %s from %s: %s", progs && progs[0] ? progs[0] : "maps",
			o->name, strerror(-err));
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

int obj_prog_fd(struct kt *t, struct bpf_object *obj, const char *name)
{
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	if (!p || bpf_program__fd(p) < 0) {
		kt_fail(t, "program %s is not loaded", name);
		return -1;
	}
	return bpf_program__fd(p);
}

int obj_map_fd(struct kt *t, struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	if (!m || bpf_map__fd(m) < 0) {
		kt_fail(t, "map %s does not exist", name);
		return -1;
	}
	return bpf_map__fd(m);
}

int prog_run(int prog_fd, int repeat, __u32 *retval)
{
	char pkt[64] = { [12] = 0x08, [13] = 0x00 };	/* IPv4 ethertype */
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = pkt,
		.data_size_in = sizeof(pkt),
		.repeat = repeat,
	);
	int err;

	err = bpf_prog_test_run_opts(prog_fd, &opts);
	if (retval)
		*retval = opts.retval;
	return err;
}

void *prog_runner_thread(void *arg)
{
	struct prog_runner *r = arg;
	__u32 retval;
	long i;

	for (i = 0; i < r->runs && !(r->stop && *r->stop); i++) {
		if (prog_run(r->prog_fd, r->repeat, &retval)) {
			r->err = errno;
			break;
		}
		if (retval != r->want) {
			r->bad++;
			r->bad_retval = retval;
		}
	}
	r->done = i;
	r->finished = 1;
	return NULL;
}

long prog_run_threads(struct kt *t, int prog_fd, int n, long runs, int repeat, __u32 want)
{
	struct prog_runner r[PROG_RUN_MAX_THREADS];
	pthread_t th[PROG_RUN_MAX_THREADS];
	long bad = 0;
	int i;

	if (n > PROG_RUN_MAX_THREADS)
		n = PROG_RUN_MAX_THREADS;
	for (i = 0; i < n; i++) {
		r[i] = (struct prog_runner){ .prog_fd = prog_fd, .runs = runs,
					     .repeat = repeat, .want = want };
		pthread_create(&th[i], NULL, prog_runner_thread, &r[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		if (r[i].err)
			kt_fail(t, "thread %d: test_run failed: %s", i, strerror(r[i].err));
		if (r[i].bad)
			kt_log(t, "thread %d: %ld runs broke an invariant (last return %u)",
			       i, r[i].bad, r[i].bad_retval);
		bad += r[i].bad;
	}
	return bad;
}

int load_one_logged(const struct embedded_obj *o, const char *prog,
		    int (*prepare)(struct bpf_object *obj, void *ctx), void *ctx,
		    char *log, size_t log_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o->name);
	struct bpf_program *p;
	struct bpf_object *obj;
	int err;

	libbpf_set_print(silent_print);
	obj = bpf_object__open_mem(o->data, o->size, &opts);
	if (!obj)
		return -errno;
	bpf_object__for_each_program(p, obj) {
		bool mine = !strcmp(bpf_program__name(p), prog);

		bpf_program__set_autoload(p, mine);
		if (mine) {
			log[0] = 0;
			bpf_program__set_log_buf(p, log, log_size);
			bpf_program__set_log_level(p, 1);
		}
	}
	err = prepare ? prepare(obj, ctx) : 0;
	if (!err)
		err = bpf_object__load(obj);
	bpf_object__close(obj);
	return err;
}

/* A tag of this kernel's base ("expect@6.12:..."), past its prefix, or NULL. */
static const char *base_tag(const char *tag)
{
	size_t n = strlen(kt_base());

	if (strncmp(tag, "expect@", 7) || strncmp(tag + 7, kt_base(), n) || tag[7 + n] != ':')
		return NULL;
	return tag + 8 + n;
}

/* The next tag of function @func_id itself after type id *@i, or NULL */
static const char *next_func_tag(const struct btf *btf, __u32 func_id, __u32 *i)
{
	__u32 n = btf__type_cnt(btf);

	while (++*i < n) {
		const struct btf_type *tt = btf__type_by_id(btf, *i);

		if (btf_is_decl_tag(tt) && tt->type == func_id &&
		    btf_decl_tag(tt)->component_idx == -1)
			return btf__name_by_offset(btf, tt->name_off);
	}
	return NULL;
}

/* After the general tags: what this kernel's base does instead. */
static void read_base_tags(const struct btf *btf, __u32 func_id, struct expect *e)
{
	const char *name, *tag;
	bool own_msgs = false;
	__u32 i = 0;

	while ((name = next_func_tag(btf, func_id, &i))) {
		tag = base_tag(name);
		if (!tag)
			continue;
		if (!strcmp(tag, "success")) {
			e->failure = false;
			e->nmsg = 0;
		} else if (!strcmp(tag, "failure")) {
			e->failure = true;
		} else if (!strncmp(tag, "errno=", 6)) {
			e->err = errno_by_name(tag + 6);
		} else if (!strncmp(tag, "msg=", 4)) {
			if (!own_msgs)
				e->nmsg = 0;
			own_msgs = true;
			if (e->nmsg < MAX_MSGS)
				snprintf(e->msg[e->nmsg++], sizeof(e->msg[0]), "%s", tag + 4);
		}
	}
}

/* Collect the "expect:" decl tags attached to the program's function. */
static void read_tags(const struct btf *btf, __u32 func_id, struct expect *e)
{
	const char *tag;
	__u32 i = 0;

	while ((tag = next_func_tag(btf, func_id, &i))) {
		if (strncmp(tag, "expect:", 7))
			continue;
		tag += 7;
		if (!strcmp(tag, "failure"))
			e->failure = true;
		else if (!strncmp(tag, "errno=", 6))
			e->err = errno_by_name(tag + 6);
		else if (!strcmp(tag, "load_only"))
			e->load_only = true;
		else if (!strcmp(tag, "needs=error_injection"))
			e->needs_error_injection = true;
		else if (!strcmp(tag, "caps=bpf"))
			e->caps_bpf = true;
		else if (!strncmp(tag, "only=", 5))
			snprintf(e->only, sizeof(e->only), "%s", tag + 5);
		else if (!strncmp(tag, "retval=", 7)) {
			e->has_retval = true;
			e->retval = strtoll(tag + 7, NULL, 0);
		} else if (!strncmp(tag, "msg=", 4) && e->nmsg < MAX_MSGS)
			snprintf(e->msg[e->nmsg++], sizeof(e->msg[0]), "%s", tag + 4);
	}
	read_base_tags(btf, func_id, e);
}

static bool has_tag(const struct btf *btf, __u32 func_id, const char *want)
{
	__u32 i, n = btf__type_cnt(btf);

	for (i = 1; i < n; i++) {
		const struct btf_type *tt = btf__type_by_id(btf, i);

		if (btf_is_decl_tag(tt) && tt->type == func_id &&
		    !strcmp(btf__name_by_offset(btf, tt->name_off), want))
			return true;
	}
	return false;
}

/*
 * Does a verifier line of the log contain msg? Lines starting with ';'
 * quote the program's source (BTF line info) and do not count: the source
 * may well spell the expected message itself.
 */
bool log_has(const char *log, const char *msg)
{
	const char *line = log, *hit;

	while ((hit = strstr(line, msg))) {
		const char *start = hit;

		while (start > log && start[-1] != '\n')
			start--;
		if (*start != ';')
			return true;
		line = hit + 1;
	}
	return false;
}

static void print_log_tail(struct kt *t, const char *log)
{
	size_t len = strlen(log);
	const char *p = len > 600 ? log + len - 600 : log;

	kt_log(t, "verifier log (tail):\n%s", p);
}

bool kernel_has_error_injection(void)
{
	static int has = -1;
	char line[256];
	FILE *f;

	if (has >= 0)
		return has;
	has = 0;
	f = fopen("/proc/kallsyms", "r");
	while (f && !has && fgets(line, sizeof(line), f))
		has = strstr(line, " within_error_injection_list") != NULL;
	if (f)
		fclose(f);
	return has;
}

/*
 * This thread's effective capabilities: all it is permitted (want ==
 * NULL), or only CAP_BPF and CAP_NET_ADMIN. The permitted set is left
 * alone, so the full set comes back afterwards.
 */
int progs_set_caps(bool bpf_only)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	if (bpf_only) {
		d[0].effective = 1U << CAP_NET_ADMIN;
		d[1].effective = 1U << (CAP_BPF - 32);
	} else {
		d[0].effective = d[0].permitted;
		d[1].effective = d[1].permitted;
	}
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/* Load one program as the case asks: with every capability or few. */
static int load_as_asked(struct kt *t, const struct expect *e, char *log)
{
	int err;

	if (e->caps_bpf && !KT_OK(t, progs_set_caps(true), "drop to CAP_BPF + CAP_NET_ADMIN"))
		return -EPERM;
	err = load_one_logged(e->obj, e->prog, NULL, NULL, log, LOG_SIZE);
	if (e->caps_bpf && !KT_OK(t, progs_set_caps(false), "restore the capabilities"))
		return -EPERM;
	return err;
}

static void run_annotated(struct kt *t, const void *arg)
{
	const struct expect *e = arg;
	char *log;
	struct bpf_object *obj;
	int i, err, fd;
	__u32 retval;

	if (e->only[0] && strcmp(e->only, kt_base())) {
		kt_skip(t, "a case of the %s base only (its rule or hole is that tree's)", e->only);
		return;
	}
	if (e->needs_error_injection && !kernel_has_error_injection()) {
		kt_skip(t, "no error-injection list in this kernel (CONFIG_FUNCTION_ERROR_INJECTION off, as in Debian's config): nothing takes fentry.s/fexit.s/fmod_ret.s");
		return;
	}
	log = calloc(1, LOG_SIZE);

	err = load_as_asked(t, e, log);
	if (t->failed)
		goto out;
	if (e->failure) {
		if (!err) {
			kt_fail(t, "the verifier accepted %s; it must reject it", e->prog);
			goto out;
		}
		if (e->err > 0 && -err != e->err)
			kt_fail(t, "load errno: got %d (%s), want %d (%s)", -err,
				strerror(-err), e->err, strerror(e->err));
		for (i = 0; i < e->nmsg; i++)
			if (!log_has(log, e->msg[i]))
				kt_fail(t, "verifier log lacks \"%s\"", e->msg[i]);
		if (t->failed)
			print_log_tail(t, log);
		goto out;
	}
	if (err) {
		kt_fail(t, "the verifier rejected %s: %s", e->prog, strerror(-err));
		print_log_tail(t, log);
		goto out;
	}
	obj = obj_load(t, e->obj, (const char *const[]){ e->prog, NULL });
	if (!obj)
		goto out;
	fd = obj_prog_fd(t, obj, e->prog);
	if (fd >= 0 && !e->load_only && KT_OK(t, prog_run(fd, 1, &retval), "test_run") &&
	    e->has_retval)
		KT_EQ(t, retval, e->retval, "return value");
	bpf_object__close(obj);
out:
	free(log);
}

/*
 * The case's kind on the one base that decided otherwise, from a tag
 * __on("6.12", "kind=feature"); read whatever the base under test, since
 * `--list` runs on the host and names the base ($BASE) itself.
 */
static void read_base_kind(const struct btf *btf, __u32 func_id, struct kt_case *c)
{
	static const char *const kinds[] = {
		[KT_FEATURE] = "feature", [KT_COMMON] = "common",
		[KT_ABSENT] = "absent", [KT_BEYOND] = "beyond",
	};
	const char *tag, *kind;
	__u32 i = 0, k;

	while ((tag = next_func_tag(btf, func_id, &i))) {
		kind = strstr(tag, ":kind=");
		if (strncmp(tag, "expect@", 7) || !kind)
			continue;
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			if (strcmp(kind + 6, kinds[k]))
				continue;
			c->base = strndup(tag + 7, kind - tag - 7);
			c->base_kind = k;
		}
	}
}

int annotated_cases(const struct embedded_obj *o, struct kt_case **cases)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o->name);
	struct kt_case *out = NULL;
	struct bpf_program *p;
	struct bpf_object *obj;
	const struct btf *btf;
	int n = 0;

	libbpf_set_print(silent_print);
	obj = bpf_object__open_mem(o->data, o->size, &opts);
	if (!obj)
		return -1;
	btf = bpf_object__btf(obj);
	bpf_object__for_each_program(p, obj) {
		const char *name = bpf_program__name(p);
		int id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
		struct expect *e;

		if (id < 0)
			continue;
		e = calloc(1, sizeof(*e));
		out = realloc(out, (n + 1) * sizeof(*out));
		if (!e || !out)
			return -1;
		e->obj = o;
		snprintf(e->prog, sizeof(e->prog), "%s", name);
		read_tags(btf, id, e);
		out[n] = (struct kt_case){
			.name = strdup(name),
			.kind = has_tag(btf, id, "expect:kind=common") ? KT_COMMON :
				has_tag(btf, id, "expect:kind=beyond") ? KT_BEYOND :
				KT_FEATURE,
			.fn = run_annotated,
			.arg = e,
		};
		read_base_kind(btf, id, &out[n]);
		n++;
	}
	/* Keep the object's BTF alive: names above point into it. */
	*cases = out;
	return n;
}

void pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

int sysctl_get(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

bool sysctl_set(const char *path, int v)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	ok = fprintf(f, "%d\n", v) > 0;
	return fclose(f) == 0 && ok;
}

bool has_bytes(const __u8 *img, __u32 len, const __u8 *pat, __u32 n)
{
	__u32 i;

	for (i = 0; i + n <= len; i++)
		if (!memcmp(img + i, pat, n))
			return true;
	return false;
}

long long fdinfo_value(int fd, const char *name)
{
	char path[64], line[256];
	long long v = -1;
	size_t n = strlen(name);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':')
			v = strtoll(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

void check_lock_contention(struct kt *t, int prog_fd, int map_fd, long runs, int repeat,
			   int max_seconds)
{
	long long c0, w0, c1, w1;
	struct timespec t0, t1;
	int rounds = 0;

	prog_run_threads(t, prog_fd, 1, runs, repeat, 0);
	c0 = fdinfo_value(map_fd, "lock_contended");
	w0 = fdinfo_value(map_fd, "lock_wait_ns");
	kt_log(t, "one thread, %ld runs: lock_contended %lld, lock_wait_ns %lld", runs * repeat,
	       c0, w0);
	if (!KT_EQ(t, c0, 0, "lock_contended without contention") ||
	    !KT_EQ(t, w0, 0, "lock_wait_ns without contention"))
		return;
	/* Four threads contend only while their vCPUs run at once, which a
	 * busy host may not let them do for a while: run rounds until the
	 * counters move, for at most max_seconds.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		prog_run_threads(t, prog_fd, 4, 2 * runs, repeat, 0);
		rounds++;
		c1 = fdinfo_value(map_fd, "lock_contended");
		w1 = fdinfo_value(map_fd, "lock_wait_ns");
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((c1 <= 0 || w1 <= 0) && t1.tv_sec - t0.tv_sec < max_seconds);
	kt_log(t, "four threads, %d round(s) of %ld runs in %ld s: lock_contended %lld, lock_wait_ns %lld",
	       rounds, 4 * 2 * runs * repeat, (long)(t1.tv_sec - t0.tv_sec), c1, w1);
	KT_TRUE(t, c1 > 0, "lock_contended rises under contention");
	KT_TRUE(t, w1 > 0, "lock_wait_ns rises under contention");
}

int funcs_btf_load(int n, const int *nargs, __u32 *ids)
{
	struct btf *b = btf__new_empty();
	int i32, ptr, proto, i, j, fd;
	const void *raw;
	char name[16];
	__u32 size;

	if (!b)
		return -ENOMEM;
	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	ptr = btf__add_ptr(b, 0);
	for (i = 0; i < n; i++) {
		proto = btf__add_func_proto(b, i32);
		for (j = 0; j < nargs[i]; j++)
			btf__add_func_param(b, "p", ptr);
		snprintf(name, sizeof(name), "f%d", i);
		ids[i] = btf__add_func(b, name, BTF_FUNC_STATIC, proto);
	}
	raw = btf__raw_data(b, &size);
	fd = bpf_btf_load(raw, size, NULL);
	btf__free(b);
	return fd < 0 ? -errno : fd;
}
