#!/usr/bin/env bash
# hosts.sh: a crawl of several sites at a politeness delay. Serves
# HOSTS_N (4) synthetic sites of HOSTS_PAGES (30) pages each with
# bench/serve, one per loopback port, crawls them in one run with
# --delay HOSTS_DELAY (200ms) and --concurrency HOSTS_CONCURRENCY (4),
# HOSTS_RUNS (3) times, and prints each run's wall time and, per host,
# the seconds into the crawl of its first and last request
# (crawl_log). The least a crawl can take is about the pages of one
# site times the delay: the sites are crawled side by side. CRAWLER=BIN
# crawls with another binary.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
$GO build -trimpath -o bin/crawler ./cmd/crawler
$GO build -trimpath -o bin/bench-serve ./bench/serve
$GO build -trimpath -o bin/bench-hosts ./bench/hosts
crawler=${CRAWLER:-bin/crawler}
n=${HOSTS_N:-4}
pages=${HOSTS_PAGES:-30}
delay=${HOSTS_DELAY:-200ms}
conc=${HOSTS_CONCURRENCY:-4}

port=$((20000 + RANDOM % 20000))
servers=()
seeds=()
for k in $(seq 1 "$n"); do
	bin/bench-serve -synth "$pages" -seed "$k" -addr "127.0.0.1:$((port + k))" -stats /dev/null >/dev/null 2>&1 &
	servers+=($!)
	seeds+=("http://127.0.0.1:$((port + k))/index.html")
done
trap 'kill ${servers[*]} 2>/dev/null' EXIT
sleep 0.5

echo "$n sites of $pages pages, --delay $delay --concurrency $conc, $crawler"
for r in $(seq 1 "${HOSTS_RUNS:-3}"); do
	data=$(mktemp -d)
	/usr/bin/time -f "%e" -o "$data/time" "$crawler" crawl --data "$data/crawl" --delay "$delay" \
		--concurrency "$conc" --quiet --allow-private "${seeds[@]}" >/dev/null 2>&1
	echo "run $r: $(cat "$data/time") s; per host, first and last request (s into the crawl):"
	bin/bench-hosts "$data/crawl/crawl.db"
	rm -rf "$data"
done
