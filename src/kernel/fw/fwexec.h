/*
 * fwexec.h - the firewall judge's rule interpreter (see fwjudge.h): one
 * packet through one rule, in one world of shared conditions (fwrun.h).
 * Internal to fwjudge.c, which walks the chains and drives the worlds;
 * pure.  A test on own bytes, or an expression the judge does not know,
 * stops the rule with S_UNKNOWN and says why.
 */
#ifndef KNOCKGW_FWEXEC_H
#define KNOCKGW_FWEXEC_H

#include <stddef.h>

#include "kernel/fw/fwrun.h"

/*
 * Runs rule ri of chain c for r's packet (r->view set for the chain):
 * S_NEXT (on to the next rule), a verdict (*target: the chain of a jump
 * or goto), S_ANSWER with a reject's answer in *a, S_PENDING (r->pkey,
 * r->pvals) or S_UNKNOWN / S_QUEUED (r->why).
 */
enum step fw_exec_rule(struct run *r, const struct fw_chain *c, size_t ri, size_t *target,
		       struct fw_answer *a);

#endif
