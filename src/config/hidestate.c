/*
 * hidestate.c - the saved hiding state (see hidestate.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "config/hidestate.h"
#include "config/keys.h"

/* The one key's name in the state. */
#define KEY_NAME "hiding"

static void print_prefixes(FILE *f, const char *name, const struct prefix *p, size_t n)
{
	char a[INET6_ADDRSTRLEN + 4];

	if (n == 0)
		return;
	fprintf(f, " %s = [", name);
	for (size_t i = 0; i < n; i++) {
		prefix_format(&p[i], a, sizeof(a));
		fprintf(f, "%s \"%s\"", i ? "," : "", a);
	}
	fprintf(f, " ];");
}

/* The configuration's path in a comment line: nothing in it may end the line. */
static void print_path(FILE *f, const char *path)
{
	for (const char *s = path; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

/*
 * Knock mode everywhere: it takes the text secret, and it has no window,
 * which would be a setting of its own.  The mode makes no rule.
 */
int hidestate_print(const struct conf *c, const char *secret, FILE *f)
{
	size_t nprotect = c->nprotect < CONF_MAX_PROTECT ? c->nprotect : CONF_MAX_PROTECT;
	size_t nknock = c->nknock < CONF_MAX_KNOCK ? c->nknock : CONF_MAX_KNOCK;

	fprintf(f, "# knockgw's hiding state, saved by its last successful start or reload of\n# ");
	print_path(f, c->path);
	fprintf(f, ".  Before every start of knockgw.service, `knockgw hide` makes the\n"
		   "# table a stopped daemon leaves from this when no table is in place (after a\n"
		   "# reboot), so that the protected ports answer like closed ports even if\n"
		   "# knockgw then cannot start.  Written by knockgw: do not edit.  It is not a\n"
		   "# configuration to run: its one key was drawn at random and given to no one.\n");
	fprintf(f, "queue = { num = %u; count = %u; fail_open = %s; };\n", (unsigned)c->queue_num,
		(unsigned)c->queue_count, c->fail_open ? "true" : "false");
	fprintf(f, "rules = { table = \"%s\"; mark_mask = 0x%08x; ct_mark_bit = 0x%08x; "
		   "ct_label = %u; refuse_port = %u; };\n",
		c->table, (unsigned)c->mark_mask, (unsigned)c->ct_mark_bit,
		(unsigned)c->ct_label, (unsigned)c->refuse_port);
	fprintf(f, "on_stop = \"hide\";\n");
	fprintf(f, "translate = \"%s\";\n", c->translate == TRANSLATE_USER ? "user" : "kernel");
	fprintf(f, "closed_ports = \"%s\";\n",
		c->closed_ports == CLOSED_DAEMON ? "daemon" : "kernel");
	fprintf(f, "keys = ( { name = \"" KEY_NAME "\"; secret = \"%s\"; } );\n", secret);
	if (nprotect > 0) {
		fprintf(f, "protect = (\n");
		for (size_t i = 0; i < nprotect; i++) {
			const struct conf_protect *e = &c->protect[i];

			fprintf(f, "\t{ port = %u; mode = \"knock\"; keys = [ \"" KEY_NAME "\" ]; "
				   "on_fail = \"%s\"; integrity_len = %u; forward = %s;",
				(unsigned)e->port, e->on_fail == ON_FAIL_DROP ? "drop" : "reset",
				(unsigned)e->integrity_len, e->forward ? "true" : "false");
			print_prefixes(f, "addresses", e->addrs,
				       e->naddrs < CONF_MAX_ADDRS ? e->naddrs : CONF_MAX_ADDRS);
			fprintf(f, " }%s\n", i + 1 < nprotect ? "," : "");
		}
		fprintf(f, ");\n");
	}
	if (nknock > 0) {
		fprintf(f, "knock = (\n");
		for (size_t i = 0; i < nknock; i++) {
			const struct conf_knock *k = &c->knock[i];
			char a[INET6_ADDRSTRLEN + 4];

			prefix_format(&k->dst, a, sizeof(a));
			fprintf(f, "\t{ dst = \"%s\"; port = %u; mode = \"knock\"; key = \"" KEY_NAME
				   "\"; integrity_len = %u;",
				a, (unsigned)k->port, (unsigned)k->integrity_len);
			print_prefixes(f, "from", k->from,
				       k->nfrom < CONF_MAX_FROM ? k->nfrom : CONF_MAX_FROM);
			/* Interface names: A-Z a-z 0-9 _ . - only (conf_schema.c). */
			for (size_t j = 0; j < k->nifaces && j < CONF_MAX_FROM_IFACES; j++)
				fprintf(f, "%s\"%s\"%s", j ? ", " : " from_interfaces = [ ",
					k->ifaces[j], j + 1 < k->nifaces ? "" : " ];");
			fprintf(f, " }%s\n", i + 1 < nknock ? "," : "");
		}
		fprintf(f, ");\n");
	}
	return ferror(f) ? -EIO : 0;
}

const char *hidestate_dir(char *buf, size_t buflen, const char *fallback)
{
	const char *env = getenv("STATE_DIRECTORY");
	size_t len;

	if (!env || env[0] != '/')
		return fallback;
	len = strcspn(env, ":");
	if (len >= buflen)
		return fallback;
	memcpy(buf, env, len);
	buf[len] = '\0';
	return buf;
}

int hidestate_path(const char *dir, char *path, size_t pathlen)
{
	if ((size_t)snprintf(path, pathlen, "%s/%s", dir, HIDESTATE_FILE) >= pathlen)
		return -ENAMETOOLONG;
	return 0;
}

/* A secret nobody holds: 32 random bytes in base64, without the newline. */
static int draw_secret(char *buf, size_t buflen)
{
	int r = key_generate_base64(buf, buflen);

	if (r < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int hidestate_save(const struct conf *c, const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX], secret[64];
	bool created = false;
	FILE *f = NULL;
	int fd = -1, dfd = -1, e = 0;

	if (hidestate_path(dir, path, sizeof(path)) < 0 ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, HIDESTATE_FILE) >=
		    sizeof(tmp)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	if (draw_secret(secret, sizeof(secret)) < 0) {
		snprintf(err, errlen, "cannot draw a secret");
		return -ENOMEM;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "cannot create a file in %s: %s", dir, strerror(e));
		goto out;
	}
	created = true;
	/* The loader takes a file holding a secret only if it is the owner's alone. */
	if (fchmod(fd, 0600) < 0 || !(f = fdopen(fd, "w"))) {
		e = errno;
		snprintf(err, errlen, "%s: %s", tmp, strerror(e));
		goto out;
	}
	fd = -1;	/* f owns it */
	if (hidestate_print(c, secret, f) < 0 || fflush(f) != 0 || fsync(fileno(f)) < 0) {
		e = errno ? errno : EIO;
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(e));
		goto out;
	}
	if (fclose(f) != 0) {
		f = NULL;
		e = errno;
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(e));
		goto out;
	}
	f = NULL;
	if (rename(tmp, path) < 0) {
		e = errno;
		snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(e));
		goto out;
	}
	created = false;	/* renamed: nothing to remove */
	/* The rename itself, on disk before a power loss. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0) {
		e = errno;
		snprintf(err, errlen, "cannot sync %s: %s", dir, strerror(e));
	}
out:
	sodium_memzero(secret, sizeof(secret));
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	if (created)
		unlink(tmp);
	return -e;
}

int hidestate_table(const char *dir, char table[static CONF_NAME_MAX])
{
	char path[PATH_MAX];
	struct conf *c;
	struct conf_errors *errs;
	int r;

	if (hidestate_path(dir, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	if (access(path, F_OK) < 0)
		return -ENOENT;
	c = calloc(1, sizeof(*c));
	errs = calloc(1, sizeof(*errs));
	r = c && errs ? conf_load(path, c, errs) : -ENOMEM;
	if (r == 0) {
		snprintf(table, CONF_NAME_MAX, "%s", c->table);
		conf_free(c);
	}
	free(c);
	free(errs);
	return r < 0 && r != -ENOMEM ? -EINVAL : r;
}

int hidestate_remove(const char *dir)
{
	char path[PATH_MAX];

	if (hidestate_path(dir, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	if (unlink(path) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}
