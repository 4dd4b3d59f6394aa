# lib.sh - shared setup for the namespace tests; sourced, not run.
#
#   client ns  $NS_C                      server ns  $NS_S
#   +---------------------+               +------------------------------+
#   | vc 192.0.2.1/24     |---- veth -----| vs 192.0.2.2/24              |
#   |    2001:db8::1/64   |               |    2001:db8::2/64            |
#   | prober.py, nmap,    |               | sshd :22, knockgw (protects) |
#   | ssh, knock-connect  |               | nothing on :23 (closed port) |
#   +---------------------+               +------------------------------+
#
# Everything made here is removed by cleanup(), which the EXIT trap runs even
# when a test fails.  Namespaces are named kgw-<pid>-<n>, unique per run.
# Only documentation addresses are used.  The root namespace's firewall is
# never touched: every nft command runs inside a test namespace.
#
# The helpers a test needs more than once live here, each defined once:
# result lines, waits and cleanup (base.sh), the topology and services,
# configurations (entry, key_conf, knock_conf, two_port_*), knocks and
# probes (isn, probe, knock_gets, plain_gets), and looks at the daemon
# from outside (counter, has_table, sighup_refused, ...).  A test that
# defines a function of the same name replaces it for itself only.

set -eu
# The tree: two folders above the script that sources this (a test in
# tests/netns/, or tests/systemd/suite.sh); a script elsewhere sets TOP.
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=$(cd "$TOP" && cd "${BUILD:-build}" && pwd)
KNOCKGW=$BUILD/knockgw
# Tools make deps unpacks rather than installs (promtool, fail2ban-regex):
# after the system's own, when it has them.
PATH=$PATH:$BUILD/deps/bin
KC=$BUILD/knock-connect
PROBER="python3 $TOP/tests/netns/lib/prober.py"
MITM="python3 $TOP/tests/netns/lib/mitm.py"
# The tools import pktlib.py: no byte code left in the source tree.
export PYTHONDONTWRITEBYTECODE=1
PFX=kgw-$$
NS_C=$PFX-1
NS_S=$PFX-2
C4=192.0.2.1
S4=192.0.2.2
C6=2001:db8::1
S6=2001:db8::2
TMP=$(mktemp -d /tmp/kgw-test-XXXXXX)
chmod 755 "$TMP"
# ssh and scp as root with start_sshd's user key, no questions asked.
SSH_OPTS="-o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
-i $TMP/userkey"
PIDS=""
. "$TOP/tests/netns/lib/base.sh"
. "$TOP/tests/netns/lib/sanitizer.sh"

cleanup() {
	set +e
	# shellcheck disable=SC2086
	stop_pids $PIDS
	del_namespaces "$PFX"
	sanitizer_check "$TMP" || SANITIZER_FAILED=1
	rm -rf "$TMP"
	[ "$SANITIZER_FAILED" = 0 ] || exit 1
}
# A signal ends the test (exit runs the EXIT trap, so cleanup runs once);
# trapping it with cleanup alone would clean up and then carry on.
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

in_c() { ip netns exec "$NS_C" "$@"; }
in_s() { ip netns exec "$NS_S" "$@"; }

# listening PORT [NS]: waits (10 s at most) until a TCP socket listens on
# PORT in NS (the server namespace).
listening() {
	wait_for 10 ip netns exec "${2:-$NS_S}" sh -c "ss -ltn | grep -q ':$1 '"
}

make_topology() {
	ip netns add "$NS_C"
	ip netns add "$NS_S"
	ip link add vc netns "$NS_C" type veth peer name vs netns "$NS_S"
	in_c ip addr add $C4/24 dev vc
	in_s ip addr add $S4/24 dev vs
	in_c ip addr add $C6/64 dev vc nodad
	in_s ip addr add $S6/64 dev vs nodad
	for ns in "$NS_C" "$NS_S"; do
		ip -n "$ns" link set lo up
	done
	# veth would otherwise leave checksums unfinished (offload), and a
	# deliberately bad checksum would be accepted (with offload on, veth
	# hands over packets whose checksum nobody checks).
	in_c ethtool -K vc rx off tx off >/dev/null
	in_s ethtool -K vs rx off tx off >/dev/null
	in_c ip link set vc up
	in_s ip link set vs up
	wait_for 5 in_c ping -c1 -W1 $S4
	wait_for 5 in_c ping -6 -c1 -W1 $S6
}

# make_router_topology: three namespaces, the client's and the server's on
# two different networks with a router between them (forwarding on, no
# firewall, no NAT: a test adds its own nft tables there with in_r).  It
# sets C4, C6, S4 and S6 to the client's and the server's addresses here, so
# the helpers' defaults (knock_gets, plain_gets, knock_conf) apply, and
# R4C, R6C, R4S, R6S to the router's.  The client's interface is vc and the
# server's vs, as in make_topology, so probe and prober.py --iface vc work.
#
#   client ns $NS_C      router ns $NS_R                      server ns $NS_S
#   +---------------+    +---------------------------------+   +----------------+
#   | vc 192.0.2.2  |----| rc 192.0.2.1     rs 203.0.113.1 |---| vs 203.0.113.2 |
#   | 2001:db8:c::2 |    |    2001:db8:c::1    2001:db8:5::1|   | 2001:db8:5::2  |
#   | default: rc   |    | forwarding on (v4 and v6)       |   | default: rs    |
#   +---------------+    +---------------------------------+   +----------------+
NS_R=$PFX-r
in_r() { ip netns exec "$NS_R" "$@"; }
make_router_topology() {
	C4=192.0.2.2 R4C=192.0.2.1 R4S=203.0.113.1 S4=203.0.113.2
	C6=2001:db8:c::2 R6C=2001:db8:c::1 R6S=2001:db8:5::1 S6=2001:db8:5::2
	for ns in "$NS_C" "$NS_R" "$NS_S"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	ip link add vc netns "$NS_C" type veth peer name rc netns "$NS_R"
	ip link add vs netns "$NS_S" type veth peer name rs netns "$NS_R"
	in_c ip addr add $C4/24 dev vc
	in_c ip addr add $C6/64 dev vc nodad
	in_r ip addr add $R4C/24 dev rc
	in_r ip addr add $R6C/64 dev rc nodad
	in_r ip addr add $R4S/24 dev rs
	in_r ip addr add $R6S/64 dev rs nodad
	in_s ip addr add $S4/24 dev vs
	in_s ip addr add $S6/64 dev vs nodad
	in_r sysctl -qw net.ipv4.ip_forward=1
	in_r sysctl -qw net.ipv6.conf.all.forwarding=1
	# Checksums finished and checked on every hop (see make_topology).
	in_c ethtool -K vc rx off tx off >/dev/null
	in_r ethtool -K rc rx off tx off >/dev/null
	in_r ethtool -K rs rx off tx off >/dev/null
	in_s ethtool -K vs rx off tx off >/dev/null
	in_c ip link set vc up
	in_r ip link set rc up
	in_r ip link set rs up
	in_s ip link set vs up
	in_c ip route add default via $R4C
	in_c ip -6 route add default via $R6C
	in_s ip route add default via $R4S
	in_s ip -6 route add default via $R6S
	wait_for 5 in_c ping -c1 -W1 $S4
	wait_for 5 in_c ping -6 -c1 -W1 $S6
}

# make_container BRIDGE: a "container" namespace $NS_K behind a bridge
# BRIDGE in the server namespace, as Docker makes one (after make_topology
# and start_sshd): the bridge 10.88.0.1/16, fd00:88::1/64; the container's
# eth0 $K4 (10.88.0.2), $K6 (fd00:88::2), default route the bridge;
# forwarding on in the server; an sshd on the container's port 22 (same
# config as start_sshd's).  in_k runs a command in the container.
NS_K=$PFX-k
K4=10.88.0.2
K6=fd00:88::2
in_k() { ip netns exec "$NS_K" "$@"; }
make_container() {
	ip netns add "$NS_K"
	ip -n "$NS_K" link set lo up
	in_s ip link add "$1" type bridge
	in_s ip addr add 10.88.0.1/16 dev "$1"
	in_s ip addr add fd00:88::1/64 dev "$1" nodad
	ip link add eth0 netns "$NS_K" type veth peer name veth0 netns "$NS_S"
	in_s ip link set veth0 master "$1"
	in_k ip addr add $K4/16 dev eth0
	in_k ip addr add $K6/64 dev eth0 nodad
	in_s ethtool -K veth0 rx off tx off >/dev/null
	in_k ethtool -K eth0 rx off tx off >/dev/null
	in_s ip link set "$1" up
	in_s ip link set veth0 up
	in_k ip link set eth0 up
	in_k ip route add default via 10.88.0.1
	in_k ip -6 route add default via fd00:88::1
	in_s sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	in_k /usr/sbin/sshd -D -e -f "$TMP/sshd_config" -o PidFile="$TMP/sshd-k.pid" \
		>"$TMP/sshd-k.log" 2>&1 &
	PIDS="$PIDS $!"
	listening 22 "$NS_K"
	wait_for 5 in_s ping -c1 -W1 $K4
	wait_for 5 in_s ping -6 -c1 -W1 $K6
}

# start_sshd: an unmodified OpenSSH sshd on port 22 of the server namespace.
start_sshd() {
	mkdir -p /run/sshd
	ssh-keygen -q -t ed25519 -N '' -f "$TMP/hostkey"
	ssh-keygen -q -t ed25519 -N '' -f "$TMP/userkey"
	cp "$TMP/userkey.pub" "$TMP/authorized_keys"
	cat >"$TMP/sshd_config" <<-EOC
	Port 22
	ListenAddress 0.0.0.0
	ListenAddress ::
	HostKey $TMP/hostkey
	PidFile $TMP/sshd.pid
	AuthorizedKeysFile $TMP/authorized_keys
	StrictModes no
	PermitRootLogin prohibit-password
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	UsePAM no
	LogLevel DEBUG1
	Subsystem sftp /usr/lib/openssh/sftp-server
	EOC
	in_s /usr/sbin/sshd -D -e -f "$TMP/sshd_config" >"$TMP/sshd.log" 2>&1 &
	PIDS="$PIDS $!"
	listening 22
}

# start_sink [PORT]: sink.py on PORT (2200) in the server namespace; every
# byte any connection delivers goes to $TMP/sink.bin.
start_sink() {
	: >"$TMP/sink.bin"
	in_s python3 "$TOP/tests/netns/lib/sink.py" "${1:-2200}" "$TMP/sink.bin" 2>"$TMP/sink.err" &
	PIDS="$PIDS $!"
	listening "${1:-2200}"
}

# sink_lacks PATTERN: after a moment for the service to read what reached
# it (0.3 s), nothing matching PATTERN is in $TMP/sink.bin.
sink_lacks() {
	sleep 0.3
	! grep -q "$1" "$TMP/sink.bin"
}

# start_sshd2: a second sshd, same config, on port 2222 (for knock-mode
# entries); after start_sshd.
start_sshd2() {
	in_s /usr/sbin/sshd -D -e -f "$TMP/sshd_config" -o Port=2222 -o PidFile="$TMP/sshd2.pid" \
		>"$TMP/sshd2.log" 2>&1 &
	PIDS="$PIDS $!"
	listening 2222
}

# start_knockgw NS CONF: runs the daemon in the foreground, waits for ready.
start_knockgw() {
	ns=$1
	conf=$2
	log=$TMP/knockgw-$ns.log
	# Never the system's /run/knockgw: tests (and other runs) stay apart.
	grep -q '^[[:space:]]*control_socket' "$conf" ||
		printf 'control_socket = "%s";\n' "$TMP/ctl-$ns.sock" >>"$conf"
	# What `knockgw status` needs: the socket only, so that a test may
	# break the daemon's configuration or keys and still read its counters.
	grep '^[[:space:]]*control_socket' "$conf" | tail -n 1 >"$TMP/status-$ns.conf"
	chmod 600 "$TMP/status-$ns.conf"
	readies=$(grep -c '^ready:' "$log" 2>/dev/null || true)
	ip netns exec "$ns" "$KNOCKGW" -f -v -c "$conf" >>"$log" 2>&1 &
	KGW_PID=$!
	PIDS="$PIDS $KGW_PID"
	if ! wait_for 10 sh -c "[ \$(grep -c '^ready:' '$log') -gt ${readies:-0} ]"; then
		echo "knockgw did not become ready:" >&2
		cat "$log" >&2
		return 1
	fi
}

# status_json [NS]: `knockgw status --json` of NS's daemon (the server
# namespace's by default), as started by start_knockgw.
status_json() {
	"$KNOCKGW" status --json -c "$TMP/status-${1:-$NS_S}.conf"
}

# counter NAME [NS]: a daemon's counter by the name its log gives it
# (syn_refused, drop_short, client_knocked, control_ctl_status), read with
# `knockgw status --json`; by default the server namespace's daemon.  An
# unknown name prints nothing.
counter() {
	status_json "${2:-$NS_S}" | python3 -c '
import json, sys
name, j = sys.argv[1], json.load(sys.stdin)
for group, prefix in (("drop", "drop_"), ("client", "client_"), ("control", "control_"), ("server", "")):
    if name.startswith(prefix) and name[len(prefix):] in j[group]:
        print(j[group][name[len(prefix):]])
        break
' "$1"
}

# ccounter NAME: the client namespace's daemon's counter.
ccounter() {
	counter "$1" "$NS_C"
}

# qcounter NAME [NS]: a queue figure (queued, verdicts, enobufs, nl_errors,
# bad_msgs, send_errors, large_verdicts).
qcounter() {
	status_json "${2:-$NS_S}" | python3 -c '
import json, sys
name = {"queued": "received"}.get(sys.argv[1], sys.argv[1])
print(json.load(sys.stdin)["queue"].get(name, ""))
' "$1"
}

# key_file NAME: a fresh native key file, mode 0600.
key_file() {
	f=$TMP/$1.key
	"$KNOCKGW" genkey >"$f"
	chmod 600 "$f"
	echo "$f"
}

# The knock-mode secret of the published known answers (Knock's own, and
# tests/isn/cross_check.py's): the tests use the same one.
SECRET="Magic secret string"

# two_port_server_conf FILE [PROTECT]: the server side of the tests that
# run both sshds: 22 native with key k ($K, from key_file k), 2222 in knock
# mode with $SECRET; PROTECT is one more protect entry.  Control socket
# $TMP/server.sock.
two_port_server_conf() {
	tp_more=${2:+,
	$2}
	cat >"$1" <<EOC
control_socket = "$TMP/server.sock";
keys = ( { name = "k"; file = "$K"; }, { name = "legacy"; secret = "$SECRET"; } );
protect = (
	{ port = 22; mode = "native"; keys = [ "k" ]; },
	{ port = 2222; mode = "knock"; keys = [ "legacy" ]; }$tp_more
);
EOC
	chmod 600 "$1"	# it holds a secret: owner only
}

# two_port_client_conf FILE TRANSLATE SOCKET DST4 DST6: the client side,
# knocking 22 and 2222 at both destinations.
two_port_client_conf() {
	cat >"$1" <<EOC
translate = "$2";
control_socket = "$3";
keys = ( { name = "k"; file = "$K"; }, { name = "legacy"; secret = "$SECRET"; } );
knock = (
	{ dst = "$4"; port = 22; mode = "native"; key = "k"; },
	{ dst = "$5"; port = 22; mode = "native"; key = "k"; },
	{ dst = "$4"; port = 2222; mode = "knock"; key = "legacy"; },
	{ dst = "$5"; port = 2222; mode = "knock"; key = "legacy"; }
);
EOC
	chmod 600 "$1"	# it holds a secret: owner only
}

# probe OUT SRC DST DPORT SEQ [prober args...]: one raw segment from the
# client namespace (a new source port each time, from SPORT on), the answer
# as prober.py JSON in $TMP/OUT.json; flags_of OUT: the answer's flags.
# (Some tests define a probe() of their own, for their one kind of segment.)
SPORT=40100
probe() {
	p_out=$1 p_src=$2 p_dst=$3 p_dport=$4 p_seq=$5
	shift 5
	SPORT=$((SPORT + 1))
	in_c $PROBER probe --iface vc --src "$p_src" --dst "$p_dst" --sport $SPORT \
		--dport "$p_dport" --seq "0x$p_seq" "$@" >"$TMP/$p_out.json"
}
flags_of() { json "$TMP/$1.json" "(j['answer'] or {}).get('flagstr')"; }

# Drop this namespace's own RSTs for the prober's ports: its kernel has no
# socket for the prober's connections and would reset them.
quiet_client_rsts() {
	in_c nft -f - <<-EOR
	table inet proberquiet {
		chain out {
			type filter hook output priority 0; policy accept;
			tcp sport 40000-49999 tcp flags rst drop
		}
	}
	EOR
}

# json FILE EXPR: evaluates a Python expression on the JSON in FILE (as j).
json() {
	python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# --- configurations -------------------------------------------------------

# entry PORT [OPTIONS]: a protect entry for PORT, native mode, key "k";
# OPTIONS are more of its settings (e.g. "integrity_len = 16;").
entry() {
	echo "{ port = $1; mode = \"native\"; keys = [ \"k\" ];${2:+ $2} }"
}

# key_conf FILE ENTRIES [SETTING...]: a server configuration with one key,
# "k" ($K), the protect list ENTRIES (see entry), and each SETTING as one
# more line.
key_conf() {
	kc_file=$1 kc_entries=$2
	shift 2
	{
		for kc_line in "$@"; do echo "$kc_line"; done
		echo "keys = ( { name = \"k\"; file = \"$K\"; } );"
		echo "protect = ( $kc_entries );"
	} >"$kc_file"
}

# start_server ENTRIES [SETTING...]: key_conf into $TMP/knockgw.conf, and
# the server namespace's daemon started with it.
start_server() {
	key_conf "$TMP/knockgw.conf" "$@"
	start_knockgw "$NS_S" "$TMP/knockgw.conf"
}

# knock_conf FILE [OPTIONS [SETTING...]]: a client configuration knocking
# sshd's port 22 at $S4 and $S6, native mode with key "k" ($K), control
# socket $TMP/client.sock; OPTIONS are more of each knock entry's settings,
# each SETTING one more line.
knock_conf() {
	nc_file=$1 nc_opts=${2:+ $2}
	shift
	[ $# -eq 0 ] || shift
	{
		for nc_line in "$@"; do echo "$nc_line"; done
		echo "control_socket = \"$TMP/client.sock\";"
		echo "keys = ( { name = \"k\"; file = \"$K\"; } );"
		echo "knock = ( { dst = \"$S4\"; port = 22; mode = \"native\"; key = \"k\";$nc_opts },"
		echo "	  { dst = \"$S6\"; port = 22; mode = \"native\"; key = \"k\";$nc_opts } );"
	} >"$nc_file"
}

# --- knocks ---------------------------------------------------------------

# isn MODE KEY DST PORT TSVAL [ARGS...]: a knock's ISN (hex) from
# knock-connect; KEY is a key file in native mode, the secret in knock mode;
# ARGS are more of its options (--integrity-len N --payload-file F).
isn() {
	i_mode=$1 i_key=$2 i_dst=$3 i_port=$4 i_ts=$5
	shift 5
	if [ "$i_mode" = knock ]; then i_opt=--secret; else i_opt=--key-file; fi
	"$KC" isn --mode "$i_mode" $i_opt "$i_key" --dst "$i_dst" --port "$i_port" --tsval "$i_ts" "$@"
}

# knock_gets FLAGS [KEYFILE [PORT [SRC DST [prober args...]]]]: true if a
# fresh valid native knock (key $K, port 22, $C4 to $S4 unless given; its
# TSval is its source port) is answered FLAGS (SA, RA, None: flags_of).
# It runs probe in this shell, so each knock gets a new source port.
knock_gets() {
	kg_want=$1 kg_key=${2:-$K} kg_port=${3:-22} kg_src=${4:-$C4} kg_dst=${5:-$S4}
	if [ $# -gt 5 ]; then shift 5; else set --; fi
	kg_ts=$((SPORT + 1))
	probe knock "$kg_src" "$kg_dst" "$kg_port" \
		"$(isn native "$kg_key" "$kg_dst" "$kg_port" $kg_ts)" --tsval $kg_ts "$@"
	answered knock "$kg_want"
}

# plain_gets FLAGS [PORT [SRC DST [prober args...]]]: likewise for a plain
# SYN (ISN 01020304, no knock).
plain_gets() {
	pg_want=$1 pg_port=${2:-22} pg_src=${3:-$C4} pg_dst=${4:-$S4}
	if [ $# -gt 4 ]; then shift 4; else set --; fi
	probe plain "$pg_src" "$pg_dst" "$pg_port" 01020304 --tsval $((SPORT + 1)) "$@"
	answered plain "$pg_want"
}

# answered OUT FLAGS: probe OUT's answer has FLAGS; if not, says what came.
answered() {
	an_got=$(flags_of "$1")
	[ "$an_got" = "$2" ] && return 0
	echo "# $1: $an_got, not $2"
	return 1
}

# got_rst OUT: the connection prober.py connect or mitm.py send recorded in
# $TMP/OUT.json was reset; acked_bytes OUT N: the server acknowledged
# exactly N bytes of it.
got_rst() { [ "$(json "$TMP/$1.json" "j['rst']")" = True ]; }
acked_bytes() { [ "$(json "$TMP/$1.json" "j['max_ack']")" = "$2" ]; }

# rst_alike A B [--silent-ok]: the answers in $TMP/A.json and $TMP/B.json
# are equal field for field (rstcmp.py prints the differences).
rst_alike() {
	python3 "$TOP/tests/netns/lib/rstcmp.py" ${3:-} "$TMP/$1.json" "$TMP/$2.json"
}

# answer_alike A B: the answers in $TMP/A.json and $TMP/B.json (prober.py
# probe --icmp, to two different ports) are both silence, or equal field
# for field but the ports, the TCP checksum that covers them (an ICMP
# error's quote keeps the checksum of the header as it was before
# conntrack put the dialled port back) and the flow label's value (set
# or not); prints the differences.
answer_alike() {
	python3 - "$TMP/$1.json" "$TMP/$2.json" <<-'EOP'
	import json, sys
	a, b = (json.load(open(f))["answer"] for f in sys.argv[1:])
	if a is None and b is None:
	    sys.exit(0)
	if a is None or b is None:
	    print("#   one answered, the other not: %s %s" % (a is not None, b is not None))
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

# nmap_every TAG DST [PORT]: every nmap scan type (sS sA sF sN sX sM sW)
# from the client namespace to DST sees PORT (22) as it sees the closed
# port 23: one nmap_same row per scan type.
nmap_every() {
	ne_six=
	case $2 in *:*) ne_six=-6 ;; esac
	for ne_scan in sS sA sF sN sX sM sW; do
		ne_out=$TMP/nmap-$(echo "$1" | tr -c 'A-Za-z0-9\n' _)-$ne_scan.txt
		in_c timeout 60 nmap $ne_six -Pn -n -$ne_scan --max-retries 1 -p "${3:-22},23" "$2" \
			>"$ne_out" 2>&1 || true
		nmap_same "$1 nmap -$ne_scan" "$ne_out" "${3:-22}" 23
	done
}

# refused_without_daemon TAG PORT: with no daemon running, v4 and v6, a
# plain SYN and a valid knock (key $K) to PORT both get the closed port
# 23's answer, field for field.
refused_without_daemon() {
	for rw_fam in 4 6; do
		if [ $rw_fam = 4 ]; then rw_src=$C4 rw_dst=$S4; else rw_src=$C6 rw_dst=$S6; fi
		check "$1, IPv$rw_fam: a plain SYN to $2 gets the closed-port RST, field for field" \
			like_closed "stopped$rw_fam" $rw_src $rw_dst "$2" 01020304 --tsval 97
		check "$1, IPv$rw_fam: so does a valid knock for $2 (nothing verifies it)" \
			like_closed "stoppedk$rw_fam" $rw_src $rw_dst "$2" \
			"$(isn native "$K" $rw_dst "$2" 96)" --tsval 96
	done
}

# flood NAME COUNT [SRC DST PORT]: tests/netns/lib/synflood.py sends COUNT
# unknocked SYNs to DST:PORT ($S4:22), one every 2 ms (FLOOD_MS if set),
# in the background from a fresh source port range; returns once its
# first SYN is out.
# flood_done: waits for it.  answers NAME FLAGS: how many SYNs of flood
# NAME got FLAGS first ("SA", "RA", "none").
FLOODS=0
flood() {
	FLOODS=$((FLOODS + 1))
	in_c python3 "$TOP/tests/netns/lib/synflood.py" --iface vc --src "${3:-$C4}" \
		--dst "${4:-$S4}" --dport "${5:-22}" --count "$2" --interval-ms "${FLOOD_MS:-2}" \
		--sport-base $((10000 + FLOODS % 25 * 2000)) --ready "$TMP/$1.ready" \
		>"$TMP/$1.json" 2>"$TMP/$1.err" &
	FLOOD_PID=$!
	wait_for 10 test -e "$TMP/$1.ready"
}
flood_done() { wait "$FLOOD_PID" || true; }
answers() { json "$TMP/$1.json" "j['answers'].get('$2', 0)"; }

# hidden NAME [RUNS]: flood NAME got no SYN-ACK, and every SYN the
# closed-port RST+ACK, but for at most RUNS (0) unbroken runs of unanswered
# SYNs (when a hook goes away in the namespace, the kernel drops what is
# queued at that moment; at kill -9, what arrives during the teardown).
hidden() {
	echo "# $1: $(json "$TMP/$1.json" "j['sent']") SYNs, answers" \
		"$(json "$TMP/$1.json" "j['answers']"), unanswered $(json "$TMP/$1.json" "j['silent']")"
	[ "$(answers "$1" SA)" = 0 ] || return 1
	[ "$(($(answers "$1" RA) + $(answers "$1" none)))" = "$(json "$TMP/$1.json" "j['sent']")" ] ||
		return 1
	[ "$(json "$TMP/$1.json" "sum(1 for i, x in enumerate(j['silent']) if i == 0 or j['silent'][i - 1] != x - 1) <= ${2:-0}")" = True ]
}

# like_closed NAME SRC DST DPORT SEQ [args]: the answer to this segment is the
# one port 23 (closed) gives to the same segment, field for field.
like_closed() {
	l_name=$1 l_src=$2 l_dst=$3 l_dport=$4 l_seq=$5
	shift 5
	probe "$l_name" "$l_src" "$l_dst" "$l_dport" "$l_seq" "$@"
	probe "$l_name-closed" "$l_src" "$l_dst" 23 "$l_seq" "$@"
	rst_alike "$l_name" "$l_name-closed"
}

# tamper_first_byte PORT: from now on the client namespace's output rewrites
# the first payload byte of each segment to PORT to 'X' (0x58), checksum
# kept right, as a man in the middle could; untamper ends it.
tamper_first_byte() {
	in_c nft -f - <<-EOR
	table inet tamper {
		chain out {
			type filter hook output priority 0; policy accept;
			tcp dport $1 tcp flags & (syn | rst) == 0 @ih,0,8 set 0x58
		}
	}
	EOR
}
untamper() { in_c nft delete table inet tamper; }

# --- the daemon from outside ------------------------------------------------

# has_table [NS]: table inet knockgw is installed in NS (the server's).
has_table() { ip netns exec "${1:-$NS_S}" nft list table inet knockgw >/dev/null 2>&1; }
no_table() { ! has_table "$@"; }

# stop_knockgw [PID]: SIGTERM to the daemon (KGW_PID), and up to 5 s for it
# to go.
stop_knockgw() {
	sk_pid=${1:-$KGW_PID}
	kill "$sk_pid"
	wait_for 5 sh -c "! kill -0 $sk_pid"
}

# guard_pids [NS]: the queue guards (knockgw-guard, src/kernel/qguard.h) that
# live in NS ($NS_S), one PID a line.  no_guard [NS]: none there.
guard_pids() {
	for gp_p in $(ip netns pids "${1:-$NS_S}" 2>/dev/null); do
		[ "$(cat "/proc/$gp_p/comm" 2>/dev/null)" = knockgw-guard ] && echo "$gp_p"
	done
	return 0
}
no_guard() { [ -z "$(guard_pids "$@")" ]; }

# sighup_refused: SIGHUP to the server daemon (KGW_PID); true once its log
# has one more "reload refused" line, within 10 s.
sighup_refused() {
	sr_log=$TMP/knockgw-$NS_S.log
	sr_before=$(grep -c 'reload refused' "$sr_log" || true)
	kill -HUP "$KGW_PID"
	wait_for 10 sh -c "[ \$(grep -c 'reload refused' '$sr_log') -gt $sr_before ]"
}

# strip: an nft listing on stdin without its counters and warnings.
strip() { sed -e 's/counter packets [0-9]* bytes [0-9]* //' -e '/^# Warning/d'; }

# csum_errors [NS]: the TCP InCsumErrors of NS, the server namespace by
# default (RFC 4022 tcpInCsumErrors).
csum_errors() {
	ip netns exec "${1:-$NS_S}" awk '/^Tcp:/ { if (!n) { for (i = 1; i <= NF; i++)
		if ($i == "InCsumErrors") c = i; n = 1 } else print $c }' /proc/net/snmp
}

# nmap_same TAG FILE [PORT CLOSED]: one row: nmap's output FILE shows PORT
# (22) and the closed port CLOSED (23) in the same state; if not, the output
# follows.
nmap_same() {
	ns_p=${3:-22} ns_c=${4:-23}
	ns_22=$(awk -v p="$ns_p/tcp" '$1 == p { print $2 }' "$2")
	ns_23=$(awk -v p="$ns_c/tcp" '$1 == p { print $2 }' "$2")
	if [ -n "$ns_22" ] && [ "$ns_22" = "$ns_23" ]; then
		ok "$1: $ns_p and $ns_c both '$ns_22'"
	else
		not_ok "$1: $ns_p is '$ns_22', $ns_c is '$ns_23'"
		cat "$2"
	fi
}

# fail2ban_etc: fail2ban's configuration directory (filter.d/common.conf and
# the rest), the system's or the one make deps unpacked.
fail2ban_etc() {
	for fe_d in /etc/fail2ban "$BUILD/deps/fail2ban/etc/fail2ban"; do
		[ -f "$fe_d/filter.d/common.conf" ] && { echo "$fe_d"; return 0; }
	done
	return 1
}
