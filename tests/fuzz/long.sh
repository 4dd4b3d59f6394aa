#!/bin/sh
# Long fuzzing runs (make fuzz-long; not part of make check).
#
#   long.sh BUILD/fuzz/fuzz_NAME...
#   FUZZ_TIME    seconds per target (default 600)
#   FUZZ_RUNS    executions per target (split over the jobs), ending the
#                target's run early when reached; default 0: FUZZ_TIME only
#   FUZZ_JOBS    parallel fuzzing processes per target, sharing one corpus
#                (default 2, one per core of the usual 2-vCPU machine)
#   FUZZ_MERGE   1: afterwards, merge the inputs that add coverage into
#                tests/fuzz/corpus/NAME (libFuzzer -merge=1); default 0
#   FUZZ_TIMEOUT seconds one input may take before it counts as a timeout
#                (default 10; libFuzzer's clock is the wall clock, so a run
#                paused with SIGSTOP, e.g. while a benchmark needs the
#                CPUs, needs more than the longest pause)
#   FUZZ_KEEP    a directory to keep each target's run in (logs, corpus,
#                artifacts); default: removed unless something crashed
#   FUZZ_LOG     a file to append one line per target to, for the campaign
#                record (tests/fuzz/CAMPAIGN.md): date, commit, target,
#                seconds, jobs, executions, corpus growth, crashes
#
# Each target runs on a temporary copy of its seed and regression corpus,
# so the repository changes only with FUZZ_MERGE=1.  Prints, per target, the
# executions (summed over the jobs), the corpus size before and after and
# the crashes (crash-, leak-, timeout-, oom- artifacts); a crash keeps the
# run's directory and makes the exit status 1.  Minimize a crasher with
#   BIN -minimize_crash=1 -runs=100000 -exact_artifact_path=OUT CRASH
# and keep it as tests/fuzz/regress/NAME/<what-broke>.
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
FUZZ_TIME=${FUZZ_TIME:-600}
FUZZ_JOBS=${FUZZ_JOBS:-2}
FUZZ_MERGE=${FUZZ_MERGE:-0}
FUZZ_KEEP=${FUZZ_KEEP:-}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-10}
FUZZ_LOG=${FUZZ_LOG:-}
FUZZ_RUNS=${FUZZ_RUNS:-0}
runs=-1
[ "$FUZZ_RUNS" -le 0 ] || runs=$(((FUZZ_RUNS + FUZZ_JOBS - 1) / FUZZ_JOBS))
commit=$(git -C "$dir" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$dir" status --porcelain -- ../../src ../../client . ":(exclude)corpus" 2>/dev/null)" ] ||
	commit="$commit+changes"
[ $# -gt 0 ] || { echo "usage: long.sh BUILD/fuzz/fuzz_NAME..." >&2; exit 2; }

status=0
summary=""
for bin in "$@"; do
	bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
	name=$(basename "$bin" | sed 's/^fuzz_//')
	if [ -n "$FUZZ_KEEP" ]; then
		work=$FUZZ_KEEP/$name
		rm -rf "$work"
		mkdir -p "$work"
	else
		work=$(mktemp -d /tmp/kgw-fuzzlong-XXXXXX)
	fi
	mkdir -p "$work/corpus" "$work/artifacts"
	for d in "$dir/corpus/$name" "$dir/regress/$name"; do
		[ -d "$d" ] && cp -r "$d"/. "$work/corpus/"
	done
	before=$(find "$work/corpus" -type f | wc -l)
	echo "=== $name: $FUZZ_TIME s x $FUZZ_JOBS job(s) from $before input(s) in $work"
	start=$(date +%s)
	# -jobs with as many -workers: that many processes, each for
	# max_total_time, sharing the corpus; their logs are fuzz-N.log in $work.
	(cd "$work" && "$bin" -jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS" \
		-max_total_time="$FUZZ_TIME" -runs="$runs" -timeout="$FUZZ_TIMEOUT" -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/" \
		"$work/corpus" >"$work/driver.log" 2>&1) || true
	secs=$(($(date +%s) - start))
	execs=0
	for log in "$work"/fuzz-*.log; do
		[ -f "$log" ] || continue
		n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
		if [ -z "$n" ]; then	# no final stats (killed): the last status line
			n=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
		fi
		execs=$((execs + ${n:-0}))
	done
	after=$(find "$work/corpus" -type f | wc -l)
	crashes=$(find "$work/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
	line="$name: $execs executions in $secs s ($((execs / (secs > 0 ? secs : 1)))/s), corpus $before -> $after, crashes $crashes"
	echo "$line"
	summary="$summary$line
"
	if [ -n "$FUZZ_LOG" ]; then
		printf '| %s | %s | %s | %s | %s | %s | %s -> %s | %s |\n' \
			"$(date -u +%Y-%m-%dT%H:%MZ)" "$commit" "$name" "$secs" "$FUZZ_JOBS" \
			"$execs" "$before" "$after" "$crashes" >>"$FUZZ_LOG"
	fi
	if [ "$crashes" -gt 0 ]; then
		status=1
		for a in "$work"/artifacts/*; do
			echo "  artifact: $a"
		done
		grep -h -m1 -E 'ERROR: |broken: |runtime error:' "$work"/fuzz-*.log | sed 's/^/  /' || true
	fi
	if [ "$FUZZ_MERGE" = 1 ]; then
		mkdir -p "$dir/corpus/$name"
		n0=$(find "$dir/corpus/$name" -type f | wc -l)
		"$bin" -merge=1 -timeout="$FUZZ_TIMEOUT" -rss_limit_mb=2048 "$dir/corpus/$name" "$work/corpus" \
			>"$work/merge.log" 2>&1 || { tail -5 "$work/merge.log"; status=1; }
		n1=$(find "$dir/corpus/$name" -type f | wc -l)
		echo "$name: merged $((n1 - n0)) new input(s) into tests/fuzz/corpus/$name"
	fi
	[ "$crashes" -gt 0 ] || [ -n "$FUZZ_KEEP" ] || rm -rf "$work"
done
echo "=== fuzz-long summary"
printf '%s' "$summary"
exit $status
