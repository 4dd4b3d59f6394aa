#!/bin/sh
# With the shipped defaults (one protect entry, nothing else configured), a
# probe of the protected port 22 (sshd listening) and the same probe of the
# closed port 23 take the same path, for every probe type nmap sends (SYN,
# ACK, FIN, NULL, Xmas, window, Maimon), IPv4 and IPv6: the same hook
# queues it to the daemon (or neither is queued), the daemon decides it once
# and answers it the same way (lets it go on for the kernel to answer, or
# answers with its own RST: the daemon's counters), and the two answers are
# the same, field for field.  Time is not measured here (make bench does);
# the path is what makes the time the same.
#
#   client ns (prober.py)              server ns
#   vc 192.0.2.1, 2001:db8::1 -------- vs 192.0.2.2, 2001:db8::2
#                                      sshd :22 behind knockgw (defaults),
#                                      nothing on :23
#
# The rule counters of table inet knockgw say which hooks queued a probe
# (the chains' hooks, from `nft list`); the daemon's counters (knockgw
# status --json) what it did: a probe of 22 counts as a refused knock, a
# segment of no connection or a stray probe; one of 23 as a closed port's;
# rst_sent counts the RSTs the daemon made itself.
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
K=$(key_file k)
start_server "$(entry 22)"

# queued_at: for every rule of our table that queues, its chain's hook, its
# queue and its packet count, one "hook queue packets" line each, in table
# order.
queued_at() {
	in_s nft list table inet knockgw 2>/dev/null | awk '
		$1 == "type" { hook = $4 }
		/queue num/ {
			for (i = 1; i < NF; i++) if ($i == "num") q = $(i + 1)
			for (i = 1; i < NF; i++) if ($i == "packets") print hook, q, $(i + 1)
		}'
}

# decisions: the daemon's counters that say what it did with a probe.
decisions() {
	status_json | python3 -c '
import json, sys
s = json.load(sys.stdin)["server"]
print(" ".join(str(s.get(k, 0)) for k in
      ("syn_refused", "noconn", "stray", "closed", "nat_refusals", "rst_sent")))'
}

# path NAME PORT SRC DST FLAGS: sends the probe and prints what it met:
# the hooks that queued it (each as often as it did), how many decisions of
# the daemon it got, whether the daemon answered it itself, and whether an
# answer came.  The queues that took it go to $TMP/queues-NAME.
path() {
	pa_q0=$(queued_at) pa_d0=$(decisions)
	probe "$1" "$3" "$4" "$2" 11111111 --flags "$5" --ack 0x22222222 --tsval 4242
	pa_q1=$(queued_at) pa_d1=$(decisions)
	python3 - "$pa_q0" "$pa_q1" "$pa_d0" "$pa_d1" "$(flags_of "$1")" "$TMP/queues-$1" <<-'EOP'
	import sys
	q0, q1, d0, d1, answer, qfile = sys.argv[1:]
	hooks, queues = [], []
	for a, b in zip(q0.splitlines(), q1.splitlines()):
	    hook, queue, n0 = a.split()
	    hooks += [hook] * (int(b.split()[2]) - int(n0))
	    queues += [queue] * (int(b.split()[2]) - int(n0))
	with open(qfile, "w") as f:
	    f.write("".join(q + "\n" for q in queues))
	d = [int(y) - int(x) for x, y in zip(d0.split(), d1.split())]
	# syn_refused/noconn/stray (protected) or closed: one decision each
	decided = d[0] + d[1] + d[2] + d[3]
	print("queued at [%s], %d decision(s), daemon's RSTs %d, answer %s"
	      % (" ".join(sorted(hooks)), decided, d[5], answer))
	EOP
}

# The probe types of nmap's scans: -sS SYN, -sA and -sW ACK, -sF FIN, -sN
# NULL, -sX FIN+PSH+URG, -sM FIN+ACK.
for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
	for t in syn:syn ack:ack window:ack fin:fin null:null xmas:xmas maimon:maimon; do
		name=${t%%:*} flags=${t#*:}
		p=$(path "p-$name-$fam" 22 $src $dst "$flags")
		c=$(path "c-$name-$fam" 23 $src $dst "$flags")
		if [ "$p" = "$c" ]; then
			ok "IPv$fam $name: 22 and 23 take the same path ($p)"
		else
			not_ok "IPv$fam $name: 22: $p; 23: $c"
		fi
		check "IPv$fam $name: the answers are the same, field for field" \
			rst_alike "p-$name-$fam" "c-$name-$fam"
	done
done

# Each side's probes, of every type, come through one queue: a protected
# port's through the queue its SYNs (the knocks) take, a closed port's
# through the probe queue, never the knocks'.  So a scan that mixes types
# warms each side's path as much as the other's: with a protected port's
# ACK and FIN probes on the probe queue, its SYNs alone took the colder
# path, and their answers came later than a closed port's (make bench).
for fam in 4 6; do
	pq=$(cat "$TMP"/queues-p-*-$fam | sort -u | tr '\n' ' ')
	cq=$(cat "$TMP"/queues-c-*-$fam | sort -u | tr '\n' ' ')
	psyn=$(sort -u "$TMP/queues-p-syn-$fam" | tr '\n' ' ')
	csyn=$(sort -u "$TMP/queues-c-syn-$fam" | tr '\n' ' ')
	check "IPv$fam: every probe of 22 comes through the queue of its SYNs ($pq; SYN $psyn)" \
		sh -c "[ '$pq' = '$psyn' ] && [ \$(echo $pq | wc -w) = 1 ]"
	check "IPv$fam: every probe of 23 comes through one queue ($cq; SYN $csyn), not 22's" \
		sh -c "[ '$cq' = '$csyn' ] && [ \$(echo $cq | wc -w) = 1 ] && [ '$cq' != '$pq' ]"
done

# What the path is made of, for the record: a SYN and an ACK are queued at
# prerouting and answered by the kernel (22's through the nat chain's
# closed port), a FIN/NULL/Xmas probe is queued at input and answered by the
# daemon, a Maimon probe is answered by the kernel alone.
check "a SYN: queued once, at prerouting, answered by the kernel" \
	sh -c "[ \"$(path p-syn-again 22 $C4 $S4 syn)\" = 'queued at [prerouting], 1 decision(s), daemon'\"'\"'s RSTs 0, answer RA' ]"
check "a FIN: queued once, at input, answered by the daemon" \
	sh -c "[ \"$(path p-fin-again 22 $C4 $S4 fin)\" = 'queued at [input], 1 decision(s), daemon'\"'\"'s RSTs 1, answer RA' ]"
check "a valid knock still reaches sshd (SYN-ACK)" knock_gets SA "$K" 22 $C4 $S4
finish
