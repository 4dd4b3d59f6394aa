#!/bin/sh
# A reload whose switch back does not complete: one queue thread is stopped
# from outside (ptrace, like a debugger or a thread the scheduler starves),
# so it takes neither the new configuration nor, after the daemon gives up
# on it, the old one again.  The refused configuration must then be kept,
# not freed, until that thread has moved on (a thread that had taken it
# would otherwise read freed memory); once the thread runs again it is
# freed, and the old configuration serves on: its key knocks, the new
# file's key does not.  (Under ASan a use-after-free or a leak fails the
# test; the moment a thread holds the new configuration while the switch
# back times out cannot be produced from outside, so this checks the path
# that has to handle it.)
#
#   client ns $NS_C                       server ns $NS_S
#   +-----------------------+             +-----------------------------------+
#   | prober.py -> :22      |---- veth ---| sshd :22; knockgw, 2 queues;      |
#   +-----------------------+             | its second queue thread stopped   |
#                                         | by ptrace around a SIGHUP         |
#                                         +-----------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
K1=$(key_file k1)
K2=$(key_file k2)
conf() { # KEYFILE
	cat >"$TMP/knockgw.conf" <<-EOC
	control_socket = "$TMP/server.sock";
	queue = { num = 0; count = 2; };
	keys = ( { name = "k"; file = "$1"; } );
	protect = ( { port = 22; mode = "native"; keys = [ "k" ]; } );
	EOC
}
conf "$K1"
start_knockgw "$NS_S" "$TMP/knockgw.conf"
LOG=$TMP/knockgw-$NS_S.log

check "before: a knock with key 1 gets SYN-ACK" knock_gets SA "$K1"

# The queue threads: every thread but the main one.  Stop the last.
TID=$(ls "/proc/$KGW_PID/task" | grep -vx "$KGW_PID" | sort -n | tail -1)
check "the daemon runs two queue threads" \
	[ "$(ls "/proc/$KGW_PID/task" | grep -vxc "$KGW_PID")" -ge 2 ]
python3 - "$TID" "$TMP/resume" >"$TMP/tracer.out" 2>&1 <<-'EOF' &
import ctypes, os, sys, time
PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH, WALL = 0x4206, 0x4207, 17, 0x40000000
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
tid, resume = int(sys.argv[1]), sys.argv[2]
if libc.ptrace(PTRACE_SEIZE, tid, None, None) or libc.ptrace(PTRACE_INTERRUPT, tid, None, None):
    sys.exit("ptrace: " + os.strerror(ctypes.get_errno()))
os.waitpid(tid, WALL)
print("stopped", flush=True)
for _ in range(600):    # 60 s at most
    if os.path.exists(resume):
        break
    time.sleep(0.1)
libc.ptrace(PTRACE_DETACH, tid, None, None)
print("resumed", flush=True)
EOF
TRACER=$!
PIDS="$TRACER $PIDS"
check "queue thread $TID is stopped" wait_for 5 grep -q '^stopped' "$TMP/tracer.out"

# The new file (key 2), then SIGHUP: the switch and the switch back each
# wait SWITCH_WAIT_MS (2 s) for the stopped thread.
conf "$K2"
kill -HUP "$KGW_PID"
check "SIGHUP: the stopped thread does not take the new configuration" \
	wait_for 10 grep -q 'did not take the new configuration; restoring' "$LOG"
check "the refused configuration is kept while the thread has not moved back" \
	wait_for 10 grep -q 'refused one is kept until it has' "$LOG"
check "it is not freed while the thread is stopped" \
	sh -c "! grep -q 'left the refused configuration; freed' '$LOG'"
check "the daemon answers knockgw status meanwhile" \
	sh -c "ip netns exec '$NS_S' '$KNOCKGW' status -c '$TMP/knockgw.conf' | grep -q '^knockgw running'"

: >"$TMP/resume"
check "the thread runs again" wait_for 10 grep -q '^resumed' "$TMP/tracer.out"
check "then the refused configuration is freed" \
	wait_for 10 grep -q 'left the refused configuration; freed' "$LOG"

# The old configuration serves on (both queues: several source ports).
ok1=0 ok2=0
for _ in 1 2 3 4 5 6; do
	knock_gets SA "$K1" && ok1=$((ok1 + 1))
	knock_gets RA "$K2" && ok2=$((ok2 + 1))
done
check "after: knocks with key 1 (the old file's) get SYN-ACK (6 of 6)" [ $ok1 = 6 ]
check "after: knocks with key 2 (the refused file's) get the RST (6 of 6)" [ $ok2 = 6 ]
check "the reload was counted as refused" \
	sh -c "ip netns exec '$NS_S' '$KNOCKGW' status -c '$TMP/knockgw.conf' | grep -q ', 1 refused,'"

kill "$KGW_PID"
if wait "$KGW_PID"; then rc=0; else rc=$?; fi
check "SIGTERM: exit status 0" [ $rc = 0 ]
finish
