#!/bin/sh
# A protected port looks like an unused port of this host, whatever the
# host's own firewall does with unused ports; `knockgw check-firewall`
# (and `knockgw -n -v`) tells from the installed rules whether it will.
#
# knockgw refuses a SYN by redirecting it to rules.refuse_port (1), so the
# host's input filter decides what the refusal looks like.  In each case
# below, with knockgw protecting sshd's port 22 and nothing on 23 or 24, a
# plain SYN to 22 must get the answer a SYN to 23 (unused) gets, field for
# field (or silence for both), v4 and v6, and the check must say so; where
# the firewall treats the redirected SYN differently, the check must say
# the protected port stands out, and the probes show it does:
#   none          no other table: both get the kernel's RST
#   drop          table inet filter, policy drop (established, lo, ssh
#                 allowed): both silent; nmap sees 22 and 24 filtered alike
#   drop+1        the same, port 1 allowed, as README used to advise: 22
#                 answers RST while 23 is silent (the check: NOT alike)
#   reject        policy accept ending in `reject with icmpx
#                 admin-prohibited`: both get the same ICMP error
#   ufw           ufw's INPUT as iptables-nft writes it (compat matches,
#                 LOG under a limit, policy DROP): both silent
#   ufw-reject    ufw with `default reject`: REJECT --reject-with tcp-reset
#                 for TCP: both get that RST
#   dnat-accept   reject policy with `ct status dnat accept` (newer
#                 firewalld's filter_INPUT): 22 gets the kernel's RST,
#                 23 the ICMP error (the check: NOT alike)
# Not root: the check says it cannot read the ruleset.
#
#   client ns $NS_C                     server ns $NS_S
#   +----------------------+            +-------------------------------+
#   | prober.py, nmap      |--- veth ---| sshd :22, knockgw protects 22 |
#   |                      |            | nothing on 1, 23, 24; the     |
#   +----------------------+            | firewall of each case         |
#                                       +-------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
start_sshd
K=$(key_file k)
start_server "$(entry 22)"
CONF=$TMP/knockgw.conf

# checked CASE WANT_RC WORD: knockgw check-firewall exits WANT_RC and says
# WORD ("alike", "NOT alike") for IPv4 and IPv6; -n -v agrees.
checked() {
	in_s "$KNOCKGW" check-firewall -c "$CONF" >"$TMP/check-$1.out" 2>&1 && rc=0 || rc=$?
	sed 's/^/#   /' "$TMP/check-$1.out"
	check "$1: knockgw check-firewall exits $2" [ "$rc" = "$2" ]
	for fam in IPv4 IPv6; do
		check "$1: ... $fam: $3" grep -q "^$fam: $3:" "$TMP/check-$1.out"
	done
	in_s "$KNOCKGW" -n -v -c "$CONF" >"$TMP/nv-$1.out" 2>&1 || true
	case $2 in
	0) nv="firewall: refused SYNs look like" ;;
	4) nv="firewall: refused SYNs do NOT look like" ;;
	*) nv="firewall: cannot tell" ;;
	esac
	check "$1: knockgw -n -v: $nv ..." grep -q "^$nv" "$TMP/nv-$1.out"
}

# answers CASE HOW: a plain SYN to 22 and one to 23 get the same answer
# (HOW: "rst", "silent", "icmp"), v4 and v6; DIFFER instead of HOW: they
# differ (the protected port stands out).
answers() {
	for fam in 4 6; do
		if [ $fam = 4 ]; then src=$C4 dst=$S4; else src=$C6 dst=$S6; fi
		probe "$1-22-$fam" $src $dst 22 01020304 --tsval 31 --icmp --timeout 1
		probe "$1-23-$fam" $src $dst 23 01020304 --tsval 31 --icmp --timeout 1
		got22=$(flags_of "$1-22-$fam") got23=$(flags_of "$1-23-$fam")
		echo "# $1, IPv$fam: 22 answered $got22, 23 answered $got23"
		if [ "$2" = DIFFER ]; then
			check "$1, IPv$fam: 22 and 23 answer differently (22 stands out)" \
				sh -c "! [ '$got22' = '$got23' ]"
			continue
		fi
		check "$1, IPv$fam: a plain SYN to 22 gets what one to unused 23 gets ($2)" \
			answer_alike "$1-22-$fam" "$1-23-$fam"
		case $2 in
		rst) want=RA ;;
		silent) want=None ;;
		icmp) want="icmp$([ $fam = 4 ] && echo 3/13 || echo 1/1)" ;;
		esac
		check "$1, IPv$fam: ... which is $2" [ "$got22" = "$want" ]
	done
}

# firewall NFT: the server namespace's other tables replaced by NFT.
firewall() {
	in_s nft list tables | grep -v '^table inet knockgw$' | while read -r _ f t; do
		in_s nft delete table "$f" "$t"
	done
	[ -z "$1" ] || in_s nft -f - <<-EOF
	$1
	EOF
}

DROP='table inet filter {
	chain input {
		type filter hook input priority filter; policy drop;
		ct state established,related accept
		iifname "lo" accept
		meta l4proto { icmp, ipv6-icmp } accept
		tcp dport 22 accept
	}
}'
REJECT='table inet filter {
	chain input {
		type filter hook input priority filter; policy accept;
		ct state vmap { established : accept, related : accept, invalid : drop }
		iifname "lo" accept
		meta l4proto { icmp, ipv6-icmp } accept
		tcp dport 22 accept
		reject with icmpx admin-prohibited
	}
}'

# ufw REJECT: ufw's input chains as iptables-nft writes them ("default deny
# incoming", allow 22/tcp); with REJECT, "default reject incoming".
ufw() {
	for ipt in iptables-nft ip6tables-nft; do
		for c in ufw-before-input ufw-user-input ufw-after-input ufw-reject-input; do
			in_s $ipt -N $c
		done
		in_s $ipt -A INPUT -j ufw-before-input
		in_s $ipt -A INPUT -j ufw-after-input
		in_s $ipt -A INPUT -j ufw-reject-input
		in_s $ipt -A ufw-before-input -i lo -j ACCEPT
		in_s $ipt -A ufw-before-input -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
		in_s $ipt -A ufw-before-input -m conntrack --ctstate INVALID -j DROP
		in_s $ipt -A ufw-before-input -p "$([ $ipt = iptables-nft ] && echo icmp || echo ipv6-icmp)" -j ACCEPT
		in_s $ipt -A ufw-before-input -j ufw-user-input
		in_s $ipt -A ufw-user-input -p tcp --dport 22 -j ACCEPT
		in_s $ipt -A ufw-after-input -m limit --limit 3/min --limit-burst 10 -j LOG \
			--log-prefix "[UFW BLOCK] "
		if [ "${1:-}" = REJECT ]; then
			in_s $ipt -A ufw-reject-input -p tcp -j REJECT --reject-with tcp-reset
			in_s $ipt -A ufw-reject-input -j REJECT
		fi
		in_s $ipt -P INPUT DROP
	done
}

# --- none
firewall ""
answers none rst
checked none 0 alike

# --- drop policy
firewall "$DROP"
answers drop silent
for fam in 4 6; do
	if [ $fam = 4 ]; then dst=$S4 six=; else dst=$S6 six=-6; fi
	in_c timeout 60 nmap $six -Pn -n -sS --max-retries 1 -p 22,24 "$dst" >"$TMP/nmap-$fam.txt" 2>&1 || true
	nmap_same "drop, IPv$fam: nmap -sS" "$TMP/nmap-$fam.txt" 22 24
done
checked drop 0 alike
check "drop: a knock still gets in" knock_gets SA

# --- the old advice: port 1 allowed under a drop policy
in_s nft add rule inet filter input tcp dport 1 accept
answers drop+1 DIFFER
checked drop+1 4 "NOT alike"
check "drop+1: the check names the rule that accepts port 1" \
	grep -q "accepted by rule handle [0-9]* of chain input in table inet filter" \
	"$TMP/check-drop+1.out"

# --- reject
firewall "$REJECT"
answers reject icmp
checked reject 0 alike

# --- ufw, default deny and default reject
firewall ""
ufw
answers ufw silent
checked ufw 0 alike
firewall ""
ufw REJECT
answers ufw-reject rst
checked ufw-reject 0 alike

# --- DNAT'ed traffic accepted before the reject
firewall "$REJECT"
in_s nft insert rule inet filter input ct status dnat accept
answers dnat-accept DIFFER
checked dnat-accept 4 "NOT alike"

# --- not root: nothing to read (a configuration the user owns, no key file)
printf 'keys = ( { name = "s"; secret = "x"; } );\nprotect = ( %s );\n' \
	'{ port = 22; mode = "knock"; keys = [ "s" ]; }' >"$TMP/nobody.conf"
chown 65534 "$TMP/nobody.conf"
chmod 600 "$TMP/nobody.conf"
in_s setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$KNOCKGW" check-firewall -c "$TMP/nobody.conf" >"$TMP/nobody.out" 2>&1 && rc=0 || rc=$?
sed 's/^/#   /' "$TMP/nobody.out"
check "not root: check-firewall exits 1: reading the ruleset needs CAP_NET_ADMIN" \
	sh -c "[ $rc = 1 ] && grep -q 'needs CAP_NET_ADMIN' '$TMP/nobody.out'"
in_s setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$KNOCKGW" -n -v -c "$TMP/nobody.conf" >"$TMP/nobody-nv.out" 2>&1 && rc=0 || rc=$?
check "not root: knockgw -n -v still says configuration OK, and that it could not check" \
	sh -c "[ $rc = 0 ] && grep -q '^configuration OK' '$TMP/nobody-nv.out' &&
		grep -q '^firewall: not checked: .*CAP_NET_ADMIN' '$TMP/nobody-nv.out'"
finish
