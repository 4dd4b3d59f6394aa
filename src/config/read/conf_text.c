/*
 * conf_text.c - reading the files, prescan and @include (conf_text.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "config/keys.h"
#include "config/read/conf_prescan.h"
#include "config/read/conf_text.h"

enum {
	CONF_FILE_MAX = 1 << 20,	/* a config is text written by hand; all its files together */
};

int conf_resolve_path(char out[static PATH_MAX], const char *base, const char *p)
{
	const char *slash = strrchr(base, '/');
	int r;

	if (p[0] == '/' || !slash)
		r = snprintf(out, PATH_MAX, "%s", p);
	else
		r = snprintf(out, PATH_MAX, "%.*s/%s", (int)(slash - base), base, p);
	return r < 0 || r >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* -errno of the call that just failed, and never 0 even if it left errno alone. */
static int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/*
 * The whole file, NUL-terminated, in *ret (ret_len bytes before the NUL),
 * and the fstat of what was read in *ret_st.  Reading it ourselves rather
 * than with config_read_file() lets the checks below see exactly the text
 * libconfig parses.  On failure the reason is in why.
 */
static int read_text(const char *path, char **ret, size_t *ret_len, struct stat *ret_st,
		     char *why, size_t whylen)
{
	struct stat st;
	char *text;
	size_t n = 0, cap;
	int fd, r;

	/* O_NONBLOCK: a FIFO named as config must be refused, not wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = neg_errno();
		snprintf(why, whylen, "cannot open: %s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = neg_errno();
		snprintf(why, whylen, "cannot stat: %s", strerror(-r));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		r = -EINVAL;
		goto fail;
	}
	if (st.st_size > CONF_FILE_MAX) {
		snprintf(why, whylen, "larger than %d bytes", CONF_FILE_MAX);
		r = -EFBIG;
		goto fail;
	}
	/* One byte spare to notice a file that grew since fstat, one for the NUL. */
	cap = (size_t)st.st_size + 2;
	text = malloc(cap);
	if (!text) {
		snprintf(why, whylen, "out of memory");
		r = -ENOMEM;
		goto fail;
	}
	while (n < cap - 1) {
		ssize_t got = read(fd, text + n, cap - 1 - n);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			r = neg_errno();
			snprintf(why, whylen, "cannot read: %s", strerror(-r));
			sodium_memzero(text, cap);
			free(text);
			goto fail;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (n == cap - 1) {
		snprintf(why, whylen, "changed while being read");
		sodium_memzero(text, cap);
		free(text);
		return -EAGAIN;
	}
	text[n] = '\0';
	*ret = text;
	*ret_len = n;
	*ret_st = st;
	return 0;
fail:
	close(fd);
	return r;
}

/* libconfig stops at a NUL; a config holding one is corrupt, not shorter. */
static int find_nul(const char *text, size_t n)
{
	const char *z = memchr(text, '\0', n);
	int line = 1;

	if (!z)
		return 0;
	for (const char *p = text; p < z; p++)
		line += *p == '\n';
	return line;
}

/* Appends to the joined text, which may hold secrets: an old buffer is wiped. */
static int emit(struct srcmap *m, const char *text, size_t n)
{
	if (m->cap - m->len <= n) {
		size_t cap = m->cap ? m->cap : 4096;
		char *out;

		while (cap - m->len <= n)
			cap *= 2;
		out = malloc(cap);
		if (!out)
			return -ENOMEM;
		if (m->out) {
			memcpy(out, m->out, m->len);
			sodium_memzero(m->out, m->cap);
			free(m->out);
		}
		m->out = out;
		m->cap = cap;
	}
	memcpy(m->out + m->len, text, n);
	m->len += n;
	m->out[m->len] = '\0';
	for (size_t i = 0; i < n; i++)
		m->out_line += text[i] == '\n';
	return 0;
}

static void add_segment(struct srcmap *m, int file, int line)
{
	/* One per file and two per @include: the array fits them all. */
	m->seg[m->nseg++] = (struct segment){ m->out_line, file, line };
}

/* Ownership and mode of a configuration file: whoever may write it owns the firewall. */
static int check_conf_file(const struct source *src, struct conf_errors *errs)
{
	uid_t euid = geteuid();

	switch (file_rule_check(&src->st, euid, FILE_CONFIG_FORBIDDEN)) {
	case FILE_OK:
		return 0;
	case FILE_NOT_REGULAR:
		conf_error(errs, src->path, 0, "not a regular file");
		return -EINVAL;
	case FILE_OWNER:
		if (euid == 0)
			conf_error(errs, src->path, 0,
				   "configuration file is owned by uid %u; it must be owned by root",
				   (unsigned)src->st.st_uid);
		else
			conf_error(errs, src->path, 0,
				   "configuration file is owned by uid %u; "
				   "it must be owned by root or uid %u",
				   (unsigned)src->st.st_uid, (unsigned)euid);
		return -EPERM;
	case FILE_MODE:
		conf_error(errs, src->path, 0,
			   "configuration file is writable by group or others (mode %04o); "
			   "chmod go-w it",
			   (unsigned)(src->st.st_mode & 07777));
		return -EPERM;
	}
	return -EINVAL;
}

static int join_file(struct srcmap *m, struct conf_errors *errs, int file, int depth,
		     const char *ifile, int iline, const char *iname);

/*
 * The @include at inc of file, which is depth files deep: resolved against
 * the including file's directory (as key files are), counted, and joined.
 */
static int join_include(struct srcmap *m, struct conf_errors *errs, int file, int depth,
			const char *text, const struct incl *inc)
{
	const char *ipath = m->src[file].path;
	char name[PATH_MAX], resolved[PATH_MAX];
	struct source *src;

	if (inc->name_len >= sizeof(name)) {
		conf_error(errs, ipath, inc->line, "@include file name is too long");
		return -ENAMETOOLONG;
	}
	memcpy(name, text + inc->name, inc->name_len);
	name[inc->name_len] = '\0';
	if (conf_resolve_path(resolved, ipath, name) < 0) {
		conf_error(errs, ipath, inc->line, "@include \"%s\": path is too long", name);
		return -ENAMETOOLONG;
	}
	if (depth >= CONF_MAX_DEPTH) {
		conf_error(errs, ipath, inc->line,
			   "@include \"%s\" nests more than %d files deep", name, CONF_MAX_DEPTH);
		return -ELOOP;
	}
	if (m->nsrc > CONF_MAX_INCLUDES) {
		conf_error(errs, ipath, inc->line, "more than %d @include files",
			   CONF_MAX_INCLUDES);
		return -E2BIG;
	}
	src = &m->src[m->nsrc];
	memset(src, 0, sizeof(*src));
	snprintf(src->path, sizeof(src->path), "%s", resolved);
	src->parent = file;
	return join_file(m, errs, (int)m->nsrc++, depth + 1, ipath, inc->line, name);
}

/*
 * Appends text (len bytes, NUL-terminated), file's, which is depth files
 * deep, to the joined text with its own @include lines replaced by the
 * files they name.  ifile:iline is the @include line that named it (NULL
 * for the main file), where problems of reaching it are reported.
 */
static int join_text(struct srcmap *m, struct conf_errors *errs, int file, int depth,
		     const char *ifile, int iline, const char *text, size_t len)
{
	const char *path = m->src[file].path;
	struct incl incs[CONF_MAX_INCLUDES];
	size_t ninc, pos = 0;
	int r, line;

	m->total += len;
	if (m->total > CONF_FILE_MAX) {
		conf_error(errs, ifile ? ifile : path, iline,
			   "the configuration's files are larger than %d bytes in all",
			   CONF_FILE_MAX);
		return -EFBIG;
	}
	line = find_nul(text, len);
	if (line) {
		conf_error(errs, path, line, "contains a NUL byte");
		return -EINVAL;
	}
	if (conf_prescan(text, path, errs, incs, CONF_MAX_INCLUDES, &ninc))
		return -EINVAL;

	add_segment(m, file, 1);
	for (size_t i = 0; i < ninc; i++) {
		r = emit(m, text + pos, incs[i].start - pos);
		if (r < 0)
			goto oom;
		r = join_include(m, errs, file, depth, text, &incs[i]);
		if (r < 0)
			return r;
		/* The included text ends its own last line. */
		if (m->len > 0 && m->out[m->len - 1] != '\n') {
			r = emit(m, "\n", 1);
			if (r < 0)
				goto oom;
		}
		pos = incs[i].end;
		add_segment(m, file, incs[i].line + 1);
	}
	r = emit(m, text + pos, len - pos);
	if (r < 0)
		goto oom;
	return 0;
oom:
	conf_error(errs, path, 0, "out of memory");
	return r;
}

/*
 * The overlay's text for path, if it has one, in place of *text (which is
 * wiped and freed): the file was read for its stat, the rules are checked
 * on that, and the text is the one an edit would write.
 */
static int take_overlay(const struct srcmap *m, const char *path, char **text, size_t *len,
			char *why, size_t whylen)
{
	const struct conf_overlay *ov = m->ov;
	char *copy;

	for (size_t i = 0; ov && i < ov->n; i++) {
		if (strcmp(ov->path[i], path) != 0)
			continue;
		copy = strdup(ov->text[i]);
		if (!copy) {
			snprintf(why, whylen, "out of memory");
			sodium_memzero(*text, *len + 1);
			free(*text);
			*text = NULL;
			return -ENOMEM;
		}
		sodium_memzero(*text, *len + 1);
		free(*text);
		*text = copy;
		*len = strlen(copy);
		return 0;
	}
	return 0;
}

/*
 * Reads file (m->src[file].path), checks it as the main file is checked,
 * and joins it (join_text).
 */
static int join_file(struct srcmap *m, struct conf_errors *errs, int file, int depth,
		     const char *ifile, int iline, const char *iname)
{
	struct source *src = &m->src[file];
	char why[256];
	char *text = NULL;
	size_t len = 0;
	int r;

	r = read_text(src->path, &text, &len, &src->st, why, sizeof(why));
	if (r == 0)
		r = take_overlay(m, src->path, &text, &len, why, sizeof(why));
	if (r < 0) {
		if (ifile)
			conf_error(errs, ifile, iline, "@include \"%s\": %s", iname, why);
		else
			conf_error(errs, src->path, 0, "%s", why);
		return r;
	}
	r = check_conf_file(src, errs);
	if (r < 0)
		goto out;
	/* A file that is already open further up would include itself again and again. */
	for (int a = src->parent; a >= 0; a = m->src[a].parent) {
		if (m->src[a].st.st_dev == src->st.st_dev && m->src[a].st.st_ino == src->st.st_ino) {
			conf_error(errs, ifile, iline,
				   "@include \"%s\" is an include cycle (\"%s\" is already being read)",
				   iname, m->src[a].path);
			r = -ELOOP;
			goto out;
		}
	}
	r = join_text(m, errs, file, depth, ifile, iline, text, len);
	if (r == 0 && m->keep) {
		/* Its own text, for an edit (kept as it is; srcmap_free() wipes it). */
		src->text = text;
		src->len = len;
		return 0;
	}
out:
	/* The text may hold secret = "..." lines. */
	sodium_memzero(text, len + 1);
	free(text);
	return r;
}

static struct srcmap *srcmap_new(const char *path, struct conf_errors *errs)
{
	struct srcmap *m = calloc(1, sizeof(*m));

	if (!m) {
		conf_error(errs, path, 0, "out of memory");
		return NULL;
	}
	m->nsrc = 1;
	m->out_line = 1;
	snprintf(m->src[0].path, sizeof(m->src[0].path), "%s", path);
	m->src[0].parent = -1;
	return m;
}

/* An empty file is an empty config: the joined text exists all the same. */
static int finish(struct srcmap *m, struct conf_errors *errs, int r)
{
	if (r == 0 && !m->out) {
		r = emit(m, "", 0);
		if (r < 0)
			conf_error(errs, m->src[0].path, 0, "out of memory");
	}
	return r;
}

struct srcmap *conf_text_read_opts(const char *path, const struct conf_overlay *ov, bool keep,
				   struct conf_errors *errs, int *ret)
{
	struct srcmap *m = srcmap_new(path, errs);

	*ret = -ENOMEM;
	if (m) {
		m->ov = ov;
		m->keep = keep;
		*ret = finish(m, errs, join_file(m, errs, 0, 1, NULL, 0, NULL));
		m->ov = NULL;
	}
	return m;
}

struct srcmap *conf_text_read(const char *path, struct conf_errors *errs, int *ret)
{
	return conf_text_read_opts(path, NULL, false, errs, ret);
}

struct srcmap *conf_text_from(const char *path, const char *text, struct conf_errors *errs,
			      int *ret)
{
	struct srcmap *m = srcmap_new(path, errs);

	*ret = -ENOMEM;
	if (!m)
		return NULL;
	m->src[0].st.st_mode = S_IFREG | 0600;
	m->src[0].st.st_uid = geteuid();
	*ret = finish(m, errs, join_text(m, errs, 0, 1, NULL, 0, text, strlen(text)));
	return m;
}
