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
 * so the time an answer takes says nothing about the port (nftplan.c has
 * the paths around the daemon).
 */
#ifndef KNOCKGW_SERVER_H
#define KNOCKGW_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "ctnl.h"
#include "flowtable.h"
#include "guess.h"
#include "holdacct.h"
#include "log.h"
#include "nfq.h"
#include "pkt.h"
#include "rawsock.h"
#include "replay.h"
#include "sockkill.h"
#include "strays.h"
#include "verdict.h"

/* Every way a packet can end, each a counter (knockgw status). */
#define SERVER_COUNTERS(X)                                                            \
	X(syn_accepted, "valid knocks let through")                                   \
	X(syn_refused, "SYNs without a valid knock")                                  \
	X(syn_nonce, "valid knocks in the nonce form (native, no TCP timestamp)")     \
	X(ts_missing, "valid knocks refused for lacking a TCP timestamp (timestamps \"required\")") \
	X(stray, "segments with none of SYN, ACK, RST (FIN/NULL/Xmas scans)")         \
	X(noconn, "segments of no connection conntrack knows, answered as closed")   \
	X(v6_discarded, "refused IPv6 packets left to the kernel, which discards them") \
	X(rst_sent, "closed-port RSTs sent")                                          \
	X(rst_send_error, "closed-port RSTs that could not be sent")                 \
	X(nat_refusals, "refused SYNs the nat rule sent to a closed port (the kernel answers)") \
	X(replay_refused, "valid knocks replayed from another source")               \
	X(replay_unchecked, "knock-mode knocks without a TCP timestamp: no replay check") \
	X(replay_displaced_source, "remembered knocks forgotten early for room: the busiest source's oldest") \
	X(replay_displaced_key, "remembered knocks forgotten early for room: the busiest key's oldest") \
	X(closed, "probes of closed ports answered (closed_ports \"daemon\")")         \
	X(no_entry, "queued packets matching no protect entry")                      \
	X(integ_ok, "integrity flows verified and released")                         \
	X(integ_fail, "integrity flows whose first bytes did not match")             \
	X(integ_conflict, "integrity flows with conflicting retransmissions")        \
	X(integ_timeout, "integrity flows that did not deliver in time")             \
	X(integ_unknown, "integrity segments of flows the daemon does not know")     \
	X(integ_short_capture, "integrity segments captured short")                  \
	X(integ_unacked, "verified integrity flows the service never acknowledged")   \
	X(integ_lost, "integrity flows reset because conntrack lost their entry")       \
	X(integ_unflag_error, "verified flows whose conntrack bit could not be cleared yet") \
	X(integ_syn_data, "integrity knocks refused for carrying data (TCP Fast Open)")  \
	X(hold_cap, "segments dropped at a hold limit")                              \
	X(source_cap, "knocks and segments refused at one source's share of the queue") \
	X(integ_evicted, "unverified integrity flows reset to make room, oldest first") \
	X(flows_full, "knocks refused because the pending-flow table was full")          \
	X(guessers, "source prefixes that reached guessing.threshold refused knocks")  \
	X(penalized, "SYNs answered like a closed port, unverified (guessing.penalty)") \
	X(integ_reload, "integrity flows reset because the configuration was reloaded") \
	X(integ_syn_live, "integrity knocks dropped: a SYN of a connection past its handshake") \
	X(integ_ct_error, "integrity knocks refused: conntrack could not be asked") \
	X(integ_urgent, "integrity flows reset: an urgent pointer into the checked bytes") \
	X(integ_early_fin, "integrity flows reset: a FIN inside the checked bytes") \
	X(integ_stray_quiet, "segments of unknown integrity flows dropped without another reset")

enum server_counter {
#define X(name, desc) SC_##name,
	SERVER_COUNTERS(X)
#undef X
	SC_MAX
};

struct server_counters {
	uint64_t c[SC_MAX];
	uint64_t pkt_drop[PKT_DROP_MAX];
	uint64_t port_accepted[CONF_MAX_PROTECT];
	uint64_t port_refused[CONF_MAX_PROTECT];
	uint64_t key_accepted[CONF_MAX_KEYS];	/* by conf.keys index; kept by name at reloads */
};

/*
 * Verifications (MACs) a SYN costs, per mode, with and without a TCP
 * timestamp (which decides the native nonce form's work: no secret).
 */
struct server_budget {
	unsigned calls[2][2];		/* [SYN without timestamp][enum kg_mode] */
	int key[2];			/* a key of each mode for the padding, or -1 */
};

struct server {
	const struct conf *conf;
	struct server_budget budget;	/* from conf */
	uint32_t pad_sink;		/* the padding's results go here, unread */
	uint64_t isn_work;		/* ISN computations done, padding included (tests read it) */
	struct replay *replay;		/* shared by all queue threads */
	struct sockkill *sk;		/* may be NULL: then no server-side abort */
	struct ctnl *ct;		/* clears an integrity flow's conntrack bit */
	struct rawsock *rs;		/* closed-port answers */
	struct flowtable pending;
	struct holdacct acct;		/* held packets, per queue and per source */
	struct strays strays;		/* unknown flows' segments: resets bounded */
	size_t held_bytes, held_bytes_max;
	uint64_t next_order;		/* pending flows in the order they started */
	uint64_t mono, wall;		/* seconds; set by the caller before each batch */
	struct server_counters cnt;
	struct log_ratelimit rl;
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
void server_accept_syn(const struct server *s, struct verdicts *out, const struct nfqueue_packet *p);

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
void server_reply(struct server *s, struct verdicts *out, const struct nfqueue_packet *p,
		  const struct pkt_view *v);

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
size_t server_verdicts_max(const struct server *s);

/*
 * Carries cnt's per-key and per-port counts from old's keys and protect
 * entries to c's (servercount.c): a key's by name, a port's by its series
 * (port, mode, integrity); what c adds starts from zero.
 */
void server_counters_carry(struct server_counters *cnt, const struct conf *old,
			   const struct conf *c);

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

const char *server_counter_name(enum server_counter c);

#endif
