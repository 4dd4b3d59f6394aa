#!/bin/sh
# Runs every test suite of `make check` and prints one closing line,
# "N passed, N failed".  Each suite prints its own details first.
#   BUILD          build directory (default: build)
#   FUZZ_SECONDS   how long each fuzz target runs (default: 5)
#   TESTS          space-separated suite filter, e.g. TESTS="unit conf"
#   NETNS_SKIP     space-separated namespace tests to leave out, by file
#                  name without .sh (e.g. "0018-sec-odd-syns-like-closed");
#                  a name that is no test in tests/netns fails the run, so a
#                  skip list cannot outlive a rename unnoticed
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-5}
TESTS=${TESTS:-"unit house valgrind conf isn cli hardening install deb systemd fuzz netns"}
export BUILD

passed=0
failed=0
failures=""

run() {
	name=$1
	shift
	echo "=== $name"
	t0=$(date +%s)
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures="$failures $name"
		echo "FAILED: $name"
	fi
	# Each suite's time, so that what makes CI long can be read off its log.
	echo "--- $name: $(($(date +%s) - t0)) s"
}

want() {
	case " $TESTS " in *" $1 "*) return 0 ;; esac
	return 1
}

if want unit; then
	for t in "$BUILD"/tests/test_*; do
		[ -x "$t" ] && run "unit/$(basename "$t")" "$t"
	done
fi

want house && run house sh tests/house.sh

want valgrind && run valgrind sh tests/valgrind.sh

want conf && run conf sh tests/conf/run.sh

want isn && run isn python3 tests/isn/cross_check.py "$BUILD"

want cli && run cli sh tests/cli/run.sh

want hardening && run hardening sh tests/hardening.sh

if want install; then
	run install sh tests/install/run.sh
	run install-unit sh tests/install/unit.sh
fi

want deb && run deb sh tests/deb/run.sh

want systemd && run systemd sh tests/systemd/run.sh

if want fuzz; then
	for f in "$BUILD"/fuzz/fuzz_*; do
		[ -x "$f" ] || continue
		run "fuzz/$(basename "$f")" sh tests/fuzz/smoke.sh "$f" "$FUZZ_SECONDS"
	done
fi

if want netns; then
	for s in ${NETNS_SKIP:-}; do
		[ -f "tests/netns/$s.sh" ] && continue
		echo "NETNS_SKIP names no test: $s (tests/netns/$s.sh)" >&2
		failed=$((failed + 1))
		failures="$failures netns-skip/$s"
	done
	for t in tests/netns/[0-9]*.sh; do
		[ -f "$t" ] || continue
		case " ${NETNS_SKIP:-} " in *" $(basename "$t" .sh) "*)
			echo "=== netns/$(basename "$t"): left out (NETNS_SKIP)"
			continue ;;
		esac
		if [ "$(id -u)" != 0 ]; then
			echo "netns tests need root; run make check as root" >&2
			failed=$((failed + 1))
			failures="$failures $t"
			continue
		fi
		run "netns/$(basename "$t")" sh "$t"
	done
fi

[ -n "$failures" ] && echo "failed suites:$failures"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
