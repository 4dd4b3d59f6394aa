/*
 * kcconf.c - where knock-connect finds the control socket (see kcconf.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libconfig.h>
#include <sodium.h>

#include "kcconf.h"

int kc_socket_from_conf(const char *path, bool explicit, char *out, size_t outlen)
{
	char dir[PATH_MAX], *text = NULL, *slash;
	const char *sock;
	struct stat st;
	config_t cfg;
	size_t n = 0;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (!explicit)
			return 0;
		fprintf(stderr, "knock-connect: cannot open \"%s\": %s (use -s SOCKET)\n", path,
			strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > KC_CONF_FILE_MAX) {
		if (explicit)
			fprintf(stderr, "knock-connect: \"%s\" is not a regular file of at most %d "
				"bytes\n", path, KC_CONF_FILE_MAX);
		close(fd);
		return explicit ? -EINVAL : 0;
	}
	text = calloc(1, (size_t)st.st_size + 2);
	if (!text) {
		close(fd);
		fprintf(stderr, "knock-connect: out of memory\n");
		return -ENOMEM;
	}
	while (n <= (size_t)st.st_size) {
		ssize_t r = read(fd, text + n, (size_t)st.st_size + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	text[n < (size_t)st.st_size + 1 ? n : (size_t)st.st_size] = '\0';

	config_init(&cfg);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		*(slash == dir ? slash + 1 : slash) = '\0';
		config_set_include_dir(&cfg, dir);
	}
	if (!config_read_string(&cfg, text)) {
		if (explicit)
			fprintf(stderr, "knock-connect: %s:%d: %s\n", path, config_error_line(&cfg),
				config_error_text(&cfg));
		ret = explicit ? -EINVAL : 0;
	} else if (config_lookup_string(&cfg, "control_socket", &sock) == CONFIG_TRUE) {
		if (sock[0] != '/' || strlen(sock) >= outlen) {
			if (explicit)
				fprintf(stderr, "knock-connect: %s: control_socket \"%s\" is not an "
					"absolute path that fits a socket address\n", path, sock);
			ret = explicit ? -EINVAL : 0;
		} else {
			snprintf(out, outlen, "%s", sock);
		}
	}
	config_destroy(&cfg);
	sodium_memzero(text, (size_t)st.st_size + 2);
	free(text);
	return ret;
}
