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

# nat_rewrites: the packets our nat rules rewrote (a refusal's redirect to
# rules.refuse_port, a closed port's source-port rewrite), summed.
nat_rewrites() {
	in_s nft list table inet knockgw 2>/dev/null | awk '
		/redirect to|snat |dnat to/ {
			for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1)
		}
		END { print n + 0 }'
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
# the daemon it got, whether the daemon answered it itself, how many nat
# rewrites it met (an answer of the kernel's passes one on either side:
# conntrack rewrites the probe and, back, its answer), and whether an
# answer came.  The queues that took it go to $TMP/queues-NAME.
path() {
	pa_q0=$(queued_at) pa_d0=$(decisions) pa_n0=$(nat_rewrites)
	probe "$1" "$3" "$4" "$2" 11111111 --flags "$5" --ack 0x22222222 --tsval 4242
	pa_q1=$(queued_at) pa_d1=$(decisions) pa_n1=$(nat_rewrites)
	python3 - "$pa_q0" "$pa_q1" "$pa_d0" "$pa_d1" "$(flags_of "$1")" "$TMP/queues-$1" \
		$((pa_n1 - pa_n0)) <<-'EOP'
	import sys
	q0, q1, d0, d1, answer, qfile, nat = sys.argv[1:]
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
	print("queued at [%s], %d decision(s), daemon's RSTs %d, nat rewrites %s, answer %s"
	      % (" ".join(sorted(hooks)), decided, d[5], nat, answer))
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
	sh -c "[ \"$(path p-syn-again 22 $C4 $S4 syn)\" = 'queued at [prerouting], 1 decision(s), daemon'\"'\"'s RSTs 0, nat rewrites 1, answer RA' ]"
check "a FIN: queued once, at input, answered by the daemon" \
	sh -c "[ \"$(path p-fin-again 22 $C4 $S4 fin)\" = 'queued at [input], 1 decision(s), daemon'\"'\"'s RSTs 1, nat rewrites 0, answer RA' ]"

# A probe sent again meets the same path and gets the same answer.  The
# kernel's IPv6 flow label of its answer is a hash of the connection's
# tuple as TCP sees it, after the nat of either side (the redirect of 22's
# refusal, the source-port rewrite of 23's): each must map a tuple one for
# one, or the same probe sent twice to a closed port would get two labels
# where a protected port's gets one.
for port in 22 23; do
	for i in 1 2; do
		in_c $PROBER probe --iface vc --src $C6 --dst $S6 --sport 49999 --dport $port \
			--seq 0x11111111 >"$TMP/again-$port-$i.json"
	done
	l1=$(json "$TMP/again-$port-1.json" "(j['answer'] or {}).get('flowlabel')")
	l2=$(json "$TMP/again-$port-2.json" "(j['answer'] or {}).get('flowlabel')")
	check "IPv6: the same SYN to $port twice gets the same flow label twice ($l1, $l2)" \
		sh -c "[ '$l1' = '$l2' ] && [ '$l1' != None ] && [ '$l1' != 0 ]"
done

# With many entries a closed port's probe passes the rules of every entry
# in chain prerouting and the nat chain, a protected port's only those up
# to its own: with a group of rules per entry, what passing them cost a
# probe grew with the entries listed before its port (measured with 20
# entries: the first one's probes were answered 4-5 us sooner than a
# closed port's with the route looked up before the port, 3 us with the
# port compared first).  Entries that differ only in their port share
# their rules (the ports in a set, one lookup), and every rule compares the
# port before it looks up the route (fib): a probe meets as many rules with
# 20 entries as with 2, and none looks up a route for another port.
# print-rules shows the plan the daemon installs (0008).
cat >"$TMP/portrules.py" <<'EOP'
import re, sys
chain, rules, late = None, 0, []
for line in open(sys.argv[1]):
    m = re.match(r"\s*chain (\S+) \{", line)
    if m:
        chain = m.group(1)
    elif chain in ("prerouting", "prerouting_nat") and "tcp dport" in line:
        rules += 1
        if "fib" in line and line.index("fib") < line.index("tcp dport"):
            late.append(line.strip())
print(rules, len(late))
EOP
for n in 2 20; do
	entries=""
	for p in $(seq 8001 $((8000 + n))); do entries="$entries${entries:+, }$(entry $p)"; done
	key_conf "$TMP/many-$n.conf" "$entries" "control_socket = \"$TMP/many.sock\";"
	"$KNOCKGW" print-rules -c "$TMP/many-$n.conf" >"$TMP/many-$n.nft"
done
r2=$(python3 "$TMP/portrules.py" "$TMP/many-2.nft")
r20=$(python3 "$TMP/portrules.py" "$TMP/many-20.nft")
check "chain prerouting and the nat chain: as many rules for a port with 20 entries as with 2 (rules, of them looking up the route first: $r20; $r2)" \
	sh -c "[ '$r2' = '$r20' ] && [ '${r20#* }' = 0 ] && [ '${r20% *}' -gt 0 ]"

check "a valid knock still reaches sshd (SYN-ACK)" knock_gets SA "$K" 22 $C4 $S4

# With no daemon (the hiding table a stop leaves, the one a boot installs)
# both sides keep their nat rewrite, one each: a refusal's redirect, and a
# closed port's source-port rewrite, which must not take a refusal that
# was redirected already.
stop_knockgw
for fam in 4 6; do
	if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
	for t in syn:syn ack:ack; do
		name=${t%%:*} flags=${t#*:}
		for port in 22 23; do
			n0=$(nat_rewrites)
			probe "h-$name-$port-$fam" "$src" "$dst" $port 11111111 --flags "$flags" \
				--ack 0x22222222
			eval "h$port=\"nat rewrites \$((\$(nat_rewrites) - n0)), answer \$(flags_of h-$name-$port-$fam)\""
		done
		check "no daemon, IPv$fam $name: 22 and 23 meet one nat rewrite each ($h22; $h23)" \
			sh -c "[ '$h22' = '$h23' ] && [ '${h22%%,*}' = 'nat rewrites 1' ]"
	done
done
finish
