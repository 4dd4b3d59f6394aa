#!/bin/sh
# The ruleset: `knockgw print-rules` and the table the daemon installs match
# golden dumps (counters stripped) for a config using every kind of rule;
# a stale table of the same name is replaced atomically, and after the
# daemon stops the hiding table (golden/table-hiding.nft) stays.
#
# print-rules and the install are one plan: print-rules' output is loaded
# with `nft -f` into a namespace of its own ($NS_P), listed, and the listing
# diffed against the listing of the table the daemon installed, both
# listed by the same nft (so its spelling of flags, priorities and masks is
# the same on both sides).  On a kernel with nft's native queue expression
# the two listings are compared as they are.  A kernel without it (the
# daemon probes, and print-rules, run in the same namespace, says so in
# its header) cannot load a `queue` statement: the daemon installs the
# xtables NFQUEUE target through nft compat instead, which nft lists
# translated as `queue num N[-M] [bypass]`.  There each `queue num ...`
# statement that ends a rule is replaced, on both sides, by a rule comment
# holding the same text (a comment needs no kernel module and lists back as
# written): every match, mark and conntrack operation, verdict, chain,
# hook, priority and the rule order are compared as nft lists them (counters
# stripped, as for the golden dumps), and the queue numbers and bypass flag
# as text.
#
#   $NS_S: the daemon's table        $NS_P: print-rules' output, nft -f
#          nft list | strip                 nft list | strip
#          [compat: queue -> comment]      (loaded with [queue -> comment])
#                          \_____ diff _____/
. "$(dirname "$0")/lib/lib.sh"
GOLDEN=$TOP/tests/netns/golden

make_topology
cat >"$TMP/rules.conf" <<EOC
queue = { num = 5; count = 2; };
translate = "user";
closed_ports = "daemon";
control_socket = "$TMP/ctl.sock";
keys = ( { name = "legacy"; secret = "Magic secret string"; } );
protect = (
	{ port = 22; mode = "knock"; keys = [ "legacy" ]; },
	{ port = 2222; mode = "knock"; keys = [ "legacy" ]; on_fail = "drop";
	  addresses = [ "192.0.2.2", "2001:db8::/64" ]; },
	{ port = 443; mode = "knock"; keys = [ "legacy" ]; integrity_len = 16; },
	{ port = 8022; mode = "knock"; keys = [ "legacy" ]; },
	{ port = 8023; mode = "knock"; keys = [ "legacy" ]; on_fail = "drop"; },
	{ port = 8024; mode = "knock"; keys = [ "legacy" ]; on_fail = "drop"; }
);
knock = (
	{ dst = "198.51.100.0/24"; port = 22; mode = "knock"; key = "legacy"; },
	{ dst = "2001:db8:1::5"; port = 2200; mode = "knock"; key = "legacy"; }
);
EOC
# It holds a text secret: readable by its owner only, like a key file.
chmod 600 "$TMP/rules.conf"
# print-rules runs inside the namespace: its probe must not touch the root one.
in_s "$KNOCKGW" print-rules -c "$TMP/rules.conf" | sed "s|$TMP|TMP|" >"$TMP/print.txt"
if [ -n "${UPDATE_GOLDEN:-}" ]; then cp "$TMP/print.txt" "$GOLDEN/print-rules.txt"; fi
check "print-rules matches golden/print-rules.txt" diff -u "$GOLDEN/print-rules.txt" "$TMP/print.txt"

start_knockgw "$NS_S" "$TMP/rules.conf"
# strip (lib.sh): nft's warning about the compat target and the counters go.
in_s nft list table inet knockgw 2>/dev/null | strip >"$TMP/table.nft"
if [ -n "${UPDATE_GOLDEN:-}" ]; then cp "$TMP/table.nft" "$GOLDEN/table.nft"; fi
check "the installed table matches golden/table.nft" diff -u "$GOLDEN/table.nft" "$TMP/table.nft"
check "no other table was created" [ "$(in_s nft list tables 2>/dev/null | grep -c .)" = 1 ]

# print-rules' plan, loaded by nft, against the daemon's (see the header).
NS_P=$PFX-3
ip netns add "$NS_P"
asis() { cat; }
toqcomment() { sed 's/queue num \([0-9-]*\)\( bypass\)\{0,1\}$/comment "queue num \1\2"/'; }
if grep -q "lacks nft's queue expression" "$TMP/print.txt"; then
	queue=toqcomment
	check "the daemon installed the compat target, as print-rules says" \
		grep -q 'using the xtables NFQUEUE' "$TMP/knockgw-$NS_S.log"
else
	queue=asis
fi
$queue <"$TMP/print.txt" >"$TMP/print.nft"
check "nft -f loads print-rules' output" ip netns exec "$NS_P" nft -f "$TMP/print.nft"
ip netns exec "$NS_P" nft list table inet knockgw 2>/dev/null | strip >"$TMP/print-loaded.nft"
$queue <"$TMP/table.nft" >"$TMP/table-cmp.nft"
check "every rule print-rules loads is queued, compared" \
	[ "$(grep -c 'queue num' "$TMP/table-cmp.nft" "$TMP/print-loaded.nft" | grep -c ':0$')" = 0 ]
check "print-rules' ruleset, loaded by nft, lists as the daemon's table" \
	diff -u "$TMP/print-loaded.nft" "$TMP/table-cmp.nft"

kill "$KGW_PID"
wait_for 5 sh -c "! kill -0 $KGW_PID"
in_s nft list table inet knockgw 2>/dev/null | strip >"$TMP/hiding.nft"
if [ -n "${UPDATE_GOLDEN:-}" ]; then cp "$TMP/hiding.nft" "$GOLDEN/table-hiding.nft"; fi
check "after SIGTERM the hiding table stays: golden/table-hiding.nft" \
	diff -u "$GOLDEN/table-hiding.nft" "$TMP/hiding.nft"
check "... which differs from the running one only in its knock rules' verdicts" \
	sh -c "[ \"\$(diff '$GOLDEN/table.nft' '$TMP/hiding.nft' | grep -c '^[<>]')\" = 4 ]"
in_s "$KNOCKGW" flush -c "$TMP/rules.conf" >/dev/null

# A stale table of the same name (a crashed daemon's, or edited by hand) is
# replaced in the same transaction, whatever it holds.
in_s nft add table inet knockgw
in_s nft add chain inet knockgw input '{ type filter hook input priority 0; }'
in_s nft add rule inet knockgw input tcp dport 9 counter drop
start_knockgw "$NS_S" "$TMP/rules.conf"
in_s nft list table inet knockgw 2>/dev/null | strip >"$TMP/table2.nft"
check "a stale table inet knockgw is replaced by exactly the daemon's" \
	diff -u "$GOLDEN/table.nft" "$TMP/table2.nft"
finish
