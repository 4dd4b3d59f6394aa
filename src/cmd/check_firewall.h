/*
 * check_firewall.h - will a refused SYN look like a SYN to one of this host's
 * unused ports, given the host's own firewall?  `knockgw check-firewall
 * [-c FILE]`, and the line `knockgw -n -v` prints about it.
 *
 * A protected port must answer like an unused port of this host, whatever
 * the host's firewall does with unused ports: silence under a drop policy,
 * the firewall's reject where it rejects, the kernel's RST where nothing
 * filters.  knockgw refuses a SYN by redirecting it to rules.refuse_port,
 * so the host's input path decides the answer: a firewall that allows
 * that port (or accepts whatever was DNAT'ed) while dropping or rejecting
 * the rest makes the protected port the one that stands out.
 *
 * The check reads the namespace's ruleset (fwread.h: every table but
 * knockgw's, which needs CAP_NET_ADMIN), and for each protected port and
 * each family judges a refused SYN against SYNs to a few unused ports
 * (ports no rule names and nothing listens on) with fwjudge.h.  It prints,
 * per family, what each gets and which rule or policy decides it.
 * iptables-legacy tables are outside nftables: where there are any, it
 * cannot tell.  Refusals of a `forward` entry are answered by the routed
 * host and are not checked here.
 *
 * Exit codes: 0 alike; 4 not alike (a protected port stands out); 5 it
 * cannot tell; 1 an error (the configuration, or reading the ruleset);
 * 2 usage.
 */
#ifndef KNOCKGW_CHECK_FIREWALL_H
#define KNOCKGW_CHECK_FIREWALL_H

#include <stdio.h>

#include "config/conf.h"

enum { CHECK_FIREWALL_ALIKE = 0, CHECK_FIREWALL_ERROR = 1, CHECK_FIREWALL_DIFFER = 4, CHECK_FIREWALL_UNSURE = 5 };

/* check_firewall_main() is in commands.h. */

/*
 * One line on out, "firewall: ...", for `knockgw -n -v`: the verdict, or
 * why there is none (not root: the ruleset cannot be read).  Nothing when
 * c protects no port.
 */
void check_firewall_summary(const struct conf *c, FILE *out);

#endif
