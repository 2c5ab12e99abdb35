// SPDX-License-Identifier: GPL-2.0
/*
 * The tree's bpftool with the lock keyword (tests/Makefile builds it into
 * the guest's /usr/sbin): "map show" gives the offset of the values' lock
 * (spin_lock_off, read from their BTF); "map update", "lookup" and "dump"
 * take "lock" to write and read values under it (BPF_F_LOCK) and refuse
 * it, saying why, on maps whose values hold none.
 *
 * What bpftool reads from BTF and refuses by itself is the same on every
 * kernel ("common"; baseline keeps struct bpf_spin_lock as plain data, so
 * such a map is still created and shown). What needs BPF_F_LOCK is a
 * "feature": stock has it, baseline refuses it, and so baseline is where
 * bpftool's view and the kernel's disagree.
 *
 * Dump under contention: tc programs on every vCPU rewrite whole random
 * elements of lock_hash (64 bytes on each side of the lock) under the
 * lock while "bpftool -j map dump ... lock" runs again and again.
 * Invariant: no printed element whose fields disagree. The same dumps
 * without "lock" are counted and logged, not judged.
 */
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/btf.h>

#include "progs.h"

#define BPFTOOL "/usr/sbin/bpftool"
#define MAX_CPUS 8
#define MAX_WORDS 256
#define REPEAT 50
#define KEYS 16
#define HALF 8
#define NO_LOCK "map values hold no bpf_spin_lock; drop 'lock'"

/* progs/bpftool.bpf.c */
struct elem {
	__u64 a[HALF];
	struct bpf_spin_lock lock;
	__u64 b[HALF];
};

struct plain {
	__u64 a[HALF];
	__u64 b[HALF];
};

/* One run of bpftool: its exit status and what it printed. */
struct tool {
	int status;		/* exit status; -1 if killed by a signal */
	char *out;		/* stdout, NUL-terminated (malloc'ed) */
	size_t len, cap;
	char err[1024];		/* the start of stderr, NUL-terminated */
	size_t err_len;
};

static void tool_free(struct tool *r)
{
	free(r->out);
	r->out = NULL;
}

/* Read what one of the child's pipes has; false at its end. */
static bool tool_read(struct tool *r, int fd, bool is_out)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n <= 0)
		return false;
	if (is_out) {
		if (r->len + n + 1 > r->cap) {
			r->cap = (r->len + n + 1) * 2;
			r->out = realloc(r->out, r->cap);
		}
		memcpy(r->out + r->len, buf, n);
		r->len += n;
		r->out[r->len] = 0;
	} else if (r->err_len < sizeof(r->err) - 1) {
		if ((size_t)n > sizeof(r->err) - 1 - r->err_len)
			n = sizeof(r->err) - 1 - r->err_len;
		memcpy(r->err + r->err_len, buf, n);
		r->err_len += n;
		r->err[r->err_len] = 0;
	}
	return true;
}

/* Run bpftool with the space-separated words of the formatted line. */
static __attribute__((format(printf, 3, 4)))
bool tool_run(struct kt *t, struct tool *r, const char *fmt, ...)
{
	char line[4096], *argv[MAX_WORDS + 2], *w, *save;
	struct pollfd pfd[2];
	int out[2], err[2], n = 0, status, open = 2, i;
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	argv[n++] = "bpftool";
	for (w = strtok_r(line, " ", &save); w && n <= MAX_WORDS; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	memset(r, 0, sizeof(*r));
	r->out = calloc(1, 1);
	if (w || !r->out)
		return kt_fail(t, "bpftool command too long");
	if (pipe(out) || pipe(err))
		return kt_fail(t, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return kt_fail(t, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		execv(BPFTOOL, argv);
		_exit(127);	/* the exit status says it: not found */
	}
	close(out[1]);
	close(err[1]);
	pfd[0] = (struct pollfd){ .fd = out[0], .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = err[0], .events = POLLIN };
	while (open) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
		for (i = 0; i < 2; i++) {
			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			if (!tool_read(r, pfd[i].fd, i == 0)) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open--;
			}
		}
	}
	for (i = 0; i < 2; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	waitpid(pid, &status, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return true;
}

/* Bytes as bpftool's DATA: "0x01 0x02 ..." */
static const char *hex_words(char *buf, const void *data, size_t n)
{
	const unsigned char *b = data;
	char *w = buf;
	size_t i;

	for (i = 0; i < n; i++)
		w += sprintf(w, "%s0x%02x", i ? " " : "", b[i]);
	return buf;
}

/*
 * The next "value":["0x..",...] of bpftool's JSON after *pos, into v
 * (n bytes). 1: one read; 0: none left; -1: malformed.
 */
static int next_json_value(const char **pos, void *v, size_t n)
{
	const char *p = strstr(*pos, "\"value\":[");
	unsigned char *b = v;
	char *end;
	size_t i;

	if (!p)
		return 0;
	p += strlen("\"value\":[");
	for (i = 0; i < n; i++) {
		while (*p == ' ' || *p == ',')
			p++;
		if (strncmp(p, "\"0x", 3))
			return -1;
		b[i] = strtoul(p + 3, &end, 16);
		if (*end != '"')
			return -1;
		p = end + 1;
	}
	if (*p != ']')
		return -1;
	*pos = p;
	return 1;
}

/* spin_lock_off in "bpftool -j map show" output, -1 if absent. */
static long json_lock_off(const char *out)
{
	const char *p = strstr(out, "\"spin_lock_off\":");

	return p ? strtol(p + strlen("\"spin_lock_off\":"), NULL, 10) : -1;
}

/* The line of text that holds needle ("" if none). */
static const char *line_of(const char *text, const char *needle)
{
	static char line[512];
	const char *p = strstr(text, needle), *start, *end;

	line[0] = 0;
	if (!p)
		return line;
	for (start = p; start > text && start[-1] != '\n'; start--)
		;
	end = strchrnul(p, '\n');
	snprintf(line, sizeof(line), "%.*s", (int)(end - start), start);
	return line;
}

static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* A run that must succeed: exit status 0, nothing on stderr. */
static bool tool_ok(struct kt *t, struct tool *r, const char *what)
{
	if (r->status == 0 && !r->err_len)
		return true;
	return kt_fail(t, "%s: exit status %d, stderr: %s", what, r->status, r->err);
}

/*
 * A run that must fail: its exit status and message. bpftool exits with
 * 255 after its own errors, with the errno's negation after the kernel's.
 */
static bool tool_refused(struct kt *t, struct tool *r, int status, const char *text,
			 const char *msg)
{
	KT_EQ(t, r->status, status, "exit status");
	if (!strstr(text, msg))
		return kt_fail(t, "output lacks \"%s\": %s", msg, text);
	return !t->failed;
}

/* "map show" of the object's maps, plain and JSON: the lock and its place. */
static void show_lock_off(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(bpftool);
	struct bpf_object *obj = obj_load(t, &o, NULL);
	__u32 lock_id, plain_id;
	struct tool r;

	if (!obj)
		return;
	lock_id = map_id(obj_map_fd(t, obj, "lock_hash"));
	plain_id = map_id(obj_map_fd(t, obj, "plain_hash"));
	if (tool_run(t, &r, "map show id %u", lock_id) && tool_ok(t, &r, "map show") &&
	    !strstr(line_of(r.out, "value 136B"), "  spin_lock_off 64"))
		kt_fail(t, "map show of lock_hash lacks \"spin_lock_off 64\" on the line of the sizes:\n%s",
			r.out);
	tool_free(&r);
	if (tool_run(t, &r, "-j map show id %u", lock_id) && tool_ok(t, &r, "-j map show"))
		KT_EQ(t, json_lock_off(r.out), 64, "JSON spin_lock_off of lock_hash");
	tool_free(&r);
	if (tool_run(t, &r, "map show id %u", plain_id) && tool_ok(t, &r, "map show") &&
	    strstr(r.out, "spin_lock_off"))
		kt_fail(t, "map show of plain_hash names a lock:\n%s", r.out);
	tool_free(&r);
	if (tool_run(t, &r, "-j map show id %u", plain_id) && tool_ok(t, &r, "-j map show"))
		KT_EQ(t, json_lock_off(r.out), -1, "JSON spin_lock_off of plain_hash (none)");
	tool_free(&r);
	bpf_object__close(obj);
}

/* Value layouts, as tests/btf_maps.c builds them by hand. */
enum shape { TOP_LEVEL, TYPEDEF, DATASEC, TWO_LOCKS, NESTED, MISALIGNED, WRONG_SIZE,
	     UNION_VALUE, NR_SHAPES };

/*
 * 6.12 finds a lock in nested structs too, and refuses to create a map
 * whose value has two locks (E2BIG) or a misaligned one (EFAULT).
 */
static const struct {
	const char *name;
	int lock_off;		/* -1: the kernel finds no lock there */
	int lock_off_612;	/* the same on 6.12 */
	int create_err_612;	/* 6.12 refuses the map with this errno */
} shapes[] = {
	[TOP_LEVEL] = { "struct { int cnt; struct bpf_spin_lock l; }", 4, 4 },
	[TYPEDEF] = { "typedef of that struct", 4, 4 },
	[DATASEC] = { "data section { int cnt; struct bpf_spin_lock glock; }", 4, 4 },
	[TWO_LOCKS] = { "struct { lock a, b; int c; }", -1, -1, E2BIG },
	[NESTED] = { "struct { int cnt; struct { int x; lock l; } in; }", -1, 8 },
	[MISALIGNED] = { "struct { short s; lock l (offset 2); short t; }", -1, -1, EFAULT },
	[WRONG_SIZE] = { "struct { int cnt; 8-byte struct bpf_spin_lock l; }", -1, -1 },
	[UNION_VALUE] = { "union { lock l; int x; }", -1, -1 },
};

/* An array map of one element whose value has that shape; fd or -errno. */
static int shape_map(enum shape s)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	struct btf *b = btf__new_empty();
	int i32, i16, lock, big, v = -1, cnt, glock, err, fd;

	if (!b)
		return -ENOMEM;
	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	i16 = btf__add_int(b, "short", 2, BTF_INT_SIGNED);
	lock = btf__add_struct(b, "bpf_spin_lock", 4);
	btf__add_field(b, "val", i32, 0, 0);
	switch (s) {
	case TOP_LEVEL:
	case TYPEDEF:
		v = btf__add_struct(b, "val", 8);
		btf__add_field(b, "cnt", i32, 0, 0);
		btf__add_field(b, "l", lock, 32, 0);
		if (s == TYPEDEF)
			v = btf__add_typedef(b, "val_t", v);
		break;
	case DATASEC:
		cnt = btf__add_var(b, "cnt", BTF_VAR_GLOBAL_ALLOCATED, i32);
		glock = btf__add_var(b, "glock", BTF_VAR_GLOBAL_ALLOCATED, lock);
		v = btf__add_datasec(b, ".data.locks", 8);
		btf__add_datasec_var_info(b, cnt, 0, 4);
		btf__add_datasec_var_info(b, glock, 4, 4);
		break;
	case TWO_LOCKS:
		v = btf__add_struct(b, "val", 12);
		btf__add_field(b, "a", lock, 0, 0);
		btf__add_field(b, "b", lock, 32, 0);
		btf__add_field(b, "c", i32, 64, 0);
		break;
	case NESTED:
		big = btf__add_struct(b, "inner", 8);
		btf__add_field(b, "x", i32, 0, 0);
		btf__add_field(b, "l", lock, 32, 0);
		v = btf__add_struct(b, "val", 12);
		btf__add_field(b, "cnt", i32, 0, 0);
		btf__add_field(b, "in", big, 32, 0);
		break;
	case MISALIGNED:
		v = btf__add_struct(b, "val", 8);
		btf__add_field(b, "s", i16, 0, 0);
		btf__add_field(b, "l", lock, 16, 0);
		btf__add_field(b, "t", i16, 48, 0);
		break;
	case WRONG_SIZE:
		big = btf__add_struct(b, "bpf_spin_lock", 8);
		btf__add_field(b, "val", i32, 0, 0);
		btf__add_field(b, "pad", i32, 32, 0);
		v = btf__add_struct(b, "val", 12);
		btf__add_field(b, "cnt", i32, 0, 0);
		btf__add_field(b, "l", big, 32, 0);
		break;
	case UNION_VALUE:
		v = btf__add_union(b, "val", 4);
		btf__add_field(b, "l", lock, 0, 0);
		btf__add_field(b, "x", i32, 0, 0);
		break;
	default:
		break;
	}
	err = v < 0 ? v : btf__load_into_kernel(b);
	if (err) {
		btf__free(b);
		return err;
	}
	opts.btf_fd = btf__fd(b);
	opts.btf_key_type_id = i32;
	opts.btf_value_type_id = v;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "shape", 4, btf__resolve_size(b, v), 1, &opts);
	if (fd < 0)
		fd = -errno;
	btf__free(b);
	return fd;
}

/*
 * For every layout, bpftool shows a lock exactly where the kernel takes
 * one: BPF_F_LOCK on the element succeeds, or fails with EINVAL.
 */
static void show_agrees_with_kernel(struct kt *t, const void *arg)
{
	char buf[64], what[128];
	int s, fd, key = 0, kernel;
	struct tool r;

	for (s = 0; s < NR_SHAPES; s++) {
		bool b612 = !strcmp(kt_base(), "6.12");
		int lock_off = b612 ? shapes[s].lock_off_612 : shapes[s].lock_off;

		fd = shape_map(s);
		snprintf(what, sizeof(what), "%s: map creation", shapes[s].name);
		if (b612 && shapes[s].create_err_612) {
			KT_ERR(t, fd, shapes[s].create_err_612, what);
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (!KT_OK(t, fd, what))
			continue;
		if (tool_run(t, &r, "-j map show id %u", map_id(fd)) && tool_ok(t, &r, "-j map show")) {
			snprintf(what, sizeof(what), "%s: bpftool's spin_lock_off", shapes[s].name);
			KT_EQ(t, json_lock_off(r.out), lock_off, what);
		}
		tool_free(&r);
		kernel = bpf_map_lookup_elem_flags(fd, &key, buf, BPF_F_LOCK) ? -errno : 1;
		if (kernel == -EINVAL)
			kernel = 0;
		snprintf(what, sizeof(what), "%s: the kernel takes BPF_F_LOCK (1) or EINVAL (0)",
			 shapes[s].name);
		KT_EQ(t, kernel, lock_off >= 0, what);
		close(fd);
	}
}

static void fill(struct elem *e, __u64 seed)
{
	int i;

	for (i = 0; i < HALF; i++) {
		e->a[i] = seed + i;
		e->b[i] = seed + HALF + i;
	}
	e->lock.val = 0xdeadbeef;
}

/* Update with lock (and exist / noexist), then look up and dump with it. */
static void lock_roundtrip(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(bpftool);
	struct bpf_object *obj = obj_load(t, &o, NULL);
	struct elem in, got;
	char k[64], v[1024];
	const char *p;
	__u32 key = 3, id;
	struct tool r;
	int fd;

	if (!obj)
		return;
	fd = obj_map_fd(t, obj, "lock_hash");
	id = map_id(fd);
	hex_words(k, &key, sizeof(key));
	fill(&in, 0x1111111100000000ull);
	if (!tool_run(t, &r, "map update id %u key %s value %s lock", id, k,
		      hex_words(v, &in, sizeof(in))) || !tool_ok(t, &r, "update ... lock"))
		goto out;
	tool_free(&r);
	if (!tool_run(t, &r, "-j map lookup id %u key %s lock", id, k) ||
	    !tool_ok(t, &r, "-j lookup ... lock"))
		goto out;
	p = r.out;
	if (KT_EQ(t, next_json_value(&p, &got, sizeof(got)), 1, "value in the lookup's JSON")) {
		KT_TRUE(t, !memcmp(got.a, in.a, sizeof(in.a)) && !memcmp(got.b, in.b, sizeof(in.b)),
			"the value read back");
		KT_EQ(t, got.lock.val, 0, "the lock word as printed");
	}
	tool_free(&r);

	fill(&in, 0x2222222200000000ull);
	if (tool_run(t, &r, "map update id %u key %s value %s lock exist", id, k,
		     hex_words(v, &in, sizeof(in))))
		tool_ok(t, &r, "update ... lock exist");
	tool_free(&r);
	if (tool_run(t, &r, "map update id %u key %s value %s noexist lock", id, k, v))
		tool_refused(t, &r, (__u8)-EEXIST, r.err, "Error: update failed: File exists");
	tool_free(&r);
	if (KT_OK(t, bpf_map_lookup_elem_flags(fd, &key, &got, BPF_F_LOCK), "BPF_F_LOCK lookup"))
		KT_TRUE(t, !memcmp(got.a, in.a, sizeof(in.a)) && !memcmp(got.b, in.b, sizeof(in.b)),
			"the kernel holds what \"update ... lock exist\" wrote");
	if (!tool_run(t, &r, "-j map dump id %u lock", id) || !tool_ok(t, &r, "-j dump ... lock"))
		goto out;
	p = r.out;
	if (KT_EQ(t, next_json_value(&p, &got, sizeof(got)), 1, "one element in the dump"))
		KT_TRUE(t, !memcmp(got.b, in.b, sizeof(in.b)), "the dumped value");
	KT_EQ(t, next_json_value(&p, &got, sizeof(got)), 0, "no second element");
out:
	tool_free(&r);
	bpf_object__close(obj);
}

/* "lock" where it cannot apply: bpftool's own error, exit status 255. */
static void lock_refused(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(bpftool);
	struct bpf_object *obj = obj_load(t, &o, NULL);
	char pv[1024], lv[1024];
	struct plain p = {};
	struct elem e = {};
	__u32 lock_id, plain_id;
	struct tool r;
	unsigned int i;

	if (!obj)
		return;
	lock_id = map_id(obj_map_fd(t, obj, "lock_hash"));
	plain_id = map_id(obj_map_fd(t, obj, "plain_hash"));
	hex_words(pv, &p, sizeof(p));
	hex_words(lv, &e, sizeof(e));
	{
		const struct {
			const char *fmt;
			__u32 id;
			const char *value;
			bool json;
			const char *msg;
		} runs[] = {
			{ "map lookup id %u key 0 0 0 0 lock%s", plain_id, "", false,
			  "Error: " NO_LOCK },
			{ "map update id %u key 0 0 0 0 value %s lock", plain_id, pv, false,
			  "Error: " NO_LOCK },
			{ "map dump id %u lock%s", plain_id, "", false, "Error: " NO_LOCK },
			{ "-j map dump id %u lock%s", plain_id, "", true,
			  "{\"error\":\"" NO_LOCK "\"}" },
			{ "map update id %u key 0 0 0 0 value %s lock lock", lock_id, lv, false,
			  "Error: lock specified multiple times" },
			{ "map delete id %u key 0 0 0 0 lock%s", lock_id, "", false,
			  "Error: expected key or value, got: lock" },
		};

		for (i = 0; i < KT_ARRAY_SIZE(runs); i++) {
			if (!tool_run(t, &r, runs[i].fmt, runs[i].id, runs[i].value))
				break;
			if (!tool_refused(t, &r, 255, runs[i].json ? r.out : r.err, runs[i].msg))
				kt_log(t, "the command was: %s", runs[i].fmt);
			tool_free(&r);
		}
	}
	bpf_object__close(obj);
}

struct storm {
	int prog_fd;
	volatile int stop;
	long runs;		/* test runs of REPEAT */
	int err;
};

struct cpu_arg {
	struct storm *s;
	int cpu;
};

static void *tc_thread(void *arg)
{
	struct cpu_arg *a = arg;
	struct storm *s = a->s;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = REPEAT);
	char pkt[64] = {};

	opts.data_in = pkt;
	opts.data_size_in = sizeof(pkt);
	pin_cpu(a->cpu);
	while (!s->stop) {
		if (bpf_prog_test_run_opts(s->prog_fd, &opts) || opts.retval) {
			s->err = errno ? errno : EINVAL;
			break;
		}
		__atomic_add_fetch(&s->runs, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool uniform(const struct elem *e)
{
	int i;

	for (i = 0; i < HALF; i++)
		if (e->a[i] != e->a[0] || e->b[i] != e->a[0])
			return false;
	return true;
}

struct dumps {
	long dumps, elems, torn;
};

/* "bpftool -j map dump id ID [lock]" again and again for some seconds. */
static void dump_for(struct kt *t, __u32 id, bool lock, double seconds, struct dumps *d)
{
	double end = now() + seconds;
	const char *p;
	struct elem e;
	struct tool r;
	int n, ret;

	while (now() < end) {
		if (!tool_run(t, &r, "-j map dump id %u%s", id, lock ? " lock" : ""))
			return;
		if (!tool_ok(t, &r, lock ? "-j map dump ... lock" : "-j map dump")) {
			tool_free(&r);
			return;
		}
		p = r.out;
		for (n = 0; (ret = next_json_value(&p, &e, sizeof(e))) > 0; n++)
			d->torn += !uniform(&e);
		tool_free(&r);
		d->dumps++;
		d->elems += n;
		if (ret < 0 || n != KEYS) {
			kt_fail(t, "dump %ld: %d elements read, want %d (JSON %s)", d->dumps, n,
				KEYS, ret < 0 ? "malformed" : "well-formed");
			return;
		}
	}
}

static void dump_contention(struct kt *t, const void *arg)
{
	struct embedded_obj o = EMBEDDED_OBJ(bpftool);
	int i, fd, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct dumps locked = {}, unlocked = {};
	double seconds = kt_scaled(3);
	struct cpu_arg args[MAX_CPUS];
	pthread_t th[MAX_CPUS];
	struct bpf_object *obj;
	struct storm s = {};
	long sum = 0, bad = 0;
	struct elem e = {};
	__u32 key, id;

	obj = obj_load(t, &o, (const char *const[]){ "rewrite", NULL });
	if (!obj)
		return;
	s.prog_fd = obj_prog_fd(t, obj, "rewrite");
	fd = obj_map_fd(t, obj, "lock_hash");
	id = map_id(fd);
	for (key = 0; key < KEYS; key++)
		if (!KT_OK(t, bpf_map_update_elem(fd, &key, &e, BPF_NOEXIST), "insert"))
			goto out;
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	for (i = 0; i < ncpu; i++) {
		args[i] = (struct cpu_arg){ &s, i };
		pthread_create(&th[i], NULL, tc_thread, &args[i]);
	}
	dump_for(t, id, true, seconds, &locked);
	dump_for(t, id, false, seconds, &unlocked);
	s.stop = 1;
	for (i = 0; i < ncpu; i++)
		pthread_join(th[i], NULL);
	if (s.err)
		kt_fail(t, "tc test run: %s", strerror(s.err));
	for (key = 0; key < KEYS; key++) {
		if (!KT_OK(t, bpf_map_lookup_elem_flags(fd, &key, &e, BPF_F_LOCK), "final lookup"))
			break;
		sum += e.a[0];
		bad += !uniform(&e);
	}
	kt_log(t, "%ld test runs x %d on %d vCPUs; with lock: %ld dumps, %ld elements, %ld torn; without lock (report only): %ld dumps, %ld elements, %ld torn",
	       s.runs, REPEAT, ncpu, locked.dumps, locked.elems, locked.torn,
	       unlocked.dumps, unlocked.elems, unlocked.torn);
	KT_EQ(t, locked.torn, 0, "torn elements in dumps with lock");
	KT_TRUE(t, locked.dumps > 0 && s.runs > 0, "dumps and programs ran");
	KT_EQ(t, bad, 0, "elements with fields that disagree at the end");
	KT_EQ(t, sum, s.runs * REPEAT, "one rewrite per program run");
out:
	bpf_object__close(obj);
}

typedef void (*case_fn)(struct kt *t, const void *arg);

/*
 * Every case needs bpftool's lock keyword or spin_lock_off: patch 0021 of
 * the 6.1 series. A build from a tree whose bpftool lacks them
 * (BPFLOCK_NO_BPFTOOL_LOCK, tests/Makefile) skips the cases, saying so,
 * on a base whose series does not have 0021 yet; on 6.1, whose series has
 * it, its absence is a failure.
 */
static void with_lock_keyword(struct kt *t, const void *arg)
{
	const case_fn *fn = arg;

#ifdef BPFLOCK_NO_BPFTOOL_LOCK
	if (strcmp(kt_base(), "6.1"))
		kt_skip(t, "needs 6.1's 0021 bpftool lock and spin_lock_off, not in the %s series yet (issue 37)",
			kt_base());
	else
		kt_fail(t, "this build's bpftool has no lock keyword (0021 of the 6.1 series)");
	return;
#endif
	(*fn)(t, NULL);
}

static const case_fn fns[] = {
	show_lock_off, show_agrees_with_kernel, lock_roundtrip, lock_refused, dump_contention,
};

static const struct kt_case cases[] = {
	{ "show_lock_off", KT_COMMON, with_lock_keyword, &fns[0] },
	{ "show_agrees_with_kernel", KT_FEATURE, with_lock_keyword, &fns[1] },
	{ "lock_roundtrip", KT_FEATURE, with_lock_keyword, &fns[2] },
	{ "lock_refused", KT_COMMON, with_lock_keyword, &fns[3] },
	{ "dump_contention", KT_FEATURE, with_lock_keyword, &fns[4] },
};

int main(int argc, char **argv)
{
	return kt_main(argc, argv, "bpftool", cases, KT_ARRAY_SIZE(cases));
}
