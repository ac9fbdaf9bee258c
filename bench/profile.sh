#!/usr/bin/env bash
# profile.sh: CPU profiles of the Go benchmarks of the hot paths and of a
# whole crawl of the Python documentation, each with the top of
# `go tool pprof -top` beside it, in .local-bench/profiles/.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
eval "$(bench/inputs.sh)"
export BENCH_DOC_ROOT=$DOC_ROOT
out=.local-bench/profiles
mkdir -p "$out"

top() { # top NAME BINARY PROFILE: flat and cumulative tops
	$GO tool pprof -top -nodecount=30 "$2" "$3" >"$out/$1.top.txt" 2>/dev/null
	$GO tool pprof -top -cum -nodecount=60 "$2" "$3" >"$out/$1.cum.txt" 2>/dev/null
	echo "$1: $3 ($out/$1.top.txt, $out/$1.cum.txt)" >&2
}

bench() { # bench NAME PACKAGE PATTERN BENCHTIME
	$GO test -run='^$' -bench="$3" -benchtime="$4" -benchmem -cpuprofile "$out/$1.prof" -o "$out/$1.test" "$2" | grep -E '^Benchmark' || true
	top "$1" "$out/$1.test" "$out/$1.prof"
}

bench extract ./shared/stage/parse 'Extract/python-docs' 5x
bench resolve ./shared/web/urlnorm 'Resolve/python-docs' 2s
bench store-page ./shared/local/sqlite 'StorePage/python-docs/page$' 300x

# A whole crawl, with the crawler's hidden --cpuprofile flag.
BENCH_RUNS=1 BENCH_TOOLS=crawler BENCH_PROFILE=1 bench/run.sh -out "$out/crawl" >/dev/null
top crawl bin/crawler "$out/crawl/crawler.prof"
