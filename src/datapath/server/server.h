/*
 * server.h - the server role's data path: one queued packet in, one verdict
 * out (now, or later for held integrity segments).
 *
 * A struct server belongs to one queue thread: its pending-integrity table,
 * counters and rate limit are its own; only the replay table is shared (it
 * has its own lock).  Packets reach it only because the rules queued them:
 * new SYNs to protected ports, segments of flows whose conntrack entry
 * carries the integrity bit (see marks.h, nftrules.c), both ways (pending.h),
 * and with closed_ports "daemon" (the default) the probes of ports nobody
 * listens on.
 *
 * A probe of a closed port gets exactly the work a refused knock gets (the
 * guessing check, the verifications, the same verdict), and a refused knock
 * the same whatever entry it was for: every SYN decided here costs the
 * verifications of the protect entry that needs the most (its keys times
 * its candidate destinations times its epochs), the rest done as padding,
 * so the time an answer takes says nothing about the port (nftplan.h has
 * the paths around the daemon).
 */
#ifndef KNOCKGW_SERVER_H
#define KNOCKGW_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/table/flowtable.h"
#include "common/log.h"
#include "common/pkt.h"
#include "config/conf.h"
#include "datapath/server/guess.h"
#include "datapath/server/pending.h"
#include "datapath/server/replay.h"
#include "datapath/server/servercount.h"
#include "datapath/verdict.h"
#include "kernel/ctnl.h"
#include "kernel/nfq.h"
#include "kernel/rawsock.h"
#include "kernel/sockkill.h"

/*
 * Verifications (MACs) a SYN costs, per mode, with and without a TCP
 * timestamp (which decides the native nonce form's work: no secret).
 * A closed port's SYN runs the verification of a stand-in entry, the
 * first with the most MACs, with its keys, candidates and epochs: the
 * same code and the same calls as a refused knock to that entry, so that
 * neither side's path is warmer in the caches than the other's.
 */
struct server_budget {
	unsigned calls[2][2];		/* [SYN without timestamp][enum kg_mode] */
	int key[2];			/* a key of each mode for the padding, or -1 */
	int standin[2];			/* [SYN without timestamp] the stand-in entry, or -1 */
};

struct server {
	const struct conf *conf;
	struct server_budget budget;	/* from conf */
	uint32_t pad_sink;		/* the padding's results go here, unread */
	uint64_t isn_work;		/* ISN computations done, padding included (tests read it) */
	uint64_t isn_calls;		/* isn_verify_syn() calls, padding included (tests read it) */
	struct replay *replay;		/* shared by all queue threads */
	struct sockkill *sk;		/* may be NULL: then no server-side abort */
	struct ctnl *ct;		/* clears an integrity flow's conntrack bit */
	struct rawsock *rs;		/* closed-port answers */
	struct pending pending;		/* the integrity flows (pending.h) */
	uint64_t mono, wall;		/* seconds; set by the caller before each batch */
	struct server_counters cnt;
	struct log_ratelimit rl;
	struct log_later later;		/* knocks' lines, written after their verdicts */
	struct log_ratelimit rl_full;	/* "table full" warnings, apart from peers' */
	struct guess guess;		/* refused knocks per source prefix */
	struct log_ratelimit rl_guess;	/* its reports, apart from peers' */
};

int server_init(struct server *s, const struct conf *c, struct replay *replay,
		struct sockkill *sk, struct rawsock *rs, struct ctnl *ct, unsigned nqueues);
void server_free(struct server *s);

/*
 * The decisions below go into out, in order (verdict.h); the caller carries
 * them out.  p's bytes may be rewritten in place, and out may point into
 * them, until then.
 */

/*
 * Is this segment from postrouting the service's side of an integrity flow:
 * the reply code the rule sets, from an integrity-protected port and
 * address?  What else comes from there no rule of the server's queued.
 */
bool server_is_reply(const struct server *s, const struct nfqueue_packet *p,
		     const struct pkt_view *v);

/*
 * Lets a SYN to a protected port through: ACCEPTED in our mark bits tells
 * the nat rule after the queue not to send it to the closed port (marks.h).
 */
void server_accept_syn(const struct server *s, struct verdicts *out,
		       const struct nfqueue_packet *p);

/* A packet of the server's rules that pkt_parse() refused (why): dropped, counted. */
void server_malformed(struct server *s, struct verdicts *out, const struct nfqueue_packet *p,
		      enum pkt_drop why);

/*
 * The data path for what the server's rules queue at prerouting and input
 * (the knock, probe, no-connection and integrity rules), parsed into v.
 */
void server_packet(struct server *s, struct verdicts *out, const struct nfqueue_packet *p,
		   const struct pkt_view *v);

/* The service's side of an integrity flow (server_is_reply), parsed into v. */
static inline void server_reply(struct server *s, struct verdicts *out,
				const struct nfqueue_packet *p, const struct pkt_view *v)
{
	pending_reply(&s->pending, out, p, v, s->mono);
}

/*
 * Carries out an abort the data path decided (verdict.h), once the
 * verdicts before it are sent: the service's socket is destroyed, or, when
 * there is none and a.answer, p (parsed into v) gets the closed-port RST.
 */
void server_abort(struct server *s, const struct verdict_abort *a, const struct nfqueue_packet *p,
		  const struct pkt_view *v);

/*
 * The most entries one call above, server_tick() or server_set_conf() puts
 * in out: every held packet's verdict, and per pending flow its held count
 * and its abort, with room for the packet's own.
 */
static inline size_t server_verdicts_max(const struct server *s)
{
	return pending_verdicts_max(&s->pending);
}

/*
 * Switches to a reloaded configuration.  Integrity flows still waiting for
 * their bytes were knocked under the old one; they are failed closed (reset,
 * counted), since their key or entry may be gone.  Verified flows are not
 * affected: nothing of them is held.  The per-key counters follow their
 * key's name to its new index (a key rotation must not credit the old key's
 * knocks to the new one); a key that is gone loses its count.  The per-port
 * counters follow their port (server_counters_carry).
 */
void server_set_conf(struct server *s, struct verdicts *out, const struct conf *c,
		     unsigned nqueues);

/*
 * The verification budget of c (see above): pure, for server_set_conf and
 * the tests.
 */
void server_budget_of(const struct conf *c, struct server_budget *ret);

/* Resets integrity flows past their deadline; call a few times a second. */
void server_tick(struct server *s, struct verdicts *out);

/*
 * A knock from src was refused (a bad ISN, a replay, integrity bytes that
 * failed): counted against its prefix, reported when it crosses
 * guessing.threshold.  For the data path (server.c, pending.c).
 */
void server_note_refusal(struct server *s, int family, const uint8_t *src);

/*
 * Sends the RST a closed port would send for this segment (rst.h), counted.
 * Every RST the server role sends on its own goes through here.
 */
void server_send_closed_rst(struct server *s, const struct nfqueue_packet *p,
			    const struct pkt_view *v);

#endif
