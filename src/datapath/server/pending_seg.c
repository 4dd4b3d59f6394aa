/*
 * pending_seg.c - what each segment of an integrity flow does to it (see
 * pending.h): the client's are held, checked, passed or refused; the
 * service's data waits for the client's bytes, and its acknowledgement of
 * the whole range ends the checking.  The flows themselves (start, hold,
 * end) are pending.c's.
 *
 * Reading order: pending_client(), then pending_reply().
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "common/isn.h"
#include "datapath/server/pending.h"
#include "datapath/server/pending_int.h"

enum { STILL_ASKS = 8 };	/* conntrack asks per waiting flow and second */

static void flow_key_client(struct flow_key *k, const struct pkt_view *v, const uint8_t *buf)
{
	flow_key_make(k, v->family, pkt_src(buf, v), pkt_dst(buf, v), v->sport, v->dport);
}

/* The same key for the service's segments, which go the other way. */
static void flow_key_reply(struct flow_key *k, const struct pkt_view *v, const uint8_t *buf)
{
	flow_key_make(k, v->family, pkt_dst(buf, v), pkt_src(buf, v), v->dport, v->sport);
}

/*
 * A segment of a flagged flow we do not know (we restarted, or the flow
 * was failed or never knocked): dropped, nothing unverified may pass; and
 * the connection reset at both ends, once per flow and within each
 * source's budget (strays.h), since a flow's segments keep coming.
 * local/remote: the service's and the client's ends; p, v: a client's
 * segment to answer when there is no socket, or NULL.
 */
static void unknown_flow(struct pending *pd, struct verdicts *out, uint32_t id, int family,
			 const uint8_t *local, uint16_t lport, const uint8_t *remote,
			 uint16_t rport, bool answer)
{
	pd->cnt->c[SC_integ_unknown]++;
	verdict_drop(out, id);
	if (strays_check(&pd->strays, family, remote, local, rport, lport, pd->now) ==
	    STRAY_DROP_QUIET) {
		pd->cnt->c[SC_integ_stray_quiet]++;
		return;
	}
	pending_abort(pd, out, family, local, lport, remote, rport, answer);
}

/*
 * Does the waiting flow's conntrack entry still carry the bit?  A segment
 * conntrack calls invalid comes without its entry, so it cannot tell: and
 * an entry conntrack dropped (an unassured one, early, when its table is
 * full) took the bit along.  The client's segments then come as no
 * connection, or invalid when conntrack picks up no connection midstream
 * (nf_conntrack_tcp_loose off); the service's would leave unchecked, its
 * banner first.  So an invalid segment of a waiting flow makes the daemon
 * ask, STILL_ASKS times a second per flow at most (more fail as "cannot
 * tell").  1 yes, 0 no, -errno: cannot tell.
 */
static int still_flagged(struct pending *pd, struct pending_flow *pf)
{
	struct ct_flow f = { .family = pf->family, .sport = pf->rport, .dport = pf->lport };
	size_t alen = pf->family == AF_INET6 ? 16 : 4;
	struct ct_info ci;
	int r;

	if (pf->ask_second != pd->now) {
		pf->ask_second = pd->now;
		pf->asks = 0;
	}
	if (!pd->ct || pf->asks >= STILL_ASKS)
		return -EAGAIN;
	pf->asks++;
	memcpy(f.src, pf->remote, alen);
	memcpy(f.dst, pf->local, alen);
	r = ctnl_get(pd->ct, &f, &ci);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return (ci.mark & pd->conf->marks.ct_integ) != 0;
}

/* Fails flow fe for p (dropped first), counted as why, logged as what. */
static void fail_flow(struct pending *pd, struct verdicts *out, struct flow_entry *fe,
		      const struct nfqueue_packet *p, enum server_counter why, const char *what)
{
	pd->cnt->c[why]++;
	pending_log(pd, fe->value, what);
	verdict_drop(out, p->id);
	pending_end(pd, out, fe, true, true);
}

/* Are all bytes of the integrity range this segment covers in the capture? */
static bool window_captured(const struct pending_flow *pf, const struct pkt_view *v)
{
	int64_t off = (int32_t)(v->seq - pf->buf.base);

	return !(off < pf->buf.need && off + (int64_t)v->payload_len > 0 &&
		 v->payload_caplen < v->payload_len &&
		 off + (int64_t)v->payload_caplen < pf->buf.need);
}

/*
 * WAIT: every byte of the range is in; verify, then pass or fail the flow.
 * False when the bytes failed: a refused knock, for the owner to count.
 */
static bool check_bytes(struct pending *pd, struct verdicts *out, struct flow_entry *fe)
{
	struct pending_flow *pf = fe->value;
	const struct conf_protect *e = &pd->conf->protect[pf->protect];
	struct isn_input in = { .family = pf->dialled.family, .dst = pf->dialled.addr,
				.port = pf->dialled.port, .tsval = pf->tsval };
	struct isn_params vp = { .mode = e->mode, .integrity_len = e->integrity_len,
				    .window = e->window };

	if (isn_verify_payload(&pd->conf->keyring.keys[pf->key], &vp, &in, pf->isn, pf->epoch,
			       pf->buf.data) != ISN_OK) {
		pd->cnt->c[SC_integ_fail]++;
		pending_log_event(pd, pf, LOG_EV_INTEGRITY_FAILED, "integrity check failed, connection reset");
		pending_end(pd, out, fe, true, true);
		return false;
	}
	pd->cnt->c[SC_integ_ok]++;
	pending_unhold(pd, out, pf, true);
	pf->state = PENDING_VERIFIED;
	fe->expires = pd->now + pd->conf->integrity_timeout;
	return true;
}

/*
 * Would the service's TCP, given this segment, read something other than
 * the range's bytes in their place?  An urgent pointer into the range takes
 * a byte out of the stream (integ.h); a FIN inside it ends the stream
 * before the range does.  Once the service acknowledged the whole range
 * (DONE) neither can reach back into it: a receiver ignores an urgent
 * pointer before what it has received (Linux's tcp_check_urg), and a FIN
 * there is old.  *why and *what: the counter and log line; false: neither.
 */
static bool breaks_range(const struct pending_flow *pf, const struct pkt_view *v,
			 enum server_counter *why, const char **what)
{
	if ((v->flags & TCP_URG) && integ_urgent_hits(&pf->buf, v->seq, v->urg_ptr)) {
		*why = SC_integ_urgent;
		*what = "urgent pointer into the checked bytes, reset";
		return true;
	}
	if ((v->flags & TCP_FIN) && integ_covers(&pf->buf, v->seq + (uint32_t)v->payload_len)) {
		*why = SC_integ_early_fin;
		*what = "FIN inside the checked bytes, reset";
		return true;
	}
	return false;
}

enum pending_seg pending_client(struct pending *pd, struct verdicts *out,
				const struct nfqueue_packet *p, const struct pkt_view *v,
				uint64_t now)
{
	struct flow_key k;
	struct flow_entry *fe;
	struct pending_flow *pf;
	enum server_counter why;
	const char *what;

	pd->now = now;
	flow_key_client(&k, v, p->data);
	fe = flow_lookup(&pd->table, &k);
	if (!fe && pending_has_code(pd, p->mark, pd->conf->marks.invalid)) {
		/*
		 * Conntrack called it invalid (it carries no entry, so no flag),
		 * and it belongs to no flow being checked: it goes on to TCP as
		 * it would without us, unless its flow is one we reset lately
		 * (the service's socket may have outlived the abort).
		 */
		if (strays_recent(&pd->strays, v->family, pkt_src(p->data, v), pkt_dst(p->data, v),
				  v->sport, v->dport, pd->now)) {
			pd->cnt->c[SC_integ_unknown]++;
			pd->cnt->c[SC_integ_stray_quiet]++;
			verdict_drop(out, p->id);
			return PENDING_SEG_DONE;
		}
		pending_accept(pd, out, VQ_OWN, p->id, p->mark);
		return PENDING_SEG_DONE;
	}
	if (fe && pending_has_code(pd, p->mark, pd->conf->marks.noconn)) {
		/*
		 * Conntrack lost the flow's entry (flushed, evicted): the flag
		 * that brings its segments here is gone with it, so nothing
		 * after this one would be checked.  Failed closed.
		 */
		fail_flow(pd, out, fe, p, SC_integ_lost, "conntrack lost the flow, reset");
		return PENDING_SEG_DONE;
	}
	if (fe && pending_has_code(pd, p->mark, pd->conf->marks.invalid) &&
	    ((struct pending_flow *)fe->value)->state == PENDING_WAIT) {
		switch (still_flagged(pd, fe->value)) {
		case 1:
			break;
		case 0:
			fail_flow(pd, out, fe, p, SC_integ_lost, "conntrack lost the flow, reset");
			return PENDING_SEG_DONE;
		default:
			/* Cannot tell now: the sender retransmits it. */
			pd->cnt->c[SC_hold_cap]++;
			verdict_drop(out, p->id);
			return PENDING_SEG_DONE;
		}
	}
	if (!fe) {
		/* An RST of a flow we do not know resets nothing more. */
		if (v->flags & TCP_RST) {
			pd->cnt->c[SC_integ_unknown]++;
			verdict_drop(out, p->id);
			return PENDING_SEG_DONE;
		}
		unknown_flow(pd, out, p->id, v->family, pkt_dst(p->data, v), v->dport,
			     pkt_src(p->data, v), v->sport, true);
		return PENDING_SEG_DONE;
	}
	pf = fe->value;
	if (pf->state == PENDING_DONE) {
		pending_accept(pd, out, VQ_OWN, p->id, p->mark);
		return PENDING_SEG_DONE;
	}
	if (v->flags & TCP_RST) {
		/*
		 * TCP reads nothing of an RST but the reset (its data, if any,
		 * is diagnostic), and conntrack has taken it already.  It ends
		 * a waiting flow, failed: the connection is reset, by the client
		 * or by us.  A verified one goes on being checked (TCP ignores
		 * an RST out of its window, and the verified bytes it has not
		 * taken yet must still be the ones it reads), until the
		 * service's acknowledgement or the timeout.
		 */
		pending_accept(pd, out, VQ_OWN, p->id, p->mark);
		if (pf->state == PENDING_WAIT)
			pending_end(pd, out, fe, true, false);
		return PENDING_SEG_DONE;
	}
	if (breaks_range(pf, v, &why, &what)) {
		fail_flow(pd, out, fe, p, why, what);
		return PENDING_SEG_DONE;
	}
	if (v->payload_len == 0 && (pf->state != PENDING_WAIT || !(v->flags & TCP_FIN))) {
		/*
		 * The handshake's ACK and bare ACKs carry nothing to check; a
		 * bare FIN waits with the bytes (below) until they verify.
		 */
		pending_accept(pd, out, VQ_OWN, p->id, p->mark);
		return PENDING_SEG_DONE;
	}
	if (!window_captured(pf, v)) {
		/* Bytes of the range we cannot see: they cannot be checked. */
		pd->cnt->c[SC_integ_short_capture]++;
		verdict_drop(out, p->id);
		pending_end(pd, out, fe, true, true);
		return PENDING_SEG_DONE;
	}
	enum integ_status st = integ_add(&pf->buf, v->seq, p->data + v->payload_off,
					 v->payload_caplen);
	if (st == INTEG_CONFLICT) {
		/*
		 * Bytes that disagree with those already seen (WAIT) or
		 * verified (VERIFIED: the service may not have taken the
		 * verified copy; this one it would).
		 */
		fail_flow(pd, out, fe, p, SC_integ_conflict, "conflicting retransmission, reset");
		return PENDING_SEG_DONE;
	}
	if (pf->state == PENDING_VERIFIED) {
		/* What it carries of the range is the verified bytes again. */
		pending_accept(pd, out, VQ_OWN, p->id, p->mark);
		return PENDING_SEG_DONE;
	}
	if (!pending_hold(pd, out, fe, p, v, false))
		return PENDING_SEG_DONE;
	if (st == INTEG_COMPLETE && !check_bytes(pd, out, fe))
		return PENDING_SEG_FAILED;
	return PENDING_SEG_DONE;
}

/*
 * Clears the flow's conntrack bit, so that its packets bypass the daemon
 * from now on.  False when that failed for now (counted; the next of the
 * service's segments tries again, and the checks go on meanwhile); an
 * entry conntrack no longer has needs no clearing.
 */
static bool unflag(struct pending *pd, const struct pending_flow *pf)
{
	struct ct_flow f = { .family = pf->family, .sport = pf->rport, .dport = pf->lport };
	size_t alen = pf->family == AF_INET6 ? 16 : 4;
	int r;

	memcpy(f.src, pf->remote, alen);
	memcpy(f.dst, pf->local, alen);
	r = pd->ct ? ctnl_set_mark(pd->ct, &f, 0, pd->conf->marks.ct_integ) : -ENOTSUP;
	if (r == 0 || r == -ENOENT)
		return true;
	pd->cnt->c[SC_integ_unflag_error]++;
	return false;
}

void pending_reply(struct pending *pd, struct verdicts *out, const struct nfqueue_packet *p,
		   const struct pkt_view *v, uint64_t now)
{
	struct flow_key k;
	struct flow_entry *fe;
	struct pending_flow *pf;

	pd->now = now;
	flow_key_reply(&k, v, p->data);
	fe = flow_lookup(&pd->table, &k);
	if (!fe) {
		/*
		 * Without data (an ACK, the RST of a socket we aborted) it tells
		 * the client nothing.  Data of a flow we do not know (we
		 * restarted, or failed it) is the service talking to a client
		 * nobody verified: dropped, both ends reset.
		 */
		if (v->payload_len == 0 || (v->flags & TCP_RST))
			goto accept;
		unknown_flow(pd, out, p->id, v->family, pkt_src(p->data, v), v->sport,
			     pkt_dst(p->data, v), v->dport, false);
		return;
	}
	pf = fe->value;
	switch ((enum pending_state)pf->state) {
	case PENDING_WAIT:
		if (v->flags & TCP_RST) {
			/* The service gave up: nothing held of this flow may follow. */
			pending_accept(pd, out, VQ_OWN, p->id, p->mark);
			pending_end(pd, out, fe, true, false);
			return;
		}
		/* The service's first bytes (a banner) wait for the client's. */
		if (v->payload_len > 0) {
			pending_hold(pd, out, fe, p, v, true);
			return;
		}
		break;
	case PENDING_VERIFIED:
		if ((v->flags & TCP_ACK) && (int32_t)(v->ack - (pf->buf.base + pf->buf.need)) >= 0 &&
		    unflag(pd, pf)) {
			/* The service's TCP has every verified byte: checking ends. */
			pf->state = PENDING_DONE;
			fe->expires = pd->now + RELEASE_GRACE;
		}
		break;
	case PENDING_DONE:
		break;
	}
accept:
	/* It came with the reply code, which pending_accept takes off. */
	pending_accept(pd, out, VQ_OWN, p->id, p->mark);
}
