/*
 * test_door.c - the door's classification (door.h): every rule that queues
 * a packet, in every plan the rules adapter makes (nftplan.h), must send
 * what it queues to its handler.
 *
 * The configurations below together make each kind of queueing rule at
 * least once: protect entries with on_fail "reset" and "drop", integrity,
 * a forward entry, closed_ports "daemon" (the default); knock entries with
 * the user path and a gateway `from`.  For each rule of each plan (the
 * running table, the hiding one a stop leaves, the keeper), a packet is
 * made as that rule would queue it: its chain's hook, its queue set, and in
 * our mark bits the code the rule leaves (the table kinds[] below, from
 * nftplan.h's drawing), with other software's bits beside them.  It must
 * classify to the kind's way.  Then every queueing kind must have been seen.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/marks.h"
#include "config/conf.h"
#include "datapath/door.h"
#include "kernel/nft/nftplan.h"
#include "kernel/nft/nftprint.h"
#include "unit.h"

/* What a rule leaves in our mark bits. */
enum code { KEPT, CLEARED, NEWSYN, NOCONN, INVALID, REPLY, FWD };

static const struct kind_row {
	enum nftplan_kind kind;
	bool queues;
	enum code code;
	enum door_way way;
} kinds[] = {
	{ RK_MARK_INTEG, false, 0, 0 },
	{ RK_SYN_HIDE, true, NEWSYN, DOOR_SERVER },
	{ RK_SYN, true, CLEARED, DOOR_SERVER },
	{ RK_NAT_ACCEPTED, false, 0, 0 },
	{ RK_NAT_REFUSE, false, 0, 0 },
	{ RK_NOCONN_RESET, false, 0, 0 },
	{ RK_STRAY_QUEUE, true, NOCONN, DOOR_SERVER },
	{ RK_STRAY_DROP, false, 0, 0 },
	{ RK_NOCONN_NEW, true, NEWSYN, DOOR_SERVER },
	{ RK_NOCONN, true, NOCONN, DOOR_SERVER },
	{ RK_INVALID_INTEG, true, INVALID, DOOR_SERVER },
	{ RK_INTEG, true, CLEARED, DOOR_SERVER },
	{ RK_INTEG_REPLY, true, REPLY, DOOR_SERVER_REPLY },
	{ RK_CLIENT_SYN, true, KEPT, DOOR_CLIENT_OUT },
	{ RK_CLIENT_OUT, true, KEPT, DOOR_CLIENT_OUT },
	{ RK_CLIENT_IN, true, KEPT, DOOR_CLIENT_IN },
	{ RK_CLIENT_IN_NOCT, true, KEPT, DOOR_CLIENT_IN },
	{ RK_CLIENT_FWD_SYN, true, FWD, DOOR_CLIENT_ROUTED },
	{ RK_CLIENT_FWD_SPOOF, false, 0, 0 },
	{ RK_CLIENT_FWD_OUT, true, FWD, DOOR_CLIENT_ROUTED },
	{ RK_CLIENT_FWD_IN, true, KEPT, DOOR_CLIENT_IN },
	{ RK_CLIENT_FWD_IN_NOCT, true, KEPT, DOOR_CLIENT_IN },
	{ RK_CLIENT_ICMP, true, KEPT, DOOR_CLIENT_IN },
	{ RK_CLIENT_FWD_ICMP, true, KEPT, DOOR_CLIENT_IN },
	{ RK_CT_KEEP, false, 0, 0 },
	{ RK_PROBE_GATE, false, 0, 0 },
	{ RK_PROBE_SKIP, false, 0, 0 },
	{ RK_PROBE_SOCKET, false, 0, 0 },
	/* CLEARED at input_closed; NEWSYN at prerouting_closed (check_plan) */
	{ RK_PROBE, true, CLEARED, DOOR_SERVER },
	{ RK_PROBE_SNAT, false, 0, 0 },
};

enum { NKINDS = RK_PROBE_SNAT + 1, OTHER_BITS = 0x00000abc };

static const char *const confs[] = {
	"keys = ( { name = \"k\"; secret = \"Magic secret string\"; } );\n"
	"protect = (\n"
	"  { port = 22; mode = \"knock\"; keys = [ \"k\" ]; },\n"
	"  { port = 2022; mode = \"knock\"; keys = [ \"k\" ]; on_fail = \"drop\"; },\n"
	"  { port = 4242; mode = \"knock\"; keys = [ \"k\" ]; integrity_len = 16; },\n"
	"  { port = 22; mode = \"knock\"; keys = [ \"k\" ]; forward = true;\n"
	"    addresses = [ \"203.0.113.0/24\", \"2001:db8:5::/64\" ]; }\n"
	");\n"
	"knock = (\n"
	"  { dst = \"192.0.2.10\"; port = 22; mode = \"knock\"; key = \"k\"; },\n"
	"  { dst = \"198.51.100.5\"; port = 22; mode = \"knock\"; key = \"k\";\n"
	"    from = [ \"10.0.0.0/24\", \"fd00::/64\" ]; }\n"
	");\n"
	"translate = \"user\";\n",
	/* The kernel path; interfaces for the routed SYNs. */
	"keys = ( { name = \"k\"; secret = \"Magic secret string\"; } );\n"
	"protect = ( { port = 22; mode = \"knock\"; keys = [ \"k\" ]; integrity_len = 8; } );\n"
	"knock = (\n"
	"  { dst = \"2001:db8:5::/64\"; port = 22; mode = \"knock\"; key = \"k\";\n"
	"    from = [ \"fd00::/64\" ]; from_interfaces = [ \"lan0\" ]; }\n"
	");\n",
};

static uint32_t code_of(const struct marks *m, enum code c)
{
	switch (c) {
	case NEWSYN:
		return m->newsyn;
	case NOCONN:
		return m->noconn;
	case INVALID:
		return m->invalid;
	case REPLY:
		return m->reply;
	case FWD:
		return m->fwd;
	default:
		return 0;
	}
}

static void check_plan(const struct conf *c, const struct nftplan *p, const char *which,
		       unsigned *seen)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct nftplan_rule *ru = &p->r[i];
		const struct kind_row *k = &kinds[ru->kind];
		unsigned hook = nftplan_chain_def(ru->chain)->hook;
		/* A new connection to a closed port goes on to the kernel coded NEWSYN. */
		bool closed_pre = ru->kind == RK_PROBE && ru->chain == CH_PREROUTING_CLOSED;
		enum code code = closed_pre ? NEWSYN : k->code;
		char what[160];

		nftprint_rule_what(ru, what, sizeof(what));
		if (!k->queues)
			continue;
		seen[ru->kind]++;
		/* Other software's bits beside ours; a kept mark may hold anything of theirs. */
		for (int other = 0; other <= 1; other++) {
			uint32_t mark = (other ? marks_own(&c->marks, OTHER_BITS) : 0) |
					code_of(&c->marks, code);
			enum door_way way = door_classify(&c->marks, (enum conf_qset)ru->qset, hook,
							  mark);

			CHECK_EQ_U(way, k->way, "%s plan: %s (hook %u, set %u, mark %#x): its way",
				   which, what, hook, (unsigned)ru->qset, (unsigned)mark);
		}
	}
}

int main(void)
{
	static unsigned seen[NKINDS];
	struct conf *c = calloc(1, sizeof(*c));
	struct conf_errors *errs = calloc(1, sizeof(*errs));

	for (size_t i = 0; i < NKINDS; i++)
		CHECK(kinds[i].kind == (enum nftplan_kind)i, "kinds[%zu] is in enum order", i);
	if (!c || !errs) {
		CHECK(0, "out of memory");
		return unit_done("door");
	}
	for (size_t i = 0; i < sizeof(confs) / sizeof(confs[0]); i++) {
		struct nftplan p;

		if (conf_load_text("door.conf", confs[i], c, errs) < 0) {
			CHECK(0, "configuration %zu loads (%s)", i + 1,
			      errs->n ? errs->msg[0] : "?");
			continue;
		}
		if (nftplan_make(c, &p) == 0) {
			check_plan(c, &p, "running", seen);
			nftplan_free(&p);
		} else {
			CHECK(0, "configuration %zu: plan", i + 1);
		}
		if (nftplan_make_hiding(c, &p) == 0) {
			check_plan(c, &p, "hiding", seen);
			nftplan_free(&p);
		} else {
			CHECK(0, "configuration %zu: hiding plan", i + 1);
		}
		if (nftplan_make_keeper(c, &p) == 0) {
			check_plan(c, &p, "keeper", seen);
			nftplan_free(&p);
		} else {
			CHECK(0, "configuration %zu: keeper plan", i + 1);
		}
		conf_free(c);
	}
	for (size_t i = 0; i < NKINDS; i++)
		if (kinds[i].queues)
			CHECK(seen[i] > 0, "a rule of queueing kind %zu was planned", i);
	free(c);
	free(errs);
	return unit_done("door");
}
