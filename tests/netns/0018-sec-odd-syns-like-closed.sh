#!/bin/sh
# A protected port must be indistinguishable from a closed one, whatever the
# SYN looks like.  Each shape below goes to the protected port 22 (a refused
# knock: the daemon answers, on_fail "reset") and to the closed port 23 (the
# kernel answers, the reference), over IPv4 and IPv6 where the shape exists;
# the two answers must be equal field for field
# (tests/netns/lib/rstcmp.py), or both absent.  Shapes: TCP options the kernel reads leniently (a wrong
# length, a duplicate, a broken length), a SYN larger than the queue's copy
# range with a good and a bad checksum, IPv4 options the kernel echoes
# (record route, timestamps) and ones it does not, IPv6 extension headers,
# fragments, and the odd flags and fields a scanner can set.
#
#   client ns (prober.py)          server ns
#   vc 192.0.2.1, 2001:db8::1 ---- vs 192.0.2.2, 2001:db8::2
#   MTU 9000 both ends             sshd :22 behind knockgw, nothing on :23
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
# Room for SYNs larger than the queue's copy range (2560 bytes).
in_c ip link set vc mtu 9000
in_s ip link set vs mtu 9000

K=$(key_file k)
start_server "$(entry 22)"

# same NAME FAM [prober args]: the shape to 22 and to 23, compared.
same() {
	s_name=$1 s_fam=$2
	shift 2
	if [ "$s_fam" = 4 ]; then s_src=$C4 s_dst=$S4; else s_src=$C6 s_dst=$S6; fi
	probe "p-$s_name-$s_fam" $s_src $s_dst 22 11111111 "$@"
	probe "c-$s_name-$s_fam" $s_src $s_dst 23 11111111 "$@"
	if s_out=$(rst_alike "p-$s_name-$s_fam" "c-$s_name-$s_fam" --silent-ok); then
		ok "IPv$s_fam $s_name: the same ($s_out)"
	else
		not_ok "IPv$s_fam $s_name: the protected port answers differently"
		echo "$s_out"
	fi
}

for fam in 4 6; do
	same plain $fam
	# TCP options: tcp_parse_options skips a wrong length, lets the last
	# copy win and stops at a broken length; a closed port reads none.
	same mss_len5 $fam --tcp-opts 020505b4000000
	same mss_twice $fam --tcp-opts 020405b4020402180101080a0000000100000000
	same ts_twice $fam --tcp-opts 080a000000010000000001010101080a0000000200000000
	same opt_len1 $fam --tcp-opts 020405b42201
	same opt_len0 $fam --tcp-opts 2200080a0000000100000000
	same sack_len3 $fam --tcp-opts 050300080c
	# The checksum: the kernel checks it before it answers, also for a
	# SYN larger than the daemon's copy of it.
	same bad_csum $fam --bad-csum
	same big_syn $fam --payload-len 3000
	same big_syn_bad_csum $fam --payload-len 3000 --bad-csum
	# Flags and fields.
	same syn_data $fam --payload-len 100
	same ecn_ttl1 $fam --flags SEC --tos 0x03 --ttl 1
	same urgent $fam --flags SU --urg 7
	same fin_wscale $fam --flags fin --tcp-opts 01030307
done

# IPv4 options: the kernel's RST echoes record route and timestamp (this
# host added where there is room), nothing else; source routes are dropped
# on input (accept_source_route 0).
same ip_rr 4 --ip-opts 070b040000000000000000
same ip_rr_full 4 --ip-opts 070708c0000201
same ip_rr_misaligned 4 --ip-opts 070b050000000000000000
same ip_ts 4 --ip-opts 440c050000000000000000
same ip_ts_addr 4 --ip-opts 44140501000000000000000000000000000000
same ip_ts_prespec 4 --ip-opts 44140503c0000202000000006633640700000000
same ip_ts_overflow 4 --ip-opts 44080900aabbccdd01010101
same ip_ra_rr 4 --ip-opts 94040000070b040000000000000000
same ip_ts_rr 4 --ip-opts 440c0500000000000000000001070b040000000000000000
same ip_security 4 --ip-opts 820b000000000000000000
same ip_lsrr 4 --ip-opts 830708c6336409
same ip_frag 4 --frag 16

# IPv6 extension headers: the kernel's RST carries none.
same dstopts 6 --ext 60:0600010400000000
same hopopts 6 --ext 0:0600010400000000
same dstopt_skip 6 --ext 60:06001e0200000100
same frag_atomic 6 --ext 44:0600000000000001
finish
