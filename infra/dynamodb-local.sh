#!/usr/bin/env bash
# DynamoDB Local (AWS's own emulator, Java) on 127.0.0.1: the reference for
# DynamoDB semantics in the adapter tests.
#   infra/dynamodb-local.sh install|start|stop|health|endpoint
# Installs into .local-aws/dynamodb-local (ignored) from Maven Central,
# pinned by infra/dynamodb-local.pom.xml; logs to .local-aws/logs/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dir="${LOCAL_AWS_DIR:-$root/.local-aws}"
lib="$dir/dynamodb-local"
port="${DYNAMODB_LOCAL_PORT:-8000}"
pidfile="$dir/dynamodb-local-$port.pid"
log="$dir/logs/dynamodb-local-$port.log"

need() { command -v "$1" >/dev/null || { echo "dynamodb-local: '$1' is missing: $2" >&2; exit 1; }; }

install() {
	if [ -f "$lib/.installed" ] && cmp -s "$here/dynamodb-local.pom.xml" "$lib/.installed"; then return; fi
	need java "install a JDK 17 or newer"
	need mvn "install Apache Maven"
	rm -rf "$lib" && mkdir -p "$lib"
	echo "dynamodb-local: downloading from Maven Central into $lib"
	# Maven's own output (and the colour codes it writes even in batch
	# mode) goes to a log, shown only if the download fails.
	if ! mvn -q -B -Dstyle.color=never -f "$here/dynamodb-local.pom.xml" dependency:copy-dependencies \
		-DoutputDirectory="$lib" >"$lib.mvn.log" 2>&1; then
		cat "$lib.mvn.log" >&2
		echo "dynamodb-local: the download from Maven Central failed (log above, kept in $lib.mvn.log)" >&2
		exit 1
	fi
	cp "$here/dynamodb-local.pom.xml" "$lib/.installed"
}

health() { curl -s -o /dev/null -m 2 -X POST "http://127.0.0.1:$port/" ; }

start() {
	install
	if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null && health; then return; fi
	if health || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "dynamodb-local: port $port is taken by another process; set DYNAMODB_LOCAL_PORT" >&2; exit 1
	fi
	mkdir -p "$dir/logs"
	nohup java -Djava.library.path="$lib" -cp "$lib/*" software.amazon.dynamodb.services.local.main.ServerRunner \
		-inMemory -port "$port" >"$log" 2>&1 &
	echo $! >"$pidfile"
	for _ in $(seq 1 100); do
		if health; then echo "dynamodb-local: ready on http://127.0.0.1:$port"; return; fi
		kill -0 "$(cat "$pidfile")" 2>/dev/null || { echo "dynamodb-local: failed to start, see $log" >&2; tail -20 "$log" >&2; exit 1; }
		sleep 0.2
	done
	echo "dynamodb-local: not ready after 20s, see $log" >&2; exit 1
}

stop() {
	if [ -f "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; rm -f "$pidfile"; fi
}

case "${1:-}" in
install) install ;;
start) start ;;
stop) stop ;;
health) health && echo "dynamodb-local: up on $port" || { echo "dynamodb-local: down" >&2; exit 1; } ;;
endpoint) echo "http://127.0.0.1:$port" ;;
*) echo "usage: $0 install|start|stop|health|endpoint" >&2; exit 2 ;;
esac
