/*
 * caps.h - the daemon's privileges after setup: CAP_NET_ADMIN alone.
 *
 * After setup the daemon needs CAP_NET_ADMIN only (queue verdicts, nft
 * reloads, conntrack entries, SOCK_DESTROY); the raw sockets are open, so
 * CAP_NET_RAW goes too.  Capabilities are per thread: this runs before the
 * workers start, and they inherit the reduced set.
 *
 * What holds the line is no_new_privs together with permitted, effective,
 * inheritable and ambient reduced to CAP_NET_ADMIN: no execve can then
 * give back more than the permitted set (not even to uid 0), and nothing
 * else raises a capability.  The bounding set only limits what an execve
 * may grant, so shrinking it is a second lock on the same door; it takes
 * CAP_SETPCAP, which a service manager that already bounded the set (our
 * own unit: CAP_NET_ADMIN CAP_NET_RAW) does not leave us.  Then the
 * capabilities still in it stay there, *ret_kept says how many, and the
 * daemon runs: refusing to start under its own unit protects nothing.
 *
 * 0, or -errno of the call that failed (the daemon then refuses to run).
 */
#ifndef KNOCKGW_CAPS_H
#define KNOCKGW_CAPS_H

int caps_keep_net_admin(int *ret_kept);

#endif
