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

set -eu
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=$(cd "$TOP" && cd "${BUILD:-build}" && pwd)
KNOCKGW=$BUILD/knockgw
KC=$BUILD/knock-connect
PROBER="python3 $TOP/tests/netns/prober.py"
PFX=kgw-$$
NS_C=$PFX-1
NS_S=$PFX-2
C4=192.0.2.1
S4=192.0.2.2
C6=2001:db8::1
S6=2001:db8::2
TMP=$(mktemp -d /tmp/kgw-test-XXXXXX)
chmod 755 "$TMP"
PIDS=""
. "$TOP/tests/netns/sanitizer.sh"
FAILS=0
PASSES=0

cleanup() {
	set +e
	for p in $PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $PIDS; do
		# bounded wait, then force
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.2
		done
		kill -9 "$p" 2>/dev/null
	done
	for ns in $(ip netns list | awk '{print $1}' | grep "^$PFX-"); do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns"
	done
	sanitizer_check "$TMP" || SANITIZER_FAILED=1
	rm -rf "$TMP"
	[ "$SANITIZER_FAILED" = 0 ] || exit 1
}
trap cleanup EXIT INT TERM

in_c() { ip netns exec "$NS_C" "$@"; }
in_s() { ip netns exec "$NS_S" "$@"; }

ok() {
	PASSES=$((PASSES + 1))
	echo "ok - $*"
}

not_ok() {
	FAILS=$((FAILS + 1))
	echo "not ok - $*"
}

# check DESCRIPTION COMMAND...: one test row.
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

finish() {
	echo "$(basename "$0"): $PASSES passed, $FAILS failed"
	[ "$FAILS" = 0 ]
}

# wait_for SECONDS COMMAND...: polls every 0.1 s, bounded.
wait_for() {
	limit=$(($1 * 10))
	shift
	i=0
	while [ "$i" -lt "$limit" ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
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
	wait_for 10 in_s sh -c "ss -ltn | grep -q ':22 '"
}

# start_sink [PORT]: sink.py on PORT (2200) in the server namespace; every
# byte any connection delivers goes to $TMP/sink.bin.
start_sink() {
	: >"$TMP/sink.bin"
	in_s python3 "$TOP/tests/netns/sink.py" "${1:-2200}" "$TMP/sink.bin" 2>"$TMP/sink.err" &
	PIDS="$PIDS $!"
	wait_for 10 in_s sh -c "ss -ltn | grep -q ':${1:-2200} '"
}

# start_sshd2: a second sshd, same config, on port 2222 (for knock-mode
# entries); after start_sshd.
start_sshd2() {
	in_s /usr/sbin/sshd -D -e -f "$TMP/sshd_config" -o Port=2222 -o PidFile="$TMP/sshd2.pid" \
		>"$TMP/sshd2.log" 2>&1 &
	PIDS="$PIDS $!"
	wait_for 10 in_s sh -c "ss -ltn | grep -q ':2222 '"
}

# start_knockgw NS CONF: runs the daemon in the foreground, waits for ready.
start_knockgw() {
	ns=$1
	conf=$2
	log=$TMP/knockgw-$ns.log
	# Never the system's /run/knockgw: tests (and other runs) stay apart.
	grep -q '^[[:space:]]*control_socket' "$conf" ||
		printf 'control_socket = "%s";\n' "$TMP/ctl-$ns.sock" >>"$conf"
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

# counter NAME [NS PID]: a daemon's counter, read after SIGUSR1 from its
# log; by default the server namespace's daemon.
counter() {
	c_ns=${2:-$NS_S}
	c_pid=${3:-$KGW_PID}
	log=$TMP/knockgw-$c_ns.log
	before=$(grep -c '^counters:' "$log" || true)
	kill -USR1 "$c_pid"
	wait_for 5 sh -c "[ \$(grep -c '^counters:' '$log') -gt $before ]"
	sleep 0.1
	grep "^counter $1=" "$log" | tail -1 | cut -d= -f2
}

# ccounter NAME: the client namespace's daemon's counter (CLI_PID).
ccounter() {
	counter "$1" "$NS_C" "$CLI_PID"
}

# qcounter NAME [NS PID]: a queue counter (queued, verdicts, enobufs, ...).
qcounter() {
	counter none "${2:-$NS_S}" "${3:-$KGW_PID}" >/dev/null
	grep '^counters:' "$TMP/knockgw-${2:-$NS_S}.log" | tail -1 | tr ' ' '\n' |
		grep "^$1=" | cut -d= -f2
}

# key_file NAME: a fresh native key file, mode 0600.
key_file() {
	f=$TMP/$1.key
	"$KNOCKGW" genkey >"$f"
	chmod 600 "$f"
	echo "$f"
}

# The SPEC's knock-mode secret: its known answers (and Knock's) use it.
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
