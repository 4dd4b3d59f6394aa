/*
 * sockkill.c - see sockkill.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>

#include "kernel/nl.h"
#include "kernel/sockkill.h"

enum { SK_BUF_BYTES = 8192 };

/* The transport bounds every wait (nl.h): a lost answer cannot stall a worker. */
struct sockkill {
	struct nl *nl;
};

struct sockkill *sockkill_open(void)
{
	struct sockkill *sk = calloc(1, sizeof(*sk));

	if (!sk)
		return NULL;
	sk->nl = nl_open(NETLINK_SOCK_DIAG, 0);
	if (!sk->nl) {
		int saved = errno;

		sockkill_close(sk);
		errno = saved;
		return NULL;
	}
	return sk;
}

void sockkill_close(struct sockkill *sk)
{
	if (!sk)
		return;
	nl_close(sk->nl);
	free(sk);
}

/*
 * One request for the socket local:lport <-> remote:rport (cookie: which
 * one).  Both ask for an acknowledgement, which follows the lookup's
 * answer, so the lookup's end is seen without waiting; nl_talk() stamps
 * the sequence number.
 */
static struct nlmsghdr *put_req(char *buf, uint16_t type, int family, const uint8_t *local,
				uint16_t lport, const uint8_t *remote, uint16_t rport,
				const uint32_t cookie[2])
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct inet_diag_req_v2 *req;
	size_t alen = family == AF_INET6 ? 16 : 4;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = (uint8_t)family;
	req->sdiag_protocol = IPPROTO_TCP;
	req->idiag_states = ~0u;	/* established or still a request socket */
	req->id.idiag_sport = htons(lport);
	req->id.idiag_dport = htons(rport);
	memcpy(req->id.idiag_src, local, alen);
	memcpy(req->id.idiag_dst, remote, alen);
	req->id.idiag_if = 0;
	req->id.idiag_cookie[0] = cookie[0];
	req->id.idiag_cookie[1] = cookie[1];
	return nlh;
}

struct found {
	bool ok;
	uint8_t state;
	uint32_t cookie[2];
};

static int found_cb(const struct nlmsghdr *nlh, void *data)
{
	struct found *f = data;
	const struct inet_diag_msg *m;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*m))
		return MNL_CB_ERROR;
	m = mnl_nlmsg_get_payload(nlh);
	f->ok = true;
	f->state = m->idiag_state;
	f->cookie[0] = m->id.idiag_cookie[0];
	f->cookie[1] = m->id.idiag_cookie[1];
	return MNL_CB_OK;
}

/*
 * The kernel finds the socket to destroy as it finds the one a packet is
 * for: the connection's own, or else the listening socket of the port.
 * Aborting that would close the service's listener (accept() fails with
 * EINVAL from then on).  So the socket is looked up first, a listener is
 * never destroyed, and the destroy names the connection's socket by its
 * cookie: if it went away in between, the kernel refuses (ESTALE) rather
 * than take the listener.
 */
int sockkill_destroy(struct sockkill *sk, int family, const uint8_t *local, uint16_t lport,
		     const uint8_t *remote, uint16_t rport)
{
	static const uint32_t any[2] = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE };
	char buf[SK_BUF_BYTES];
	struct found f = { 0 };
	int ret;

	ret = nl_talk(sk->nl,
		      put_req(buf, SOCK_DIAG_BY_FAMILY, family, local, lport, remote, rport, any),
		      found_cb, &f);
	if (ret < 0)
		return ret;
	if (!f.ok || f.state == TCP_LISTEN)
		return -ENOENT;
	return nl_talk(sk->nl,
		       put_req(buf, SOCK_DESTROY, family, local, lport, remote, rport, f.cookie),
		       NULL, NULL);
}
