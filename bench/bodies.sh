#!/usr/bin/env bash
# bodies.sh: the crawler's peak memory on one large page. Writes pages of
# BODIES_MB (1,10,50) MB of HTML (paragraphs of text, each with a link
# among 500 targets) into .local-bench/bodies/, serves them with
# bench/serve, crawls each with --max-resource-size 64 MiB, one page
# alone and then eight at once from eight loopback hosts, and prints the
# wall time and peak RSS (/usr/bin/time) of each crawl. BODIES_PROFILES=DIR
# also writes each crawl's heap profile at its peak into DIR (the
# crawler's hidden --heapprofile; go tool pprof -sample_index=inuse_space).
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
$GO build -trimpath -o bin/crawler ./cmd/crawler
$GO build -trimpath -o bin/bench-serve ./bench/serve

dir=.local-bench/bodies
mkdir -p "$dir"
sizes=${BODIES_MB:-1,10,50}
for mb in ${sizes//,/ }; do
	[ -s "$dir/big$mb.html" ] && continue
	awk -v mb="$mb" 'BEGIN {
		printf "<!doctype html><html><head><title>%d MB</title></head><body>\n", mb
		for (size = 0; size < mb * 1048576; i++) {
			line = sprintf("<p>Lorem ipsum dolor sit amet, <a href=\"/p%d.html\">link</a> consectetur adipiscing elit sed do eiusmod tempor.</p>\n", i % 500)
			printf "%s", line
			size += length(line)
		}
		print "</body></html>"
	}' >"$dir/big$mb.html"
	printf '<html><body><a href="big%s.html">big</a></body></html>\n' "$mb" >"$dir/index$mb.html"
done

# One server per loopback address 127.0.0.1-8: the crawler fetches one
# URL at a time per host, so eight large pages are fetched at once only
# from eight hosts.
port=$((20000 + RANDOM % 20000))
servers=()
for k in 1 2 3 4 5 6 7 8; do
	bin/bench-serve -root "$dir" -addr "127.0.0.$k:$port" -stats /dev/null >/dev/null 2>&1 &
	servers+=($!)
done
trap 'kill ${servers[*]} 2>/dev/null' EXIT
sleep 0.5

# crawl LABEL SEED...: one crawl at --concurrency 8, its wall time and
# peak RSS in a table row.
crawl() {
	local label=$1 data prof=()
	shift
	data=$(mktemp -d)
	if [ -n "${BODIES_PROFILES:-}" ]; then
		mkdir -p "$BODIES_PROFILES"
		prof=(--heapprofile "$BODIES_PROFILES/$(echo "$label" | tr -c 'a-zA-Z0-9\n' '-').prof")
	fi
	/usr/bin/time -f "%e %M" -o "$data/time" bin/crawler crawl --data "$data/crawl" --delay 0 --quiet --allow-private \
		--concurrency 8 --max-resource-size 67108864 "${prof[@]}" "$@" >/dev/null 2>&1
	read -r wall kb <"$data/time"
	echo "| $label | $wall | $((kb / 1024)) |"
	rm -rf "$data"
}

echo "| bodies | wall s | peak RSS MB |"
echo "|---|---:|---:|"
crawl "none (one small page: the base)" "http://127.0.0.1:$port/index1.html" --max-depth 0
for mb in ${sizes//,/ }; do
	crawl "1 of $mb MB" "http://127.0.0.1:$port/index$mb.html"
done
for mb in ${sizes//,/ }; do
	seeds=()
	for k in 1 2 3 4 5 6 7 8; do seeds+=("http://127.0.0.$k:$port/big$mb.html"); done
	crawl "8 of $mb MB at once (8 hosts)" "${seeds[@]}"
done
