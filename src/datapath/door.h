/*
 * door.h - the one door every queued packet comes through: classified once,
 * by the rule that queued it; parsed once; handed to its role's handler in
 * one switch; and the handler's decisions (verdict.h) carried out here, the
 * only place in the data path that gives the queue a verdict.
 *
 * Which rule queued a packet shows on it (nftplan.h): the hook of the
 * rule's chain, the queue set the rule queues to (the worker knows which
 * set it read), and the code the rule left in our mark bits.
 *
 *   hook         set       code     rules                       way
 *   prerouting   any       FWD      RK_CLIENT_FWD_SYN, _OUT     DOOR_CLIENT_ROUTED
 *   prerouting   any       other    RK_SYN*, RK_NOCONN*, RK_STRAY_QUEUE,
 *                                   RK_INTEG, RK_INVALID_INTEG, RK_PROBE
 *                                                               DOOR_SERVER
 *   input        syn       any      RK_STRAY_QUEUE (input_closed)  DOOR_SERVER
 *   input        probe     any      RK_PROBE (input_closed)     DOOR_SERVER
 *   input        data      any      RK_CLIENT_IN*, RK_CLIENT_ICMP  DOOR_CLIENT_IN
 *   forward      any       any      RK_CLIENT_FWD_IN*, _FWD_ICMP   DOOR_CLIENT_IN
 *   output       any       any      RK_CLIENT_SYN, RK_CLIENT_OUT   DOOR_CLIENT_OUT
 *   postrouting  any       any      RK_INTEG_REPLY              DOOR_SERVER_REPLY
 *
 * The server's rules clear our bits or set their own code before they
 * queue, never FWD.  Two ways look at the parsed packet as well: at the
 * client's incoming hooks an ICMP error (the ICMP rules) is not TCP; and a
 * segment from postrouting is the service's side of an integrity flow only
 * with the reply code from an integrity-protected port (server_is_reply):
 * anything else from there no rule queued, and is let go (counted).
 *
 * One door per queue thread: it holds no state of the roles, only the
 * list their decisions go into.
 */
#ifndef KNOCKGW_DOOR_H
#define KNOCKGW_DOOR_H

#include <stdint.h>

#include "common/marks.h"
#include "config/conf.h"
#include "datapath/client/client.h"
#include "datapath/server/server.h"
#include "datapath/verdict.h"
#include "kernel/nfq.h"

enum door_way {
	DOOR_SERVER,		/* the server's rules at prerouting and input */
	DOOR_SERVER_REPLY,	/* the service's side of an integrity flow, at postrouting */
	DOOR_CLIENT_OUT,	/* this host's SYNs and user-path packets, at output */
	DOOR_CLIENT_ROUTED,	/* a routed flow's SYNs and user-path packets, at prerouting */
	DOOR_CLIENT_IN,		/* the user path's answers and the ICMP errors, input/forward */
	DOOR_NONE,		/* from a hook no rule of ours queues at */
};

/* The way a packet goes, from what the rule that queued it left on it.  Pure. */
enum door_way door_classify(const struct marks *m, enum conf_qset set, unsigned hook,
			    uint32_t mark);

struct door {
	const struct conf *conf;	/* the roles' (its marks classify) */
	struct server *srv;		/* either may be NULL: a role alone (tests) */
	struct client *cli;
	struct nfqueue *hold_q;		/* where integrity segments wait: the data queue (NULL: any) */
	struct verdicts out;		/* what the handler decided, until carried out */
};

/* 0 or -ENOMEM; srv, if any, must be initialised (it sizes the list). */
int door_init(struct door *d, const struct conf *c, struct server *srv, struct client *cli);
void door_free(struct door *d);

/* One queued packet from queue q of set, through to its verdicts. */
void door_packet(struct door *d, enum conf_qset set, struct nfqueue *q,
		 const struct nfqueue_packet *p);

/* The roles' timers; what ends, ends with its verdicts given on q (the data queue). */
void door_tick(struct door *d, struct nfqueue *q);

/*
 * A reloaded configuration for both roles; integrity flows it fails get
 * their verdicts on q (the data queue).
 */
void door_set_conf(struct door *d, struct nfqueue *q, const struct conf *c, unsigned nqueues);

#endif
