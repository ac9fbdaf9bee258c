#!/usr/bin/env bash
# Runs a command with the local AWS emulators the adapter tests use:
# DynamoDB Local (the reference for DynamoDB) and ministack (SQS, S3),
# both on 127.0.0.1, installed on first use into .local-aws/ (ignored).
# The command sees CRAWLER_TEST_DYNAMODB and CRAWLER_TEST_AWS; emulators
# this script started are stopped when it ends.
#   infra/with-emulators.sh go test ./...
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export DYNAMODB_LOCAL_PORT="${DYNAMODB_LOCAL_PORT:-18000}"
export MINISTACK_PORT="${MINISTACK_PORT:-14566}"
started=()
cleanup() { for s in "${started[@]}"; do "$here/$s" stop || true; done; }
trap cleanup EXIT
if ! "$here/dynamodb-local.sh" health >/dev/null 2>&1; then
	"$here/dynamodb-local.sh" start
	started+=(dynamodb-local.sh)
fi
if ! "$here/ministack.sh" health >/dev/null 2>&1; then
	"$here/ministack.sh" start
	started+=(ministack.sh)
fi
export CRAWLER_TEST_DYNAMODB="http://127.0.0.1:$DYNAMODB_LOCAL_PORT"
export CRAWLER_TEST_AWS="http://127.0.0.1:$MINISTACK_PORT"
"$@"
