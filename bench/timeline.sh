#!/usr/bin/env bash
# bench/timeline.sh [CRAWLER]: how busy a crawl keeps the machine, over
# time. Serves the make-bench documentation tree (bench/inputs.sh) on
# loopback, crawls it with CRAWLER (default bin/crawler) as bench/run
# does, and prints, every 0.2 s, the crawler's CPU use in that interval
# as cores busy (2.00 = two cores). With CRAWLER_TIMELINE_ROOT=DIR it
# serves DIR instead. See BENCHMARKS.md ("What holds the wall time").
set -euo pipefail
cd "$(dirname "$0")/.."
crawler=${1:-bin/crawler}
eval "$(bench/inputs.sh 2>/dev/null)"
root=${CRAWLER_TIMELINE_ROOT:-$DOC_ROOT}
make -s bench-build >/dev/null
work=$(mktemp -d)
trap 'kill "$serve" 2>/dev/null || true; wait "$serve" 2>/dev/null || true; rm -rf "$work"' EXIT
bin/bench-serve -addr 127.0.0.1:0 -root "$root" -stats "$work/stats.json" >"$work/serve.log" 2>&1 &
serve=$!
for _ in $(seq 50); do
	addr=$(grep -o 'http://[0-9.:]*' "$work/serve.log" | head -1 || true)
	[ -n "$addr" ] && break
	sleep 0.1
done
[ -n "$addr" ] || { echo "bench/timeline: the server did not start" >&2; exit 1; }
"$crawler" crawl --data "$work/data" --delay 0 --concurrency 8 --allow-private --quiet "$addr/index.html" >"$work/crawl.log" &
pid=$!
hz=$(getconf CLK_TCK)
start=$(date +%s.%N)
prev=0
prevt=$start
echo "seconds  cores busy"
while kill -0 "$pid" 2>/dev/null; do
	ticks=$(awk '{print $14+$15}' "/proc/$pid/stat" 2>/dev/null) || break
	now=$(date +%s.%N)
	awk -v t="$now" -v s="$start" -v pt="$prevt" -v d=$((ticks - prev)) -v hz="$hz" \
		'BEGIN { if (t > pt) printf "%7.1f  %5.2f\n", t - s, d / hz / (t - pt) }'
	prev=$ticks
	prevt=$now
	sleep 0.2
done
wait "$pid"
cat "$work/crawl.log"
