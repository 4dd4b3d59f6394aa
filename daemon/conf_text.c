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

#include "conf_text.h"
#include "keys.h"

enum {
	CONF_FILE_MAX = 1 << 20,	/* a config is text written by hand; all its files together */
};

static bool is_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

int srcmap_line(const struct srcmap *m, int line, int *ret_file)
{
	size_t i;

	*ret_file = 0;
	if (!m || m->nseg == 0 || line <= 0)
		return line;
	for (i = m->nseg - 1; i > 0 && m->seg[i].first > line; i--)
		;
	*ret_file = m->seg[i].file;
	return m->seg[i].line + (line - m->seg[i].first);
}

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

/* An "@include" line: where it is in its file and the name it quotes. */
struct incl {
	int line;
	size_t start, end;	/* the whole line, its newline included */
	size_t name, name_len;	/* between the quotes */
};

static bool blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/*
 * One "@include "FILE"" line at p, which libconfig 1.5's scanner only takes
 * at the start of a line (blanks before it).  The name is taken verbatim:
 * no backslash, no newline; blanks and a comment may follow it, nothing
 * else.  Any other '@' is refused here rather than left to libconfig, which
 * would open the file itself, past every check of this file.  Returns where
 * the line ends, or NULL with the reason in *why.
 */
static const char *scan_include(const char *t, const char *p, const char *bol, int line,
				struct incl *ret, const char **why)
{
	static const char word[] = "@include";
	const char *name;

	for (const char *q = bol; q < p; q++) {
		if (!blank(*q)) {
			*why = "'@' may only start a line of the form @include \"FILE\"";
			return NULL;
		}
	}
	if (strncmp(p, word, sizeof(word) - 1) != 0 || !blank(p[sizeof(word) - 1])) {
		*why = "'@' may only start a line of the form @include \"FILE\"";
		return NULL;
	}
	for (p += sizeof(word) - 1; blank(*p); p++)
		;
	if (*p != '"') {
		*why = "@include needs a quoted file name";
		return NULL;
	}
	name = ++p;
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' || *p == '\n') {
			*why = "@include file name must be one line without backslashes";
			return NULL;
		}
	}
	if (!*p) {
		*why = "unterminated string";
		return NULL;
	}
	if (p == name) {
		*why = "@include file name is empty";
		return NULL;
	}
	ret->line = line;
	ret->start = (size_t)(bol - t);
	ret->name = (size_t)(name - t);
	ret->name_len = (size_t)(p - name);
	for (p++; blank(*p) || *p == '\r'; p++)
		;
	if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
		while (*p && *p != '\n')
			p++;
	}
	if (*p && *p != '\n') {
		*why = "text after @include \"FILE\" on its line";
		return NULL;
	}
	ret->end = (size_t)(p - t) + (*p == '\n');
	return p;
}

/*
 * Checks libconfig 1.5 gets wrong without a word, on the text of each file
 * before it is joined: an integer literal without the L suffix is converted
 * with atoi()-style wrap-around, so "port = 4294967318;" would load as port
 * 22 (no setting here takes more than 31 bits, so any such literal is
 * refused); an unterminated block comment silently swallows the rest of the
 * file; and an unterminated string, besides being a syntax error, leaks the
 * scanner's buffer.  Comments, strings and names are skipped the way
 * libconfig's scanner skips them.  The @include lines it finds go to incs
 * (at most max, *ret_n of them).  Returns the number of errors reported (0
 * or 1).
 */
static int prescan(const char *t, const char *path, struct conf_errors *errs,
		   struct incl *incs, size_t max, size_t *ret_n)
{
	const char *p = t, *bol = t;
	const char *why;
	int line = 1;

	*ret_n = 0;
	while (*p) {
		if (*p == '\n') {
			line++;
			p++;
			bol = p;
		} else if (*p == '@') {
			struct incl inc;

			p = scan_include(t, p, bol, line, &inc, &why);
			if (!p) {
				conf_error(errs, path, line, "%s", why);
				return 1;
			}
			if (*ret_n == max) {
				conf_error(errs, path, line, "more than %d @include files",
					   CONF_MAX_INCLUDES);
				return 1;
			}
			incs[(*ret_n)++] = inc;
		} else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			int start = line;

			for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
				line += *p == '\n';
			if (!*p) {
				conf_error(errs, path, start, "unterminated /* comment");
				return 1;
			}
			p += 2;
		} else if (*p == '"') {
			int start = line;

			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					p++;
				line += *p == '\n';
			}
			if (!*p) {
				conf_error(errs, path, start, "unterminated string");
				return 1;
			}
			p++;
		} else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '*') {
			while (is_alnum(*p) || *p == '-' || *p == '_' || *p == '*')
				p++;
		} else if ((*p >= '0' && *p <= '9') ||
			   ((*p == '-' || *p == '+') && p[1] >= '0' && p[1] <= '9')) {
			const char *tok = p;
			unsigned long long v = 0, limit = 0x7fffffffull;
			bool hex, wide = false;

			if (*p == '-' || *p == '+') {
				if (*p == '-')
					limit++;
				p++;
			}
			hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
			      isxdigit((unsigned char)p[2]);
			if (hex) {
				limit = 0x7fffffffull;
				for (p += 2; isxdigit((unsigned char)*p); p++) {
					unsigned d = *p <= '9' ? (unsigned)(*p - '0') :
								 (unsigned)((*p | 0x20) - 'a' + 10);

					v = v * 16 + d;
					wide |= v > limit;
				}
			} else {
				for (; *p >= '0' && *p <= '9'; p++) {
					v = v * 10 + (unsigned)(*p - '0');
					wide |= v > limit;
				}
			}
			if (*p == 'L')
				continue;	/* 64-bit literal: libconfig keeps it whole */
			if (!hex && (*p == '.' || *p == 'e' || *p == 'E')) {
				while ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' ||
				       *p == 'E' || *p == '-' || *p == '+')
					p++;
				continue;	/* a float, never an integer setting */
			}
			if (wide) {
				int len = (int)(p - tok);

				conf_error(errs, path, line, "integer %.*s out of range",
					   len > 40 ? 40 : len, tok);
				return 1;
			}
		} else {
			p++;
		}
	}
	return 0;
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
	if (prescan(text, path, errs, incs, CONF_MAX_INCLUDES, &ninc))
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

struct srcmap *srcmap_read(const char *path, struct conf_errors *errs, int *ret)
{
	struct srcmap *m = srcmap_new(path, errs);

	*ret = -ENOMEM;
	if (m)
		*ret = finish(m, errs, join_file(m, errs, 0, 1, NULL, 0, NULL));
	return m;
}

struct srcmap *srcmap_read_text(const char *path, const char *text, struct conf_errors *errs,
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

void srcmap_free(struct srcmap *m)
{
	if (!m)
		return;
	if (m->out) {
		sodium_memzero(m->out, m->cap);
		free(m->out);
	}
	free(m);
}
