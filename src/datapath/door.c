/*
 * door.c - the data path's one door (see door.h).
 *
 * Reading order: door_packet() is the whole path of a queued packet, top
 * to bottom: classify, parse, the handler, then emit(), which carries the
 * handler's decisions out in the order it made them.
 */
#include <linux/netfilter.h>

#include "common/log.h"
#include "datapath/client/clienticmp.h"
#include "datapath/door.h"

enum door_way door_classify(const struct marks *m, enum conf_qset set, unsigned hook,
			    uint32_t mark)
{
	switch (hook) {
	case NF_INET_PRE_ROUTING:
		return marks_code(m, mark) == m->fwd ? DOOR_CLIENT_ROUTED : DOOR_SERVER;
	case NF_INET_LOCAL_IN:
		/*
		 * input_closed's probes come on the SYN set (a protected
		 * port's) or the probe set (a closed port's), the client's
		 * segments and ICMP errors on the data set.
		 */
		return set == QSET_DATA ? DOOR_CLIENT_IN : DOOR_SERVER;
	case NF_INET_FORWARD:
		return DOOR_CLIENT_IN;
	case NF_INET_LOCAL_OUT:
		return DOOR_CLIENT_OUT;
	case NF_INET_POST_ROUTING:
		return DOOR_SERVER_REPLY;
	default:
		return DOOR_NONE;
	}
}

enum { CLIENT_VERDICTS = 1 };	/* the client role gives each packet its one verdict */

int door_init(struct door *d, const struct conf *c, struct server *srv, struct client *cli)
{
	*d = (struct door){ .conf = c, .srv = srv, .cli = cli };
	return verdicts_init(&d->out, srv ? server_verdicts_max(srv) : CLIENT_VERDICTS);
}

void door_free(struct door *d)
{
	verdicts_free(&d->out);
}

/*
 * Carries out d->out for packet p (parsed into v; NULL at a tick or a
 * reload), from queue q: the only verdicts the data path gives.  An abort
 * sends every verdict before it first: the aborted socket must find nothing
 * left to read.
 */
static void emit(struct door *d, struct nfqueue *q, const struct nfqueue_packet *p,
		 const struct pkt_view *v)
{
	struct nfqueue *hold = d->hold_q ? d->hold_q : q;

	if (d->out.lost) {
		log_warnx("%llu queue verdicts found no memory", (unsigned long long)d->out.lost);
		d->out.lost = 0;
	}
	for (size_t i = 0; i < d->out.n; i++) {
		const struct verdict *e = &d->out.v[i];
		struct nfqueue *to = e->queue == VQ_HOLD ? hold : q;

		switch ((enum verdict_what)e->what) {
		case VD_PACKET:
			if (e->pkt)
				nfqueue_verdict_pkt(to, e->id, (enum nfqueue_verdict)e->v, e->pkt,
						    e->len, e->mark);
			else if (e->has_mark)
				nfqueue_verdict_mark(to, e->id, (enum nfqueue_verdict)e->v,
						     e->mark);
			else
				nfqueue_verdict(to, e->id, (enum nfqueue_verdict)e->v);
			break;
		case VD_HELD:
			nfqueue_set_held(to, e->len);
			break;
		case VD_ABORT:
			nfqueue_flush(q);
			nfqueue_flush(hold);
			server_abort(d->srv, &e->abort, p, v);
			break;
		}
	}
	verdicts_clear(&d->out);
}

void door_packet(struct door *d, enum conf_qset set, struct nfqueue *q,
		 const struct nfqueue_packet *p)
{
	enum door_way way = door_classify(&d->conf->marks, set, p->hook, p->mark);
	struct pkt_view v;
	enum pkt_drop why = pkt_parse(p->data, p->caplen, &v);
	struct verdicts *out = &d->out;

	/* From postrouting, only the reply code from an integrity port (door.h). */
	if (way == DOOR_SERVER_REPLY && d->srv &&
	    (why != PKT_OK || !server_is_reply(d->srv, p, &v)))
		way = DOOR_NONE;
	/*
	 * A door with one role (tests) treats the other's packets as what no
	 * rule of its queues; the daemon's has both.
	 */
	if (!d->srv && (way == DOOR_SERVER || way == DOOR_SERVER_REPLY))
		way = DOOR_NONE;
	if (!d->cli && way != DOOR_SERVER && way != DOOR_SERVER_REPLY) {
		verdict_accept(out, p->id);
		emit(d, q, p, NULL);
		return;
	}
	switch (way) {
	case DOOR_SERVER:
		if (why != PKT_OK)
			server_malformed(d->srv, out, p, why);
		else
			server_packet(d->srv, out, p, &v);
		break;
	case DOOR_SERVER_REPLY:
		server_reply(d->srv, out, p, &v);
		break;
	case DOOR_CLIENT_OUT:
	case DOOR_CLIENT_ROUTED:
		if (why != PKT_OK)
			client_malformed(d->cli, out, p);
		else
			client_out(d->cli, out, p, &v, way == DOOR_CLIENT_ROUTED);
		break;
	case DOOR_CLIENT_IN:
		/* Only the ICMP error rules queue anything but TCP, at these hooks. */
		if (why == PKT_NOT_TCP)
			client_icmp(d->cli, out, p);
		else if (why != PKT_OK)
			client_malformed(d->cli, out, p);
		else
			client_in(d->cli, out, p, &v);
		break;
	case DOOR_NONE:
		if (why != PKT_OK)
			client_malformed(d->cli, out, p);
		else
			client_unqueued(d->cli, out, p);
		break;
	default:
		/* A way without a handler is a bug here: the packet still gets its one verdict. */
		log_warnx("queued packet of no known way (%d), dropped", (int)way);
		verdict_drop(out, p->id);
		break;
	}
	emit(d, q, p, why == PKT_OK ? &v : NULL);
}

void door_tick(struct door *d, struct nfqueue *q)
{
	if (d->srv) {
		server_tick(d->srv, &d->out);
		emit(d, q, NULL, NULL);
	}
	if (d->cli)
		client_tick(d->cli);
}

void door_set_conf(struct door *d, struct nfqueue *q, const struct conf *c, unsigned nqueues)
{
	d->conf = c;
	if (d->srv) {
		server_set_conf(d->srv, &d->out, c, nqueues);
		emit(d, q, NULL, NULL);
	}
	if (d->cli)
		client_set_conf(d->cli, c);
}
