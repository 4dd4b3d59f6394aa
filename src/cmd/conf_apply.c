/*
 * conf_apply.c - a configuration edited in place, checked, written,
 * reloaded (conf_apply.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cmd/conf_apply.h"
#include "cmd/ctlask.h"
#include "ctl/ctlclient.h"
#include "daemon/stats.h"

enum { STATUS_MAX = 1 << 20 };	/* a STATUS reply: lines per port and key, far less */

static void print_errors(FILE *err, const struct conf_errors *errs, const char *path)
{
	for (size_t i = 0; i < errs->n; i++)
		fprintf(err, "%s\n", errs->msg[i]);
	if (errs->overflow)
		fprintf(err, "%s: too many errors, stopped\n", path);
}

static struct conf *load(const char *path, const struct conf_overlay *ov, struct conf_errors *errs)
{
	struct conf *c = calloc(1, sizeof(*c));

	if (c && conf_load_overlay(path, ov, c, errs) < 0) {
		free(c);
		return NULL;
	}
	if (!c)
		errs->n = 0;
	return c;
}

static void free_conf(struct conf *c)
{
	if (c) {
		conf_free(c);
		free(c);
	}
}

int conf_apply_open(struct conf_apply *a, const char *prog, const char *path, FILE *err)
{
	struct conf_errors *errs = calloc(1, sizeof(*errs));
	struct cs_error e;
	int r;

	memset(a, 0, sizeof(*a));
	a->prog = prog;
	a->keys_file = 0;
	a->plan = calloc(1, sizeof(*a->plan));
	if (!errs || !a->plan || strlen(path) >= sizeof(a->path)) {
		fprintf(err, "%s: %s\n", prog, errs && a->plan ? "path too long" : "out of memory");
		free(errs);
		return -ENOMEM;
	}
	snprintf(a->path, sizeof(a->path), "%s", path);
	/* The daemon's view of it first: a file with errors is fixed by hand. */
	a->cur = load(path, NULL, errs);
	if (!a->cur) {
		fprintf(err, "%s: %s does not load; fix it first (knockgw -n -c %s):\n", prog, path, path);
		print_errors(err, errs, path);
		free(errs);
		return -EINVAL;
	}
	a->m = conf_text_read_opts(path, NULL, true, errs, &r);
	if (r == 0 && cs_parse(a->m->out, a->m->len, &a->t, &e) < 0)
		r = -EINVAL;
	if (r < 0) {
		fprintf(err, "%s: cannot read %s again:\n", prog, path);
		print_errors(err, errs, path);
	}
	free(errs);
	return r;
}

/* The file the plan's edit of the keys list is in (the main one when it appends). */
static int keys_file(const struct conf_apply *a)
{
	int f = 0;

	if (a->plan->keys_line > 0)
		srcmap_line(a->m, a->plan->keys_line, &f);
	return f;
}

int conf_apply_check(struct conf_apply *a, bool revoke, FILE *err)
{
	struct confedit *e = calloc(CONFEDIT_MAX, sizeof(*e));
	struct conf_errors *errs = calloc(1, sizeof(*errs));
	const char *paths[CONF_MAX_INCLUDES + 1], *texts[CONF_MAX_INCLUDES + 1];
	struct conf_overlay ov = { 0, paths, texts };
	int r = e && errs ? 0 : -ENOMEM;

	a->revoke = revoke;
	a->keys_file = keys_file(a);
	for (size_t f = 0; r == 0 && f < a->m->nsrc; f++) {
		size_t n;

		r = confedit_map(a->m, a->plan, (int)f, e, &n);
		if (r < 0) {
			fprintf(err, "%s: cannot place the change in %s; edit it by hand\n", a->prog,
				a->m->src[f].path);
			break;
		}
		if (n == 0)
			continue;
		r = confedit_apply(a->m->src[f].text, a->m->src[f].len, e, n, &a->text[f], &a->len[f]);
		if (r == 0) {
			paths[ov.n] = a->m->src[f].path;
			texts[ov.n++] = a->text[f];
		}
	}
	if (r == 0) {
		a->cand = load(a->path, &ov, errs);
		if (!a->cand) {
			fprintf(err, "%s: the changed configuration would not load, so nothing is "
				     "written:\n", a->prog);
			print_errors(err, errs, a->path);
			r = -EINVAL;
		}
	}
	if (r == -ENOMEM)
		fprintf(err, "%s: out of memory\n", a->prog);
	free(e);
	free(errs);
	return r;
}

int conf_apply_diff(const struct conf_apply *a, FILE *out)
{
	int r = 0;

	for (size_t f = 0; r == 0 && f < a->m->nsrc; f++) {
		const struct source *s = &a->m->src[f];
		char after[PATH_MAX + 16];

		if (!a->text[f])
			continue;
		snprintf(after, sizeof(after), "%s (new)", s->path);
		r = udiff_print(out, s->path, s->text, s->len, after, a->text[f], a->len[f]);
	}
	return r;
}

/*
 * path (a regular file whose stat was st when read) replaced by text, as
 * conf_apply.h says.  0 or -errno with why in err.
 */
static int write_one(const char *prog, const char *path, const struct stat *st, const char *text,
		     size_t len, FILE *out, FILE *err)
{
	char real[PATH_MAX], tmp[PATH_MAX + 32], bak[PATH_MAX + 8], dirbuf[PATH_MAX];
	const char *dir;
	struct stat now;
	size_t done = 0;
	int fd, dfd, r = 0;

	if (!realpath(path, real)) {
		r = -errno;
		fprintf(err, "%s: %s: %s\n", prog, path, strerror(-r));
		return r;
	}
	snprintf(dirbuf, sizeof(dirbuf), "%s", real);
	dir = dirname(dirbuf);
	if (snprintf(tmp, sizeof(tmp), "%s/.knockgw-edit.XXXXXX", dir) >= (int)sizeof(tmp) ||
	    snprintf(bak, sizeof(bak), "%s.bak", real) >= (int)sizeof(bak)) {
		fprintf(err, "%s: %s: path too long\n", prog, real);
		return -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		fprintf(err, "%s: cannot make a file in %s: %s\n", prog, dir, strerror(-r));
		return r;
	}
	while (r == 0 && done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno != EINTR)
			r = -errno;
		else if (n > 0)
			done += (size_t)n;
	}
	/* The same owner and mode: a file that holds a secret stays 0600. */
	if (r == 0 && (fchown(fd, st->st_uid, st->st_gid) < 0 || fchmod(fd, st->st_mode & 07777) < 0))
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0) {
		fprintf(err, "%s: cannot write %s: %s; %s is unchanged\n", prog, tmp, strerror(-r),
			real);
		unlink(tmp);
		return r;
	}
	/* Someone else's edit since it was read is not overwritten. */
	if (stat(real, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
	    now.st_size != st->st_size || now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != st->st_mtim.tv_nsec) {
		fprintf(err, "%s: %s changed while it was being edited; it is left as it is: run "
			     "this again\n", prog, real);
		unlink(tmp);
		return -EBUSY;
	}
	if ((unlink(bak) < 0 && errno != ENOENT) || link(real, bak) < 0) {
		r = -errno;
		fprintf(err, "%s: cannot keep the old file as %s: %s; %s is unchanged\n", prog, bak,
			strerror(-r), real);
		unlink(tmp);
		return r;
	}
	if (rename(tmp, real) < 0) {
		r = -errno;
		fprintf(err, "%s: cannot replace %s: %s; it is unchanged\n", prog, real, strerror(-r));
		unlink(tmp);
		return r;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	fprintf(out, "%s: wrote %s (the old one is %s)\n", prog, real, bak);
	return 0;
}

int conf_apply_write(struct conf_apply *a, FILE *out, FILE *err)
{
	int order[CONF_MAX_INCLUDES + 1], n = 0, r = 0;

	/* The keys list first for an invite, last for a revoke: each step loads. */
	if (!a->revoke && a->text[a->keys_file])
		order[n++] = a->keys_file;
	for (int f = 0; f < (int)a->m->nsrc; f++)
		if (a->text[f] && f != a->keys_file)
			order[n++] = f;
	if (a->revoke && a->text[a->keys_file])
		order[n++] = a->keys_file;
	for (int i = 0; i < n && r == 0; i++) {
		const struct source *s = &a->m->src[order[i]];

		r = write_one(a->prog, s->path, &s->st, a->text[order[i]], a->len[order[i]], out, err);
	}
	return r;
}

/* STATUS from the daemon at sock into *s, and its pid (the socket's SO_PEERCRED). */
static int ask_status(const char *sock, struct stats *s, pid_t *ret_pid)
{
	struct ctlclient_status_reader rd;
	struct ctlclient cc;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	enum ctl_status st = CTL_S_OK;
	size_t got = 0;
	char *buf;
	int r;

	memset(s, 0, sizeof(*s));
	r = ctlclient_open(&cc, sock, CTLCLIENT_WAIT_MS);
	if (r < 0)
		return r;
	buf = malloc(STATUS_MAX);
	if (!buf) {
		ctlclient_close(&cc);
		return -ENOMEM;
	}
	if (getsockopt(cc.fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
		r = -errno;
	if (r == 0)
		r = ctlclient_send(&cc, "STATUS\n", 7, NULL, 0);
	if (r == 0)
		r = ctlclient_read(&cc, buf, STATUS_MAX, &got);
	ctlclient_close(&cc);
	if (r == 0) {
		ctlclient_status_reader_init(&rd);
		r = ctlclient_status_feed(&rd, buf, got, ctlask_stats_line, s, &st);
		if (r == 1)
			r = ctlclient_status_feed(&rd, buf, 0, ctlask_stats_line, s, &st);
		if (r == 0 && st != CTL_S_OK)
			r = -EACCES;
		else if (r > 0)
			r = -EPROTO;
	}
	free(buf);
	if (r == 0)
		*ret_pid = cred.pid;
	return r;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Do a and b name the same file? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int conf_apply_reload(const struct conf_apply *a, FILE *out, FILE *err)
{
	const char *sock = a->cand->control_socket;
	struct stats *s0 = calloc(1, sizeof(*s0)), *s1 = calloc(1, sizeof(*s1));
	const char *why;
	uint64_t deadline;
	pid_t pid = 0;
	int r, rc = 1;

	if (!s0 || !s1) {
		fprintf(err, "%s: out of memory\n", a->prog);
		goto out;
	}
	r = ask_status(sock, s0, &pid);
	if (r < 0 && ctlclient_no_daemon(r)) {
		fprintf(out, "%s: no daemon answers on %s: knockgw reads the new configuration when "
			     "it starts (systemctl start knockgw)\n", a->prog, sock);
		rc = 0;
		goto out;
	}
	if (r < 0) {
		fprintf(err, "%s: cannot ask the daemon on %s for its status: %s; reload it yourself "
			     "(systemctl reload knockgw)\n", a->prog, sock, strerror(-r));
		goto out;
	}
	if (!same_file(s0->conf_path, a->path)) {
		fprintf(out, "%s: the daemon on %s runs %s, not %s: not reloaded\n", a->prog, sock,
			s0->conf_path, a->path);
		rc = 0;
		goto out;
	}
	why = conf_restart_reason(a->cur, a->cand);
	if (why) {
		fprintf(err, "%s: the %s settings changed, which a reload cannot take: restart the "
			     "daemon (systemctl restart knockgw)\n", a->prog, why);
		goto out;
	}
	if (pid <= 1 || kill(pid, SIGHUP) < 0) {
		fprintf(err, "%s: cannot signal the daemon (pid %d): %s; reload it yourself "
			     "(systemctl reload knockgw)\n", a->prog, (int)pid, strerror(errno));
		goto out;
	}
	deadline = now_ms() + APPLY_RELOAD_WAIT_MS;
	while (now_ms() < deadline) {
		struct timespec pause = { 0, 50 * 1000000 };
		pid_t p;

		nanosleep(&pause, NULL);
		if (ask_status(sock, s1, &p) < 0)
			continue;
		if (s1->reloads > s0->reloads) {
			fprintf(out, "%s: reloaded (pid %d): configuration generation %u, %zu protected "
				     "port(s), %zu key(s)\n", a->prog, (int)pid, s1->generation,
				s1->nprotect, s1->nkeys);
			rc = 0;
			goto out;
		}
		if (s1->reloads_refused > s0->reloads_refused) {
			fprintf(err, "%s: the daemon (pid %d) refused the reload and runs its previous "
				     "configuration; its log says why (journalctl -u knockgw)\n",
				a->prog, (int)pid);
			goto out;
		}
	}
	fprintf(err, "%s: the daemon (pid %d) did not finish a reload within %d s; see its log\n",
		a->prog, (int)pid, APPLY_RELOAD_WAIT_MS / 1000);
out:
	free(s0);
	free(s1);
	return rc;
}

void conf_apply_free(struct conf_apply *a)
{
	for (size_t f = 0; f <= CONF_MAX_INCLUDES; f++) {
		if (a->text[f]) {
			sodium_memzero(a->text[f], a->len[f]);
			free(a->text[f]);
			a->text[f] = NULL;
		}
	}
	if (a->plan) {
		confedit_free(a->plan);
		free(a->plan);
		a->plan = NULL;
	}
	cs_free(&a->t);
	srcmap_free(a->m);
	a->m = NULL;
	free_conf(a->cur);
	free_conf(a->cand);
	a->cur = a->cand = NULL;
}
