#!/bin/sh
# Server role against nmap: for every scan type (SYN, ACK, FIN, NULL, Xmas,
# Maimon, window), IPv4 and IPv6, a protected port with a listening sshd
# reports the same state as a closed port.
. "$(dirname "$0")/lib.sh"

make_topology
start_sshd
K=$(key_file k)
cat >"$TMP/knockgw.conf" <<EOC
keys = ( { name = "k"; file = "$K"; } );
protect = ( { port = 22; mode = "native"; keys = [ "k" ]; } );
EOC

# Without knockgw, nmap tells them apart (the test can fail).
in_c nmap -Pn -n -sS -p 22,23 $S4 >"$TMP/before.txt" 2>&1
check "without knockgw nmap -sS sees 22 open" grep -q '^22/tcp *open' "$TMP/before.txt"

start_knockgw "$NS_S" "$TMP/knockgw.conf"

state() { # FILE PORT
	awk -v p="$2/tcp" '$1 == p { print $2 }' "$1"
}
for fam in 4 6; do
	if [ $fam = 4 ]; then dst=$S4 six=""; else dst=$S6 six="-6"; fi
	for scan in sS sA sF sN sX sM sW; do
		out=$TMP/nmap-$fam-$scan.txt
		in_c timeout 60 nmap $six -Pn -n -$scan --max-retries 1 -p 22,23 $dst >"$out" 2>&1 || true
		s22=$(state "$out" 22)
		s23=$(state "$out" 23)
		if [ -n "$s22" ] && [ "$s22" = "$s23" ]; then
			ok "IPv$fam nmap -$scan: 22 and 23 both '$s22'"
		else
			not_ok "IPv$fam nmap -$scan: 22 is '$s22', 23 is '$s23'"
			cat "$out"
		fi
	done
done
check "stray probes were answered by the daemon" [ "$(counter stray)" -gt 0 ]
finish
