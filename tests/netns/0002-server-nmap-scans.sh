#!/bin/sh
# Server role against nmap: for every scan type (SYN, ACK, FIN, NULL, Xmas,
# Maimon, window), IPv4 and IPv6, a protected port with a listening sshd
# reports the same state as a closed port.
. "$(dirname "$0")/lib/lib.sh"

make_topology
start_sshd
K=$(key_file k)
key_conf "$TMP/knockgw.conf" "$(entry 22)"

# Without knockgw, nmap tells them apart (the test can fail).
in_c nmap -Pn -n -sS -p 22,23 $S4 >"$TMP/before.txt" 2>&1
check "without knockgw nmap -sS sees 22 open" grep -q '^22/tcp *open' "$TMP/before.txt"

start_knockgw "$NS_S" "$TMP/knockgw.conf"

for fam in 4 6; do
	if [ $fam = 4 ]; then dst=$S4 six=""; else dst=$S6 six="-6"; fi
	for scan in sS sA sF sN sX sM sW; do
		out=$TMP/nmap-$fam-$scan.txt
		in_c timeout 60 nmap $six -Pn -n -$scan --max-retries 1 -p 22,23 $dst >"$out" 2>&1 || true
		nmap_same "IPv$fam nmap -$scan" "$out"
	done
done
check "stray probes were answered by the daemon" [ "$(counter stray)" -gt 0 ]
finish
