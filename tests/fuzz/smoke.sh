#!/bin/sh
# Replays a fuzz target's seed and regression corpus, then fuzzes briefly so
# the target cannot rot.  New inputs go to a temporary directory, never into
# the repository.  Usage: smoke.sh BUILD/fuzz/fuzz_NAME SECONDS
set -eu
bin=$1
secs=$2
name=$(basename "$bin" | sed 's/^fuzz_//')
dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/kgw-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM

mkdir -p "$work/corpus"
for d in "$dir/corpus/$name" "$dir/regress/$name"; do
	[ -d "$d" ] && cp -r "$d"/. "$work/corpus/"
done
# Replay every stored input once (crashes found before must stay fixed) ...
"$bin" -runs=0 "$work/corpus" >"$work/replay.log" 2>&1 || { cat "$work/replay.log"; exit 1; }
# ... then a short run from that corpus.
"$bin" -max_total_time="$secs" -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
	-artifact_prefix="$work/" "$work/corpus" >"$work/fuzz.log" 2>&1 || { tail -40 "$work/fuzz.log"; exit 1; }
grep -E '^stat::number_of_executed_units' "$work/fuzz.log" | sed "s/^/$name: /"
