#!/usr/bin/env bash
# LocalStack Community 4.14.0 (the real one; later releases need an account
# token) on 127.0.0.1 as a host process, without Docker: a second opinion on
# SQS, S3, DynamoDB, EventBridge and CloudFormation with the SAM transform.
#   infra/localstack.sh install|start|stop|health|endpoint
# Installs into .local-aws/localstack-venv (ignored) from PyPI, pinned by
# infra/localstack-requirements.txt; keeps its files under
# .local-aws/localstack-data/PORT and logs to .local-aws/logs/. Port from
# LOCALSTACK_PORT (default 4566). Needs Python 3.12+ (see pick_python).
#
# Verified (localstack-core 4.14.0 on Python 3.13.0, 2 cores):
#   - env, read in localstack/config.py: OVERRIDE_IN_DOCKER=0 (in_docker()
#     otherwise says yes because /.dockerenv exists, and picks container
#     paths under /var/lib/localstack); GATEWAY_LISTEN host:port;
#     FILESYSTEM_ROOT (Directories.for_host: usr/lib/localstack,
#     var/lib/localstack, tmp/localstack under it); DNS_ADDRESS=0 (in
#     FALSE_STRINGS: use_custom_dns() is false, no DNS server on :53);
#     SKIP_SSL_CERT_DOWNLOAD=1 (utils/ssl.py: no certificate download, a
#     self-signed one is made); DISABLE_EVENTS=1 (no analytics calls).
#     GATEWAY_SERVER=hypercorn: the default twisted server ignores the host
#     of GATEWAY_LISTEN for IPv4 and listens on 0.0.0.0 (TCP4ServerEndpoint
#     without interface=); hypercorn binds 127.0.0.1. LOCALSTACK_HOST and
#     SQS_ENDPOINT_STRATEGY=off make queue URLs
#     http://127.0.0.1:PORT/000000000000/NAME (the default "standard" gives
#     sqs.us-east-1.127.0.0.1:PORT, which does not resolve).
#     DYNAMODB_IN_MEMORY=1: DynamoDB Local runs with -inMemory.
#   - the code uses Python 3.12 syntax (class C[T]) although the package
#     says >=3.10: on 3.11 every SQS and S3 call fails with "invalid syntax".
#   - /_localstack/health answers 200 once the gateway is up; start takes
#     1-2 s (services load on first use); install about 50 s from PyPI,
#     507 MB on disk.
#   - shared/aws/sqsq and shared/aws/s3blob tests pass (CRAWLER_TEST_AWS); the
#     shared/aws/dynamo tests pass against its DynamoDB (CRAWLER_TEST_DYNAMODB,
#     through dynamodb_shim below; about 4x slower than DynamoDB Local
#     alone). HeadObject reports ServerSideEncryption AES256 for every
#     object, as AWS does. MaximumMessageSize is AWS's current 1 MiB.
#     DeleteMessage with an out-of-date receipt handle succeeds, as AWS
#     documents (ministack 1.5.33 answers ReceiptHandleIsInvalid).
#   - EventBridge: a rate(1 minute) rule with an SQS target delivered a
#     "Scheduled Event" every 60 s (3 in 200 s).
#   - CloudFormation: `sam deploy` of template.yaml (SAM and
#     LanguageExtensions transforms) creates the bucket and its policy, the
#     four tables, the eight queues, the log groups and roles, then fails at
#     the first AWS::Lambda::Function and rolls back: Lambda downloads its
#     runtime init from GitHub and then needs Docker ("Docker not available
#     ... required to run Lambda functions"). Deleting the rolled-back stack
#     ends DELETE_FAILED: the failed function cannot be deleted ("Unable to
#     find version manager"); a restart clears it (nothing is persisted).
#     So: no Lambda, no event source mappings on the host.
#   - stop ends the whole process group (DynamoDB Local's JVM included).
#     That JVM listens on a random port on all interfaces (DynamoDB Local
#     has no bind-address option).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dir="${LOCAL_AWS_DIR:-$root/.local-aws}"
venv="$dir/localstack-venv"
port="${LOCALSTACK_PORT:-4566}"
pidfile="$dir/localstack-$port.pid"
log="$dir/logs/localstack-$port.log"
data="$dir/localstack-data/$port"
reqs="$here/localstack-requirements.txt"

need() { command -v "$1" >/dev/null || { echo "localstack: '$1' is missing: $2" >&2; exit 1; }; }

# pick_python prints a Python 3.12 or newer: LocalStack 4.14.0 declares
# >=3.10 but its code uses 3.12 syntax (class C[T]: ...), and its lockfile
# and Docker image are Python 3.13. Tries LOCALSTACK_PYTHON, python3.13,
# python3.12, python3, then pyenv's installed versions (not on PATH there
# unless selected).
pick_python() {
	local c
	for c in ${LOCALSTACK_PYTHON:-} python3.13 python3.12 python3 \
		"${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3; do
		if "$c" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
			command -v "$c"; return
		fi
	done
	return 1
}

install() {
	if [ -f "$venv/.installed" ] && cmp -s "$reqs" "$venv/.installed"; then return; fi
	local py
	py="$(pick_python)" || { echo "localstack: needs Python 3.12 or newer with the venv module (LocalStack 4.14.0 uses 3.12 syntax); set LOCALSTACK_PYTHON" >&2; exit 1; }
	rm -rf "$venv"
	mkdir -p "$dir"
	echo "localstack: installing localstack-core[runtime]==4.14.0 from PyPI with $("$py" -V 2>&1) into $venv (about 500 MB)"
	"$py" -m venv "$venv" || { echo "localstack: $py -m venv failed" >&2; exit 1; }
	"$venv/bin/pip" install -q --disable-pip-version-check -r "$reqs"
	cp "$reqs" "$venv/.installed"
}

# dynamodb_shim lets LocalStack's DynamoDB run on DynamoDB Local from
# infra/dynamodb-local.sh (Maven Central) instead of the zip and Java 21 it
# downloads on first use (unreachable here). LocalStack runs
#   java -javaagent:DIR/ddb-local-loader-0.1.jar -Djava.library.path=DIR/DynamoDBLocal_lib -jar DIR/DynamoDBLocal.jar
# with DIR = FILESYSTEM_ROOT/var/lib/localstack/lib/dynamodb-local/2 and
# skips both downloads when DIR/DynamoDBLocal.jar exists (java then comes
# from PATH). So DIR gets: DynamoDBLocal_lib, a link to the Maven jars and
# native libraries; DynamoDBLocal.jar, a manifest-only jar naming the main
# class and those jars; and a do-nothing agent in place of LocalStack's
# (which patches DynamoDB Local to allow more than 20 GSIs).
dynamodb_shim() {
	local shim="$venv/dynamodb-local-shim" lib="$dir/dynamodb-local"
	local target="$data/var/lib/localstack/lib/dynamodb-local/2"
	if [ ! -f "$shim/.installed" ] || ! cmp -s "$here/dynamodb-local.pom.xml" "$shim/.installed"; then
		if ! command -v java >/dev/null || ! command -v javac >/dev/null || ! command -v mvn >/dev/null; then
			echo "localstack: java, javac or mvn is missing: its DynamoDB (and CloudFormation tables) will not work" >&2
			return
		fi
		"$here/dynamodb-local.sh" install
		rm -rf "$shim" && mkdir -p "$shim/src"
		printf 'public final class NoopAgent { public static void premain(String a) {} }\n' >"$shim/src/NoopAgent.java"
		javac -d "$shim/src" "$shim/src/NoopAgent.java"
		ln -s "$lib" "$shim/DynamoDBLocal_lib"
		"$venv/bin/python" - "$shim" <<'PY'
import os, sys, zipfile
shim = sys.argv[1]
def manifest(fields):
    out = "Manifest-Version: 1.0\r\n"
    for k, v in fields:
        line = f"{k}: {v}".encode()
        out += line[:72].decode() + "\r\n"
        line = line[72:]
        while line:
            out += " " + line[:71].decode() + "\r\n"
            line = line[71:]
    return out + "\r\n"
jars = sorted(f for f in os.listdir(os.path.join(shim, "DynamoDBLocal_lib")) if f.endswith(".jar"))
with zipfile.ZipFile(os.path.join(shim, "DynamoDBLocal.jar"), "w") as z:
    z.writestr("META-INF/MANIFEST.MF", manifest([
        ("Main-Class", "software.amazon.dynamodb.services.local.main.ServerRunner"),
        ("Class-Path", " ".join("DynamoDBLocal_lib/" + j for j in jars))]))
with zipfile.ZipFile(os.path.join(shim, "ddb-local-loader-0.1.jar"), "w") as z:
    z.writestr("META-INF/MANIFEST.MF", manifest([("Premain-Class", "NoopAgent")]))
    z.write(os.path.join(shim, "src", "NoopAgent.class"), "NoopAgent.class")
PY
		cp "$here/dynamodb-local.pom.xml" "$shim/.installed"
	fi
	mkdir -p "$(dirname "$target")"
	ln -sfn "$shim" "$target"
}

health() { curl -sf -o /dev/null -m 2 "http://127.0.0.1:$port/_localstack/health"; }

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
	need curl "install curl (the health check uses it)"
	need setsid "install util-linux"
	install
	if running && health; then return; fi
	if health || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "localstack: port $port is taken by another process; set LOCALSTACK_PORT" >&2; exit 1
	fi
	mkdir -p "$dir/logs" "$data"
	dynamodb_shim
	# setsid: LocalStack starts helpers (DynamoDB Local's JVM among them);
	# its own process group lets stop end them with it.
	OVERRIDE_IN_DOCKER=0 GATEWAY_LISTEN="127.0.0.1:$port" LOCALSTACK_HOST="127.0.0.1:$port" \
		DNS_ADDRESS=0 SKIP_SSL_CERT_DOWNLOAD=1 DISABLE_EVENTS=1 GATEWAY_SERVER=hypercorn SQS_ENDPOINT_STRATEGY=off \
		DYNAMODB_IN_MEMORY=1 \
		FILESYSTEM_ROOT="$data" \
		setsid nohup "$venv/bin/python" -m localstack.runtime.main >"$log" 2>&1 </dev/null &
	echo $! >"$pidfile"
	for _ in $(seq 1 300); do
		if health; then echo "localstack: ready on http://127.0.0.1:$port"; return; fi
		running || { echo "localstack: failed to start, see $log" >&2; tail -20 "$log" >&2; rm -f "$pidfile"; exit 1; }
		sleep 0.2
	done
	echo "localstack: not ready after 60s, see $log" >&2; exit 1
}

stop() {
	if [ -f "$pidfile" ]; then
		pid="$(cat "$pidfile")"
		kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 -- "-$pid" 2>/dev/null || true
		rm -f "$pidfile"
	fi
}

case "${1:-}" in
install) install ;;
start) start ;;
stop) stop ;;
health) health && echo "localstack: up on $port" || { echo "localstack: down" >&2; exit 1; } ;;
endpoint) echo "http://127.0.0.1:$port" ;;
*) echo "usage: $0 install|start|stop|health|endpoint" >&2; exit 2 ;;
esac
