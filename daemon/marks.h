/*
 * marks.h - the packet and conntrack mark bits shared by the rules
 * (nftrules.c) and the data path (server.c).
 *
 * A queued packet that needs the kernel to act for us goes back with
 * NF_REPEAT and one of these values in the bits of KGW_MARK_MASK: our chain
 * runs again and its first rules act on the mark (set or clear the flow's
 * conntrack bit), clear the bits and accept.  A verdict cannot set the
 * conntrack mark directly: that needs the NFQA_CT glue
 * (CONFIG_NETFILTER_NETLINK_GLUE_CT), which kernels such as this project's
 * build machine lack.
 */
#ifndef KNOCKGW_MARKS_H
#define KNOCKGW_MARKS_H

enum {
	KGW_MARK_MASK = 0x7f000000,
	KGW_MARK_INTEG = 0x4c000000,	/* valid integrity SYN: flag the flow */
	KGW_MARK_RELEASE = 0x4d000000,	/* integrity acknowledged: unflag the flow */
	KGW_MARK_REPLY = 0x4e000000,	/* the output rule's: a service's integrity segment */
	KGW_MARK_INVALID = 0x4f000000,	/* a rule's: conntrack called it invalid */
	KGW_MARK_NOCONN = 0x50000000,	/* a rule's: conntrack knows no connection for it */
	KGW_CTMARK_INTEG = 0x40000000,	/* conntrack: flow awaits its integrity bytes */
};

#endif
