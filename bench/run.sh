#!/usr/bin/env bash
# run.sh: the crawl benchmark. Gets the inputs (bench/inputs.sh, cached
# in .local-bench/), builds the crawler, the static server, the colly
# crawler and the runner, then crawls the Python 3.11 documentation
# served on 127.0.0.1 with each tool, BENCH_RUNS times, and prints the
# table of medians. Results go to .local-bench/results/TIME/.
#
#   BENCH_RUNS=5                     runs per tool
#   BENCH_TOOLS=crawler,crawler-recrawl,wget2,colly,wget2-serial
#                                    tools, in this order within a round;
#                                    crawler-recrawl is a fresh crawl (not
#                                    timed), then `crawler crawl --recrawl`
#                                    of the unchanged tree into the same data
#                                    directory (timed; the server answers 304);
#                                    wget2-serial is wget2 --max-threads=1, one
#                                    request at a time like the crawler per host
#   BENCH_CONCURRENCY=8              --concurrency, --max-threads, Parallelism
#   BENCH_PROFILE=1                  then one more crawler run with --cpuprofile
#   BENCH_CRAWLER_FLAGS=             more `crawler crawl` flags, e.g. --tokens=false
# Arguments are passed on to the runner (bin/bench-run -h lists them):
# -synth 100000, for one, crawls bench/serve's synthetic site of 100,000
# pages instead of the documentation.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
eval "$(bench/inputs.sh)"

$GO build -trimpath -o bin/crawler ./cmd/crawler
$GO build -trimpath -o bin/bench-serve ./bench/serve
$GO build -trimpath -o bin/bench-run ./bench/run
(cd bench/colly && $GO build -trimpath -o ../../bin/bench-colly .)

profile=()
[ "${BENCH_PROFILE:-0}" = 1 ] && profile=(-profile)

echo "inputs: python3.11-doc $DOC_VERSION, wget2 $WGET2_VERSION; $($GO version)" >&2
exec bin/bench-run -root "$DOC_ROOT" -wget2 "$WGET2" -wget2-lib "$WGET2_LD_LIBRARY_PATH" \
	-runs "${BENCH_RUNS:-5}" -tools "${BENCH_TOOLS:-crawler,crawler-recrawl,wget2,colly,wget2-serial}" \
	-concurrency "${BENCH_CONCURRENCY:-8}" -crawler-flags "${BENCH_CRAWLER_FLAGS:-}" -inputs "python3.11-doc $DOC_VERSION, wget2 $WGET2_VERSION" \
	"${profile[@]}" "$@"
