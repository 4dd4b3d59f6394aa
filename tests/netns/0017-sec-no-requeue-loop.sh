#!/bin/sh
# No packet is queued twice by the same decision.  With closed_ports
# "daemon", a protected port nobody listens on, and a valid knock: the
# input chain queues the SYN, the daemon lets it through (an integrity SYN
# by REPEAT with its mark, which runs the hook again), and chain
# input_closed must leave it alone, else it queues the SYN once more and,
# after REPEAT, again and again: one SYN kept the daemon busy forever.  The
# valid knock gets the kernel's own closed-port RST (the daemon sends none),
# and a plain SYN there still gets the daemon's.
#
#   client ns 192.0.2.1      ---- veth ----  server ns 192.0.2.2
#             2001:db8::1                              2001:db8::2
#   prober.py (raw SYNs)                     knockgw; nothing listens on
#                                            2200 (integrity) or 2201
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
K=$(key_file k)
start_server "$(entry 2200 "integrity_len = 16;"), $(entry 2201)" "closed_ports = \"daemon\";"
printf 'SSH-2.0-NoListener\r\n' >"$TMP/banner"

# knock NAME SRC DST PORT [isn args]: one valid knock, the queue's count of
# packets before and a while after (a loop would have run by then).
knock() {
	k_name=$1 k_src=$2 k_dst=$3 k_port=$4
	shift 4
	k_isn=$(isn native "$K" "$k_dst" "$k_port" 4242 "$@")
	q_before=$(qcounter queued)
	rst_before=$(counter rst_sent)
	ok_before=$(counter syn_accepted)
	probe "$k_name" "$k_src" "$k_dst" "$k_port" "$k_isn" --tsval 4242
	sleep 3
	q_after=$(qcounter queued)
	echo "# $k_name: $((q_after - q_before)) packet(s) queued"
	check "$k_name: the daemon accepted the knock once" \
		[ "$(counter syn_accepted)" = $((ok_before + 1)) ]
	check "$k_name: queued a handful of times, not in a loop" \
		[ $((q_after - q_before)) -le 4 ]
	check "$k_name: RST+ACK, as from a closed port" [ "$(flags_of "$k_name")" = RA ]
	check "$k_name: ... the kernel's, not the daemon's" \
		[ "$(counter rst_sent)" = "$rst_before" ]
}

knock integrity-4 $C4 $S4 2200 --integrity-len 16 --payload-file "$TMP/banner"
knock integrity-6 $C6 $S6 2200 --integrity-len 16 --payload-file "$TMP/banner"
knock auth-only-4 $C4 $S4 2201

for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
	nat_before=$(counter nat_refusals)
	check "IPv$fam: a plain SYN to 2200 gets RST+ACK" plain_gets RA 2200 $src $dst
	check "IPv$fam: ... refused by the daemon, answered by the kernel's closed port" \
		[ "$(counter nat_refusals)" -gt "$nat_before" ]
done
check "the daemon still answers SIGUSR1 (not stuck in a loop)" \
	[ -n "$(qcounter queued)" ]
finish
