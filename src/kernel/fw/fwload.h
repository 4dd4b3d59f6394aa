/*
 * fwload.h - what the firewall judge loads into registers for a packet
 * (payload, meta, ct and fib expressions); part of the interpreter
 * (fwexec.h).
 */
#ifndef KNOCKGW_FWLOAD_H
#define KNOCKGW_FWLOAD_H

#include <stdbool.h>

#include "kernel/fw/fwrun.h"

/* The meta and ct loads return false where the kernel ends the rule. */
void fw_load_payload(struct run *r, const struct fw_expr *e);
bool fw_load_meta(struct run *r, const struct fw_expr *e);
bool fw_load_ct(struct run *r, const struct fw_expr *e);
void fw_load_fib(struct run *r, const struct fw_expr *e);

#endif
