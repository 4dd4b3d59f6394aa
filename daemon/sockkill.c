/*
 * sockkill.c - see sockkill.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <libmnl/libmnl.h>

#include "sockkill.h"

enum { SK_BUF_BYTES = 8192 };

struct sockkill {
	struct mnl_socket *nl;
	unsigned portid;
	uint32_t seq;
};

struct sockkill *sockkill_open(void)
{
	struct sockkill *sk = calloc(1, sizeof(*sk));

	if (!sk)
		return NULL;
	sk->nl = mnl_socket_open(NETLINK_SOCK_DIAG);
	if (!sk->nl || mnl_socket_bind(sk->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int saved = errno;

		sockkill_close(sk);
		errno = saved;
		return NULL;
	}
	/* The kernel answers at once; never let a lost answer stall a worker. */
	struct timeval tv = { .tv_sec = 1 };
	setsockopt(mnl_socket_get_fd(sk->nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	sk->portid = mnl_socket_get_portid(sk->nl);
	sk->seq = (uint32_t)time(NULL);
	return sk;
}

void sockkill_close(struct sockkill *sk)
{
	if (!sk)
		return;
	if (sk->nl)
		mnl_socket_close(sk->nl);
	free(sk);
}

int sockkill_destroy(struct sockkill *sk, int family, const uint8_t *local, uint16_t lport,
		     const uint8_t *remote, uint16_t rport)
{
	char buf[SK_BUF_BYTES];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct inet_diag_req_v2 *req;
	size_t alen = family == AF_INET6 ? 16 : 4;
	uint32_t seq = ++sk->seq;
	int ret;

	nlh->nlmsg_type = SOCK_DESTROY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = (uint8_t)family;
	req->sdiag_protocol = IPPROTO_TCP;
	req->idiag_states = ~0u;	/* established or still a request socket */
	req->id.idiag_sport = htons(lport);
	req->id.idiag_dport = htons(rport);
	memcpy(req->id.idiag_src, local, alen);
	memcpy(req->id.idiag_dst, remote, alen);
	req->id.idiag_if = 0;
	req->id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	req->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;

	if (mnl_socket_sendto(sk->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	ret = (int)mnl_socket_recvfrom(sk->nl, buf, sizeof(buf));
	if (ret < 0)
		return -errno;
	ret = mnl_cb_run(buf, (size_t)ret, seq, sk->portid, NULL, NULL);
	return ret < 0 ? -errno : 0;
}
