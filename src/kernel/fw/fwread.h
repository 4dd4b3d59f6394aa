/*
 * fwread.h - reads this namespace's nftables ruleset, every table but
 * knockgw's own, into plain data (fwrules.h) for the firewall check.
 * Part of the rules adapter (it uses libnftnl and the netlink transport);
 * read-only: dumps of chains, sets and their elements, and rules.
 *
 * Reading needs CAP_NET_ADMIN (nfnetlink refuses every request, a dump
 * too, without it): -EPERM then.  Rules of iptables-legacy live outside
 * nftables and are not seen; fwread_legacy() says whether there are any.
 */
#ifndef KNOCKGW_FWREAD_H
#define KNOCKGW_FWREAD_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/fw/fwrules.h"

/*
 * Fills rs (zeroed by the caller) with every chain, set, element and rule
 * of the families ip, ip6, inet and netdev, but table inet skip_table.
 * 0, or -errno with the reason in err (rs may hold part of it: free it).
 * rs->full: a bound was reached and the model is incomplete.
 */
int fwread_ruleset(struct fw_ruleset *rs, const char *skip_table, char *err, size_t errlen);

/*
 * Does this network namespace have iptables-legacy tables with rules the
 * check cannot see (/proc/net/ip_tables_names, ip6_tables_names)?  Names
 * them in names; false when none, or they cannot be read.
 */
bool fwread_legacy(char *names, size_t len);

#endif
