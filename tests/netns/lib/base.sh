# base.sh - result lines, bounded waits and the stopping of processes and
# namespaces; sourced, not run.  It needs neither root nor a namespace and
# makes nothing when sourced, so the namespace tests (lib.sh), the install
# tests and the benchmark (bench/run.sh) all take these from here.

PASSES=0
FAILS=0

# ok DESCRIPTION / not_ok DESCRIPTION: one result line, counted.
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

# finish: the closing line, "NAME: N passed, N failed"; false on a failure.
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

# alive PID: the process exists and is not a zombie.
alive() {
	[ -r "/proc/$1/stat" ] || return 1
	[ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]
}

# stop_pids PID...: SIGCONT (a stopped process could not act on the next
# signal) and SIGTERM to each, up to 2 s for each to go, then SIGKILL.
stop_pids() {
	for sp_p in "$@"; do
		kill -CONT "$sp_p" 2>/dev/null || true
		kill "$sp_p" 2>/dev/null || true
	done
	for sp_p in "$@"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			alive "$sp_p" || break
			sleep 0.2
		done
		kill -9 "$sp_p" 2>/dev/null || true
	done
	return 0
}

# del_namespaces PREFIX: every namespace named PREFIX-*, its processes
# killed first.
del_namespaces() {
	for dn_ns in $(ip netns list | awk '{print $1}' | grep "^$1-"); do
		ip netns pids "$dn_ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
		ip netns del "$dn_ns" || true
	done
	return 0
}
