#!/bin/sh
# Coexistence with other firewall software's tables in the server
# namespace, each in its own section, v4 and v6:
#   docker    the tables dockerd makes with iptables-nft for a container
#             whose port 22 is published as the host's 2200 (nat DOCKER
#             chain from PREROUTING for local destinations, DNAT, bridge
#             MASQUERADE; filter FORWARD policy drop, DOCKER-USER, DOCKER);
#             knockgw protects the dialled 2200.
#   firewalld a table inet firewalld as its nftables backend writes it:
#             filter_INPUT at filter + 10 ending in `reject with icmpx
#             admin-prohibited`, ssh allowed, a forward-port 2201 -> 22 in
#             nat_PREROUTING (dstnat + 10).  A refused SYN is redirected to
#             rules.refuse_port (1): where the firewall rejects port 1, the
#             refusal is the firewall's own answer for a port it does not
#             allow (24 here), so 22 looks like the unused port 24, as it
#             should; once port 1 is allowed (firewall-cmd --add-port=1/tcp),
#             it is the closed-port RST of an allowed port (23), no longer
#             an unused port's answer (knockgw check-firewall says so:
#             0061); with the `ct status dnat accept` newer firewalld puts
#             in filter_INPUT, likewise without allowing port 1.
#   plain     an nft table of its own: DNAT 2202 -> 22 at dstnat, masquerade,
#             input policy drop allowing 1, 22, 23 and established flows;
#             a SYN flood across a restart of knockgw gets no SYN-ACK, and
#             every SYN the closed-port RST+ACK.
# In every section each other table lists the same (counters aside) before
# knockgw starts, while it runs, after a reload and after it stopped, and
# after the stop `nft list tables` shows them and inet knockgw only.
#
#   client ns $NS_C            server ns $NS_S                   container ns $NS_K
#   +----------------+         +----------------------------+   +----------------+
#   | vc 192.0.2.1   |--veth---| vs 192.0.2.2, 2001:db8::2  |   | eth0 10.88.0.2 |
#   |    2001:db8::1 |         | docker0 10.88.0.1,         |---|   fd00:88::2   |
#   | prober, nmap,  |         |   fd00:88::1 (section 1)   |   | sshd :22       |
#   | ssh, client    |         | sshd :22, nothing on 1, 23,|   +----------------+
#   | role, synflood |         | 24; knockgw; other tables  |
#   +----------------+         +----------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
start_sshd
K=$(key_file k)
LOG=$TMP/knockgw-$NS_S.log

# --- the other tables, seen from outside ------------------------------------

# others FILE: every table in the server namespace but inet knockgw,
# listed in full, counters stripped.
others() {
	in_s nft list tables | grep -v '^table inet knockgw$' | sort | while read -r _ fam name; do
		echo "== $fam $name"
		in_s nft list table "$fam" "$name" 2>&1 | strip
	done >"$1"
}

# reference: what the other tables are now ($TMP/ref.nft).
reference() { others "$TMP/ref.nft"; }

# untouched WHEN: one row, the other tables list as the reference does.
untouched() {
	others "$TMP/now.nft"
	if cmp -s "$TMP/ref.nft" "$TMP/now.nft"; then
		ok "$SEC: $1: the other tables are byte-identical"
	else
		not_ok "$SEC: $1: the other tables changed"
		diff "$TMP/ref.nft" "$TMP/now.nft" | sed 's/^/# /'
	fi
}

# only_ours_added: after a stop, the tables are the other ones and inet
# knockgw (on_stop "hide" leaves it), nothing else.
only_ours_added() {
	{ grep '^== ' "$TMP/ref.nft" | sed 's/^== /table /'; echo "table inet knockgw"; } |
		sort >"$TMP/want.tables"
	in_s nft list tables | sort >"$TMP/got.tables"
	cmp -s "$TMP/want.tables" "$TMP/got.tables"
}

# reload: SIGHUP, and up to 10 s for one more "reloaded" line.
reload() {
	rl_n=$(grep -c '^reloaded' "$LOG" || true)
	kill -HUP "$KGW_PID"
	wait_for 10 sh -c "[ \$(grep -c '^reloaded' '$LOG') -gt $rl_n ]"
}

# start_section NAME ENTRIES: the reference taken, the daemon started.
start_section() {
	SEC=$1
	reference
	start_server "$2"
	untouched "knockgw started"
}

# stop_section: SIGTERM, the checks after a stop; end_section: the
# section's own tables gone, and knockgw's (knockgw flush).
stop_section() {
	check "$SEC: SIGTERM: the daemon stops" stop_knockgw
	untouched "knockgw stopped"
	check "$SEC: after the stop, nft list tables: the other tables and inet knockgw only" \
		only_ours_added
}
end_section() {
	check "$SEC: knockgw flush deletes the stopped daemon's table" \
		flushed "$NS_S" "$TMP/knockgw.conf"
}

# flushed NS CONF: `knockgw flush` in NS succeeds (what it says aside).
flushed() { ip netns exec "$1" "$KNOCKGW" flush -c "$2" >/dev/null; }

# nmap_ports TAG DST PORT OTHER: nmap -sS of PORT and OTHER from the client;
# one row: both in the same state.
nmap_ports() {
	six=
	case $2 in *:*) six=-6 ;; esac
	out=$TMP/nmap-$SEC-$1.txt
	in_c timeout 60 nmap $six -Pn -n -sS --max-retries 1 -p "$3,$4" "$2" >"$out" 2>&1 || true
	nmap_same "$SEC: $1: nmap -sS" "$out" "$3" "$4"
}

# same_answer A B: the answers in $TMP/A.json and $TMP/B.json (prober.py
# probe --icmp) are equal field for field, but the ports and the TCP
# checksum that covers them (as rstcmp.py) and the flow label's value.
same_answer() {
	python3 - "$TMP/$1.json" "$TMP/$2.json" <<-'EOP'
	import json, sys
	a, b = (json.load(open(f))["answer"] for f in sys.argv[1:])
	if a is None or b is None:
	    print("# missing answer: %s %s" % (a is not None, b is not None))
	    sys.exit(1)
	diffs = [k for k in sorted(set(a) | set(b))
	         if k not in ("sport", "dport", "tcpcsum_ok", "flowlabel") and a.get(k) != b.get(k)]
	if (a.get("flowlabel", 0) == 0) != (b.get("flowlabel", 0) == 0):
	    diffs.append("flowlabel")
	for k in diffs:
	    print("#   differs: %s: %r vs %r" % (k, a.get(k), b.get(k)))
	sys.exit(1 if diffs else 0)
	EOP
}

# like_port NAME SRC DST DPORT OTHER: a plain SYN to DPORT and one to OTHER
# get the same answer, TCP or ICMP (same_answer).
like_port() {
	probe "$1" "$2" "$3" "$4" 01020304 --tsval 77 --icmp
	probe "$1-other" "$2" "$3" "$5" 01020304 --tsval 77 --icmp
	echo "# $1: $4 answered $(flags_of "$1"), $5 answered $(flags_of "$1-other")"
	same_answer "$1" "$1-other"
}

fam_addrs() {
	if [ "$1" = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
}

# flood, flood_done, hidden: lib.sh.  A base chain's hook that goes away
# in the namespace (another table deleted) makes the kernel drop whatever
# the queue holds at that moment, a SYN or a few under this flood: hidden
# allows that many runs of silence where a table is deleted.

# === 1. Docker, as iptables-nft makes its tables ============================

make_container docker0

# docker_rules: what dockerd (iptables backend, iptables-nft) adds for a
# container on docker0 with -p 2200:22, v4 and v6.
docker_rules() {
	for dr_v in 4 6; do
		if [ $dr_v = 4 ]; then
			ipt=iptables-nft sub=10.88.0.0/16 ctr=$K4 to=$K4:22 lo=127.0.0.0/8
		else
			ipt=ip6tables-nft sub=fd00:88::/64 ctr=$K6 to=[$K6]:22 lo=::1/128
		fi
		in_s $ipt -t nat -N DOCKER
		in_s $ipt -t nat -A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER
		in_s $ipt -t nat -A OUTPUT ! -d $lo -m addrtype --dst-type LOCAL -j DOCKER
		in_s $ipt -t nat -A POSTROUTING -s $sub ! -o docker0 -j MASQUERADE
		in_s $ipt -t nat -A POSTROUTING -s $ctr -d $ctr -p tcp -m tcp --dport 22 -j MASQUERADE
		in_s $ipt -t nat -A DOCKER -i docker0 -j RETURN
		in_s $ipt -t nat -A DOCKER ! -i docker0 -p tcp -m tcp --dport 2200 \
			-j DNAT --to-destination $to
		in_s $ipt -P FORWARD DROP
		for dr_c in DOCKER DOCKER-USER DOCKER-ISOLATION-STAGE-1 DOCKER-ISOLATION-STAGE-2; do
			in_s $ipt -N $dr_c
		done
		in_s $ipt -A FORWARD -j DOCKER-USER
		in_s $ipt -A FORWARD -j DOCKER-ISOLATION-STAGE-1
		in_s $ipt -A FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
		in_s $ipt -A FORWARD -o docker0 -j DOCKER
		in_s $ipt -A FORWARD -i docker0 ! -o docker0 -j ACCEPT
		in_s $ipt -A FORWARD -i docker0 -o docker0 -j ACCEPT
		in_s $ipt -A DOCKER -d $ctr ! -i docker0 -o docker0 -p tcp -m tcp --dport 22 -j ACCEPT
		in_s $ipt -A DOCKER-ISOLATION-STAGE-1 -i docker0 ! -o docker0 \
			-j DOCKER-ISOLATION-STAGE-2
		in_s $ipt -A DOCKER-ISOLATION-STAGE-1 -j RETURN
		in_s $ipt -A DOCKER-ISOLATION-STAGE-2 -o docker0 -j DROP
		in_s $ipt -A DOCKER-ISOLATION-STAGE-2 -j RETURN
		in_s $ipt -A DOCKER-USER -j RETURN
	done
}

# docker_flush: the tables iptables-nft made for dockerd deleted (as a
# firewall reload does before dockerd's restart); docker_rules then makes
# them anew, base chains and all, newer than knockgw's (nat chains of equal
# priority run newest first).
docker_flush() {
	for df_t in "ip nat" "ip filter" "ip6 nat" "ip6 filter"; do
		# shellcheck disable=SC2086
		in_s nft delete table $df_t
	done
}

# docker_checks WHEN: knocks reach the container, plain SYNs and nmap see
# 2200 as the host's closed 23, v4 and v6.
docker_checks() {
	for fam in 4 6; do
		fam_addrs $fam
		check "$SEC: $1, IPv$fam: a knock for $dst:2200 reaches the container's sshd" \
			knock_gets SA "$K" 2200 $src $dst
		check "$SEC: $1, IPv$fam: a plain SYN to 2200 gets the closed port 23's RST" \
			like_closed "d$1$fam" $src $dst 2200 01020304 --tsval 91
		nmap_ports "$1, IPv$fam" $dst 2200 23
	done
}

docker_rules
start_section docker "$(entry 2200)"
docker_checks running
cat >"$TMP/client.conf" <<EOC
control_socket = "$TMP/client.sock";
keys = ( { name = "k"; file = "$K"; } );
knock = ( { dst = "$S4"; port = 2200; mode = "native"; key = "k"; },
	  { dst = "$S6"; port = 2200; mode = "native"; key = "k"; } );
EOC
chmod 600 "$TMP/client.conf"
SRV_PID=$KGW_PID
start_knockgw "$NS_C" "$TMP/client.conf"
CLI_PID=$KGW_PID
KGW_PID=$SRV_PID
for dst in $S4 $S6; do
	out=$(in_c timeout 20 ssh $SSH_OPTS -p 2200 root@$dst ip netns identify 2>/dev/null) || true
	check "docker: ssh -p 2200 $dst through the client role lands in the container" \
		[ "$out" = "$NS_K" ]
done
stop_knockgw "$CLI_PID"
check "docker: knockgw flush deletes the stopped client's table" \
	flushed "$NS_C" "$TMP/client.conf"
check "docker: SIGHUP reload" reload
untouched "after a reload"
# dockerd restarted after knockgw: its tables deleted and made again,
# under a flood of plain SYNs to 2200 (four tables deleted: up to four
# runs of SYNs the kernel drops from the queue).
flood redocker 1500 $C4 $S4 2200
docker_flush
docker_rules
flood_done
check "docker: docker re-creates its tables under a SYN flood to 2200: no SYN-ACK" \
	hidden redocker 4
untouched "docker re-created its rules"
docker_checks "docker re-created its rules"
stop_section
for fam in 4 6; do
	fam_addrs $fam
	check "docker: stopped, IPv$fam: a plain SYN to 2200 gets the closed port 23's RST" \
		like_closed "dstop$fam" $src $dst 2200 01020304 --tsval 92
	check "docker: stopped, IPv$fam: so does a valid knock" \
		like_closed "dstopk$fam" $src $dst 2200 "$(isn native "$K" $dst 2200 93)" --tsval 93
	nmap_ports "stopped, IPv$fam" $dst 2200 23
done
end_section
in_s nft flush ruleset

# === 2. firewalld's nftables backend =======================================

# firewalld_table [RULE]: the parts of firewalld's table that matter here,
# zone public on vs with service ssh, forward-port 2201 -> 22 of this host;
# RULE is one more rule of filter_INPUT after the established flows'.
firewalld_table() {
	in_s nft -f - <<-EOF
	table inet firewalld {
		chain nat_PREROUTING {
			type nat hook prerouting priority dstnat + 10; policy accept;
			jump nat_PREROUTING_ZONES
		}
		chain nat_PREROUTING_ZONES {
			iifname "vs" goto nat_PRE_public
			goto nat_PRE_public
		}
		chain nat_PRE_public {
			jump nat_PRE_public_allow
		}
		chain nat_PRE_public_allow {
			meta nfproto ipv4 tcp dport 2201 redirect to :22
			meta nfproto ipv6 tcp dport 2201 redirect to :22
		}
		chain nat_POSTROUTING {
			type nat hook postrouting priority srcnat + 10; policy accept;
			jump nat_POSTROUTING_ZONES
		}
		chain nat_POSTROUTING_ZONES {
			oifname "vs" goto nat_POST_public
			goto nat_POST_public
		}
		chain nat_POST_public {
		}
		chain filter_INPUT {
			type filter hook input priority filter + 10; policy accept;
			ct state { established, related } accept
			${1:-}
			iifname "lo" accept
			ct state invalid drop
			jump filter_INPUT_ZONES
			reject with icmpx admin-prohibited
		}
		chain filter_INPUT_ZONES {
			iifname "vs" goto filter_IN_public
			goto filter_IN_public
		}
		chain filter_IN_public {
			jump filter_IN_public_allow
			meta l4proto { icmp, ipv6-icmp } accept
		}
		chain filter_IN_public_allow {
			tcp dport 22 ct state { new, untracked } accept
		}
	}
	EOF
}

# allow_port P: firewall-cmd --add-port=P/tcp.
allow_port() {
	in_s nft add rule inet firewalld filter_IN_public_allow tcp dport "$1" ct state '{ new, untracked }' accept
}

# fw_knocks WHEN: knocks to 22 and to the forwarded 2201 get in, v4 and v6.
fw_knocks() {
	for fam in 4 6; do
		fam_addrs $fam
		check "$SEC: $1, IPv$fam: a knock to 22 gets in" knock_gets SA "$K" 22 $src $dst
		check "$SEC: $1, IPv$fam: a knock to the forwarded 2201 gets in" \
			knock_gets SA "$K" 2201 $src $dst
	done
}

firewalld_table
start_section firewalld "$(entry 22), $(entry 2201)"
# (a) firewalld allows ssh only: port 1 is rejected like 24.
for fam in 4 6; do
	fam_addrs $fam
	check "firewalld (ssh only), IPv$fam: a plain SYN to 22 gets what 24 (not allowed) gets" \
		like_port "fa22-$fam" $src $dst 22 24
	check "firewalld (ssh only), IPv$fam: ... and one to 2201 too" \
		like_port "fa2201-$fam" $src $dst 2201 24
	check "firewalld (ssh only), IPv$fam: the answer is ICMP admin-prohibited" \
		sh -c "[ '$(flags_of "fa22-$fam")' = icmp$([ $fam = 4 ] && echo 3/13 || echo 1/1) ]"
	nmap_ports "ssh only, IPv$fam" $dst 22 24
done
fw_knocks "ssh only"
check "firewalld: SIGHUP reload" reload
untouched "after a reload"
# (b) port 1 allowed (firewall-cmd --add-port=1/tcp), and 23: the refusal
# is a closed port's.
allow_port 1
allow_port 23
reference
for fam in 4 6; do
	fam_addrs $fam
	check "firewalld (1 and 23 allowed), IPv$fam: a plain SYN to 22 gets 23's RST" \
		like_closed "fb22-$fam" $src $dst 22 01020304 --tsval 81
	check "firewalld (1 and 23 allowed), IPv$fam: ... and one to 2201 too" \
		like_closed "fb2201-$fam" $src $dst 2201 01020304 --tsval 82
	nmap_ports "1 and 23 allowed, IPv$fam" $dst 22 23
done
fw_knocks "1 and 23 allowed"
stop_section
for fam in 4 6; do
	fam_addrs $fam
	check "firewalld: stopped, IPv$fam: a plain SYN to 22 gets 23's RST" \
		like_closed "fbstop$fam" $src $dst 22 01020304 --tsval 83
done
end_section
in_s nft delete table inet firewalld

# (c) Newer firewalld accepts every DNAT'ed flow in filter_INPUT (`ct
# status dnat accept`, unless StrictForwardPorts): the redirect to port 1
# is accepted without allowing it.
firewalld_table "ct status dnat accept"
allow_port 23
start_section "firewalld (ct status dnat accept)" "$(entry 22), $(entry 2201)"
for fam in 4 6; do
	fam_addrs $fam
	check "$SEC, IPv$fam: a plain SYN to 22 gets 23's RST, port 1 not allowed" \
		like_closed "fc22-$fam" $src $dst 22 01020304 --tsval 84
	nmap_ports "IPv$fam" $dst 22 23
done
fw_knocks running
check "$SEC: SIGHUP reload" reload
untouched "after a reload"
stop_section
end_section
in_s nft delete table inet firewalld

# === 3. a plain nft ruleset with nat chains of its own =====================

in_s nft -f - <<EOF
table inet other {
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		ip daddr $S4 tcp dport 2202 dnat ip to $S4:22
		ip6 daddr $S6 tcp dport 2202 dnat ip6 to [$S6]:22
	}
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "vs" ip saddr 10.0.0.0/8 masquerade
		oifname "vs" ip6 saddr fd00::/8 masquerade
	}
	chain input {
		type filter hook input priority filter; policy drop;
		ct state established,related accept
		iifname "lo" accept
		meta l4proto { icmp, ipv6-icmp } accept
		tcp dport { 1, 22, 23 } accept
	}
}
EOF

start_section plain "$(entry 22), $(entry 2202)"
for fam in 4 6; do
	fam_addrs $fam
	check "plain, IPv$fam: a knock to 22 gets in" knock_gets SA "$K" 22 $src $dst
	check "plain, IPv$fam: a knock to the DNAT'ed 2202 gets in" knock_gets SA "$K" 2202 $src $dst
	check "plain, IPv$fam: a plain SYN to 22 gets 23's RST" \
		like_closed "p22-$fam" $src $dst 22 01020304 --tsval 71
	check "plain, IPv$fam: a plain SYN to 2202 gets 23's RST" \
		like_closed "p2202-$fam" $src $dst 2202 01020304 --tsval 72
	nmap_ports "IPv$fam" $dst 22 23
done
check "plain: SIGHUP reload" reload
untouched "after a reload"
for fam in 4 6; do
	fam_addrs $fam
	flood "restart$fam" 1500 $src $dst
	stop_knockgw
	start_knockgw "$NS_S" "$TMP/knockgw.conf"
	flood_done
	check "plain, IPv$fam: restart (SIGTERM, start) under a SYN flood: every SYN the closed-port RST+ACK" \
		hidden "restart$fam"
	fam_addrs $fam
	check "plain, IPv$fam: ... and then a knock gets in" knock_gets SA "$K" 22 $src $dst
done
untouched "after a restart"
stop_section
end_section
finish
