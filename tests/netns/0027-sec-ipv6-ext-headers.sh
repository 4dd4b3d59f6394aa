#!/bin/sh
# IPv6 extension headers the kernel handles after the input hook must get
# the same answer from a protected port as from a closed one.  A SYN with a
# destination option the kernel does not know, whose type says "discard"
# (01) or "discard and send a Parameter Problem" (10, 11), with bad padding,
# or with a routing header that still has segments left: a closed port says
# nothing over TCP, and the kernel answers with an ICMPv6 Parameter Problem
# where the option asks for one.  The old daemon answered each of these with
# its closed-port RST.  Also: such a SYN never reaches sshd, and one whose
# option says "skip" is an ordinary refused SYN (RST).
#
#   client ns $NS_C                       server ns $NS_S
#   +--------------------+                +----------------------------------+
#   | prober.py --ext    |---- veth ------| sshd :22 protected, :23 closed;  |
#   | 2001:db8::1        |                | icmp ratelimit 0 (every answer)  |
#   +--------------------+                +----------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
# Every Parameter Problem is sent: the kernel's rate limit would make the
# count depend on timing.
in_s sysctl -qw net.ipv6.icmp.ratelimit=0
K=$(key_file k)
start_server "$(entry 22)"

parmprobs() { in_c awk '$1 == "Icmp6InParmProblems" { print $2 }' /proc/net/snmp6; }
# answer NAME PORT EXT: the TCP answer's flags, then the Parameter Problems
# that came back, e.g. "None 1".
answer() {
	before=$(parmprobs)
	probe "$1-$2" $C6 $S6 "$2" 0badc0de --tsval 77 --ext "$3"
	sleep 0.2
	echo "$(flags_of "$1-$2") $(($(parmprobs) - before))"
}
same() { # NAME EXT WANT: protected and closed ports answer alike, as WANT
	closed=$(answer "$1" 23 "$2")
	protected=$(answer "$1" 22 "$2")
	check "$1: closed port: $closed; protected port: $protected" \
		[ "$closed" = "$protected" ]
	check "$1: ... which is $3" [ "$closed" = "$3" ]
}
same discard 60:06005e0200000100 "None 0"
same discard_icmp 60:06009e0200000100 "None 1"
same discard_icmp_unicast 60:0600de0200000100 "None 1"
same nonzero_padn 60:0600010401000000 "None 0"
same routing_segleft 43:0600000100000000 "None 1"
same skip 60:06001e0200000100 "RA 0"

check "sshd never saw a connection" sh -c "! grep -q 'Connection from' '$TMP/sshd.log'"
# Five of the probes above the kernel discards, to each port: with the
# shipped defaults a closed port's probe takes a protected port's path
# through the daemon, so both ports' count.
check "the daemon left them to the kernel, counted ($(counter v6_discarded) of 10)" \
	[ "$(counter v6_discarded)" = 10 ]
check "a valid knock with a skippable option passes" \
	knock_gets SA "$K" 22 $C6 $S6 --ext 60:06001e0200000100
finish
