/*
 * ctlserve.c - serving one control request (see ctlserve.h).
 *
 * The descriptor INTENT brings should be the client's own socket, so it
 * is only looked at (getsockopt, then fstat, getsockname), never read,
 * written or connected.  getsockopt(SO_TYPE) comes first: it fails at
 * once for anything that is not a socket, where fstat() of a file on FUSE
 * may wait for the FUSE server.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* struct ucred */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sodium.h>

#include "ctl/ctlserve.h"

/*
 * INTENT's descriptor must be a socket the kernel created for the caller's
 * uid (a socket inode's owner is its creator's fsuid; only root can chown
 * one), an unconnected TCP socket of the request's family, bound to a port.
 */
static enum ctl_status check_socket(int fd, const struct ucred *cred, int family,
				    uint16_t *ret_port)
{
	struct stat st;
	struct tcp_info ti;
	struct sockaddr_storage ss;
	socklen_t len;
	int v;
	uint16_t port;

	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0)
		return CTL_S_NOT_YOUR_SOCKET;
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != cred->uid)
		return CTL_S_NOT_YOUR_SOCKET;
	if (v != SOCK_STREAM)
		return CTL_S_BAD_SOCKET;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0 || v != family)
		return CTL_S_BAD_SOCKET;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len) < 0 || v != IPPROTO_TCP)
		return CTL_S_BAD_SOCKET;
	/* Not listening, not connecting, not connected: its SYN is still to come. */
	memset(&ti, 0, sizeof(ti));
	len = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 || len < 1 ||
	    ti.tcpi_state != TCP_CLOSE)
		return CTL_S_BAD_SOCKET;
	memset(&ss, 0, sizeof(ss));
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0 || ss.ss_family != family ||
	    len < (family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)))
		return CTL_S_BAD_SOCKET;
	if (family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)&ss)->sin_port);
	else
		port = ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port);
	if (port == 0)
		return CTL_S_BAD_SOCKET;	/* unbound: the port is chosen at connect() */
	*ret_port = port;
	return CTL_S_OK;
}

static enum ctl_status serve_intent(struct ctl *c, const struct ctl_peer *peer,
				    const struct ctl_env *env, const struct ctl_request *req)
{
	const struct conf_knock *kn;
	char a[INET6_ADDRSTRLEN];
	uint16_t sport = 0;
	enum ctl_status s;
	int r;

	if (peer->passed_fd < 0)
		return CTL_S_BAD_REQUEST;
	s = check_socket(peer->passed_fd, &peer->cred, req->family, &sport);
	if (s != CTL_S_OK)
		return s;
	kn = match_knock(env->conf, req->family, req->addr, req->port);
	if (!kn)
		return CTL_S_NO_KNOCK;
	if (kn->integrity_len == 0 || req->payload_len != kn->integrity_len)
		return CTL_S_BAD_LENGTH;
	r = intent_add(env->intents, req->family, sport, req->addr, req->port, peer->cred.uid,
		       req->payload, req->payload_len, env->now);
	if (r == -ENOSPC || r == -EDQUOT)
		return CTL_S_BUSY;
	if (r < 0)
		return CTL_S_INTERNAL;
	inet_ntop(req->family, req->addr, a, sizeof(a));
	log_peer(&c->rl, env->now, LOG_DEBUG,
		 "control: uid %u: intent for local port %u to %s port %u",
		 (unsigned)peer->cred.uid, sport, a, req->port);
	return CTL_S_OK;
}

/* STATUS or METRICS text into a malloc'd buffer, "END" line appended. */
static enum ctl_status status_text(const struct ctl_env *env, enum ctl_cmd cmd,
				   struct ctl_reply *ret)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return CTL_S_INTERNAL;
	if (env->status)
		env->status(f, cmd, env->arg);
	if (fflush(f) == 0 && len > 0 && text[len - 1] != '\n')
		fputc('\n', f);
	fputs("END\n", f);
	if (fclose(f) != 0) {
		free(text);
		return CTL_S_INTERNAL;
	}
	ret->text = text;
	ret->len = len;
	return CTL_S_OK;
}

/* CTL_S_OK when the descriptors that came fit the request; counts and logs if not. */
static enum ctl_status check_fds(struct ctl *c, const struct ctl_peer *peer,
				 const struct ctl_env *env, enum ctl_cmd cmd)
{
	if (peer->fds_refused) {
		c->cnt[CTLC_fds_refused]++;
		log_peer(&c->rl, env->now, LOG_DEBUG,
			 "control: uid %u pid %d: descriptors still closing, not taking more",
			 (unsigned)peer->cred.uid, (int)peer->cred.pid);
		return CTL_S_BUSY;
	}
	if (peer->stray_fds || (peer->passed_fd >= 0 && cmd != CTL_CMD_INTENT)) {
		c->cnt[CTLC_stray_fds]++;
		log_peer(&c->rl, env->now, LOG_DEBUG,
			 "control: uid %u pid %d: unexpected descriptors, ignoring",
			 (unsigned)peer->cred.uid, (int)peer->cred.pid);
		return CTL_S_BAD_REQUEST;
	}
	return CTL_S_OK;
}

/* A parsed request whose descriptors are in order: act on it. */
static enum ctl_status act(struct ctl *c, const struct ctl_peer *peer, const struct ctl_env *env,
			   const struct ctl_request *req, struct ctl_reply *ret, int *ret_n)
{
	const struct conf_knock *kn;
	enum ctl_status s = CTL_S_OK;

	switch (req->cmd) {
	case CTL_CMD_QUERY:
		kn = match_knock(env->conf, req->family, req->addr, req->port);
		if (!kn)
			s = CTL_S_NO_KNOCK;
		else
			*ret_n = ctlproto_format_knock(ret->line, sizeof(ret->line),
						       kn->integrity_len);
		break;
	case CTL_CMD_INTENT:
		s = serve_intent(c, peer, env, req);
		ret->fd_used = s == CTL_S_OK;
		break;
	case CTL_CMD_STATUS:
	case CTL_CMD_METRICS:
		s = peer->cred.uid == 0 ? status_text(env, req->cmd, ret) : CTL_S_NOT_ROOT;
		break;
	}
	return s;
}

int ctl_serve(struct ctl *c, const struct ctl_peer *peer, const uint8_t *in, size_t len,
	      const struct ctl_env *env, struct ctl_reply *ret)
{
	struct ctl_request req;
	enum ctl_parse p = ctlproto_parse_request(in, len, &req);
	enum ctl_status s;
	int n = -1;

	memset(ret, 0, sizeof(*ret));
	if (p != CTL_PARSE_OK) {
		c->parse[p]++;
		s = CTL_S_BAD_REQUEST;
		log_peer(&c->rl, env->now, LOG_DEBUG,
			 "control: uid %u pid %d: bad request (%s), ignoring",
			 (unsigned)peer->cred.uid, (int)peer->cred.pid, ctlproto_parse_name(p));
	} else {
		c->cnt[req.cmd == CTL_CMD_QUERY ? CTLC_query :
		       req.cmd == CTL_CMD_INTENT ? CTLC_intent : CTLC_status]++;
		s = check_fds(c, peer, env, req.cmd);
		if (s == CTL_S_OK) {
			s = act(c, peer, env, &req, ret, &n);
			if (s != CTL_S_OK)
				log_peer(&c->rl, env->now, LOG_DEBUG,
					 "control: uid %u pid %d: %s, ignoring",
					 (unsigned)peer->cred.uid, (int)peer->cred.pid,
					 ctlproto_status_word(s));
		}
		/* An INTENT payload is the first bytes of the client's stream. */
		sodium_memzero(&req, sizeof(req));
	}
	c->replies[s]++;
	if (ret->text)
		return 0;
	if (n < 0)
		n = ctlproto_format_status(ret->line, sizeof(ret->line), s);
	if (n < 0)
		return -ENOSPC;
	ret->len = (size_t)n;
	return 0;
}
