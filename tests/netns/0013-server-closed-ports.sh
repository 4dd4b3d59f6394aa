#!/bin/sh
# Server role with closed_ports = "daemon" (the default): SYNs and FIN/NULL/
# Xmas probes to ports nobody listens on are answered with the RST the
# kernel would send (field for field, compared with the kernel's own answer
# taken before the daemon started), through the same path as a refused knock.
# Listening ports, valid knocks and established flows are not touched; a
# port another firewall drops stays silent; without the daemon the kernel
# answers again.
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
# An unprotected service on 8080 (must stay open), nothing on 23 and 24.
# One dual-stack socket ([::], IPv4 mapped): the socket lookup finds it for both.
in_s socat TCP6-LISTEN:8080,fork,reuseaddr,ipv6only=0 EXEC:/bin/cat >/dev/null 2>&1 &
PIDS="$PIDS $!"
listening 8080

K=$(key_file k)
key_conf "$TMP/knockgw.conf" "$(entry 22)" 'closed_ports = "daemon";'

# The kernel's own answers, before knockgw: the reference.
for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
	probe k-syn-$fam $src $dst 23 11111111 --tsval 4242
	probe k-tos-$fam $src $dst 23 11111111 --no-ts --tos 0x2a
done
check "without knockgw the closed port answers RST+ACK" [ "$(flags_of k-syn-4)" = RA ]

start_knockgw "$NS_S" "$TMP/knockgw.conf"
check "the table has the input_closed chain" \
	sh -c "ip netns exec $NS_S nft list chain inet knockgw input_closed >/dev/null 2>&1"

for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
	before=$(counter closed)
	probe d-syn-$fam $src $dst 23 11111111 --tsval 4242
	check "IPv$fam: closed port answered by the daemon (counted)" \
		[ "$(counter closed)" -gt "$before" ]
	check "IPv$fam: the daemon's closed-port RST is the kernel's, field for field" \
		rst_alike d-syn-$fam k-syn-$fam
	probe d-tos-$fam $src $dst 23 11111111 --no-ts --tos 0x2a
	check "IPv$fam: TOS 0x2a, no timestamp: likewise" rst_alike d-tos-$fam k-tos-$fam
	probe d-bad-$fam $src $dst 22 11111111 --tsval 4242
	check "IPv$fam: a refused knock gets the same RST as the closed port" \
		rst_alike d-bad-$fam d-syn-$fam
	check "IPv$fam: a valid knock still reaches sshd (SYN-ACK)" knock_gets SA "$K" 22 $src $dst
	probe d-open-$fam $src $dst 8080 11111111 --tsval 4242
	check "IPv$fam: the unprotected listener on 8080 still answers SYN-ACK" \
		[ "$(flags_of d-open-$fam)" = SA ]
done

for scan in sS sF sN sX; do
	out=$TMP/nmap-$scan.txt
	in_c timeout 60 nmap -Pn -n -$scan --max-retries 1 -p 22,23,8080 $S4 >"$out" 2>&1 || true
	nmap_same "nmap -$scan" "$out"
done
check "nmap -sS: 8080 open" grep -q '^8080/tcp *open' "$TMP/nmap-sS.txt"

# An established flow to the unprotected service is untouched.
out=$(printf 'hello\n' | in_c timeout 10 socat -t 2 - TCP:$S4:8080 2>&1)
check "a connection to 8080 carries data" [ "$out" = hello ]

# Another firewall in the namespace drops port 24 at priority 0: it stays
# silent.  A SYN to it is decided where a refused knock is, at prerouting
# before any input filter (the two take one path), and the daemon lets it
# go on, to the firewall, which drops it.  A FIN probe, which the daemon
# answers itself, is taken at input after the usual filter chains: the
# daemon never sees it.
in_s nft -f - <<EOF
table inet adminfw {
	chain input { type filter hook input priority 0; policy accept; tcp dport 24 drop; }
}
EOF
before=$(counter closed)
probe fw $C4 $S4 24 11111111 --timeout 1
check "a port another firewall drops gets no answer" [ "$(flags_of fw)" = None ]
check "... its SYN went through the daemon first, as a refused knock's does" \
	[ "$(counter closed)" = $((before + 1)) ]
probe fwfin $C4 $S4 24 11111111 --flags fin --timeout 1
check "a FIN probe of it gets no answer either" [ "$(flags_of fwfin)" = None ]
check "... and never reaches the daemon" [ "$(counter closed)" = $((before + 1)) ]
in_s nft delete table inet adminfw

stop_knockgw
check "SIGTERM: the table stays, hiding (on_stop hide)" has_table
probe after $C4 $S4 23 11111111 --tsval 4242
check "without the daemon the kernel answers the closed port again" rst_alike after k-syn-4
finish
