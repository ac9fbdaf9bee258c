#!/usr/bin/env bash
# ministack (a LocalStack-compatible AWS emulator in Python, no Docker) on
# 127.0.0.1: SQS and S3 for the adapter tests, later the SAM stack.
#   infra/ministack.sh install|start|stop|health|endpoint
# Installs into .local-aws/ministack-venv (ignored) from PyPI, pinned by
# infra/ministack-requirements.txt; logs to .local-aws/logs/.
#
# Verified (ministack 1.5.33 with aws-sam-translator 1.115.0, Python 3.11):
#   - env names, read in ministack/app.py: GATEWAY_PORT (port, default
#     4566; EDGE_PORT is an alias), BIND_HOST (listen address, default
#     0.0.0.0), IOT_MTLS_ENABLED=0 (skips the MQTT/TLS listener on 8883),
#     SFTP_ENABLED=0, S3_DATA_DIR and STATE_DIR (scratch dirs, /tmp by
#     default; kept under .local-aws here). The `ministack` entry point
#     probes the port itself and refuses to start when it is taken.
#   - /_ministack/health answers 200 with JSON once the gateway is up.
#   - exercised by the shared/aws/sqsq and shared/aws/s3blob tests, all like AWS:
#     SQS CreateQueue (VisibilityTimeout), SendMessage with String message
#     attributes, SendMessageBatch with DelaySeconds, ReceiveMessage
#     (ApproximateReceiveCount, MessageAttributeNames All, long poll),
#     redelivery after the visibility timeout, DeleteMessageBatch (a bad
#     receipt handle fails its entry, SenderFault), ChangeMessageVisibility,
#     GetQueueAttributes (visible, not visible, delayed), DeleteQueue,
#     NonExistentQueue; the SDK's MD5 checks of bodies and attributes pass.
#     S3 CreateBucket, PutObject (SSE AES256, content type), GetObject
#     (NoSuchKey, NoSuchBucket), HeadObject (404 when missing),
#     ListObjectsV2, DeleteObject, DeleteBucket.
#   - unlike AWS: HeadObject reports ServerSideEncryption only for objects
#     put with it (AWS reports AES256 for every object since 2023). SQS
#     limits are AWS's current 1 MiB per message and per batch (the
#     adapter keeps to 256 KiB), so only the adapter's own counts show
#     that it splits batches by size.
#   - starts in under a second once installed; the first install takes
#     about 15 s.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dir="${LOCAL_AWS_DIR:-$root/.local-aws}"
venv="$dir/ministack-venv"
port="${MINISTACK_PORT:-4566}"
pidfile="$dir/ministack-$port.pid"
log="$dir/logs/ministack-$port.log"
reqs="$here/ministack-requirements.txt"

need() { command -v "$1" >/dev/null || { echo "ministack: '$1' is missing: $2" >&2; exit 1; }; }

install() {
	if [ -f "$venv/.installed" ] && cmp -s "$reqs" "$venv/.installed"; then return; fi
	need python3 "install Python 3.10 or newer (with the venv module)"
	python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
		{ echo "ministack: needs Python 3.10 or newer, python3 is $(python3 -V 2>&1)" >&2; exit 1; }
	rm -rf "$venv"
	echo "ministack: installing from PyPI into $venv"
	python3 -m venv "$venv" || { echo "ministack: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
	"$venv/bin/pip" install -q --disable-pip-version-check -r "$reqs"
	cp "$reqs" "$venv/.installed"
}

health() { curl -sf -o /dev/null -m 2 "http://127.0.0.1:$port/_ministack/health"; }

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
	install
	if running && health; then return; fi
	if health || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "ministack: port $port is taken by another process; set MINISTACK_PORT" >&2; exit 1
	fi
	mkdir -p "$dir/logs" "$dir/ministack-data/$port/s3" "$dir/ministack-data/$port/state"
	# AWS_ENDPOINT_URL: ministack hands it to the functions it runs
	# (lambda_svc._provided_worker_env), so that they call back to it and
	# not to AWS. Without it a deployed function's SDK dials amazonaws.com.
	AWS_ENDPOINT_URL="http://127.0.0.1:$port" \
	BIND_HOST=127.0.0.1 GATEWAY_PORT="$port" IOT_MTLS_ENABLED=0 SFTP_ENABLED=0 \
		S3_DATA_DIR="$dir/ministack-data/$port/s3" STATE_DIR="$dir/ministack-data/$port/state" \
		nohup "$venv/bin/ministack" >"$log" 2>&1 &
	echo $! >"$pidfile"
	for _ in $(seq 1 150); do
		if health; then echo "ministack: ready on http://127.0.0.1:$port"; return; fi
		running || { echo "ministack: failed to start, see $log" >&2; tail -20 "$log" >&2; rm -f "$pidfile"; exit 1; }
		sleep 0.2
	done
	echo "ministack: not ready after 30s, see $log" >&2; exit 1
}

stop() {
	if [ -f "$pidfile" ]; then
		pid="$(cat "$pidfile")"
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		rm -f "$pidfile"
	fi
}

case "${1:-}" in
install) install ;;
start) start ;;
stop) stop ;;
health) health && echo "ministack: up on $port" || { echo "ministack: down" >&2; exit 1; } ;;
endpoint) echo "http://127.0.0.1:$port" ;;
*) echo "usage: $0 install|start|stop|health|endpoint" >&2; exit 2 ;;
esac
