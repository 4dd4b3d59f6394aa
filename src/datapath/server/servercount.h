/*
 * servercount.h - the server role's counters: every way a packet can end,
 * each a counter (knockgw status), kept per queue thread.  The server and
 * its integrity flows (pending.h) count into the same struct; the metrics
 * read them by name.
 */
#ifndef KNOCKGW_SERVERCOUNT_H
#define KNOCKGW_SERVERCOUNT_H

#include <stdint.h>

#include "common/pkt.h"
#include "config/conf.h"

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
 * Carries cnt's per-key and per-port counts from old's keys and protect
 * entries to c's (servercount.c): a key's by name, a port's by its series
 * (port, mode, integrity); what c adds starts from zero.
 */
void server_counters_carry(struct server_counters *cnt, const struct conf *old,
			   const struct conf *c);

const char *server_counter_name(enum server_counter c);

#endif
