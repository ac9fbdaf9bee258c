#!/usr/bin/env bash
# The end-to-end test's stack: template.yaml built with the SAM CLI and
# deployed, unchanged, onto a local AWS endpoint, by default ministack on
# 127.0.0.1 (which runs the functions' bootstraps as host processes, from
# SQS event source mappings and EventBridge schedules, no Docker).
#   infra/e2e.sh up      start the endpoint (unless E2E_ENDPOINT is given), build, deploy
#   infra/e2e.sh check   crawl test sites through the deployed stack (go test ./shared/testkit/e2e)
#   infra/e2e.sh down    empty the bucket, delete the stack, stop what `up` started
#   infra/e2e.sh env     print the environment that points the CLI at the stack
#
# E2E_ENDPOINT=http://localhost:4566 uses an endpoint that is already
# running instead (LocalStack in Docker, say: README "Test against
# LocalStack"); then nothing is started or stopped here. E2E_STACK names
# the stack (crawler-e2e, samconfig.toml's e2e profile).
#
# The functions are built for the host's CPU (LAMBDA_GOARCH, Architecture
# parameter): the emulator runs them as host processes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dir="${LOCAL_AWS_DIR:-$root/.local-aws}"
port="${MINISTACK_PORT:-4566}"
stack="${E2E_STACK:-crawler-e2e}"
endpoint="${E2E_ENDPOINT:-http://127.0.0.1:$port}"

export AWS_ENDPOINT_URL="$endpoint"
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-test}" AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-test}"
export AWS_REGION="${AWS_REGION:-us-east-1}" AWS_DEFAULT_REGION="${AWS_REGION:-us-east-1}"
export SAM_CLI_TELEMETRY=0

case "$(uname -m)" in
x86_64 | amd64) goarch=amd64 arch=x86_64 ;;
aarch64 | arm64) goarch=arm64 arch=arm64 ;;
*) echo "e2e: no Lambda architecture for a $(uname -m) host" >&2; exit 1 ;;
esac

# The e2e stack's settings: samconfig.toml's e2e profile (RetainData=false,
# AllowPrivateNetworks=true) and, for a crawl that settles in seconds and a
# recrawl within minutes: a 100 ms politeness delay, a recrawl period of
# 2 minutes and a schedule every minute.
params="RetainData=false AllowPrivateNetworks=true Architecture=$arch DefaultDelay=100ms RequestTimeout=5s RecrawlPeriod=${E2E_RECRAWL_PERIOD:-2m} RecrawlScheduleRate=\"rate(1 minute)\" LogLevel=INFO"

sam() { "$here/sam.sh" run "$@"; }

# boto3 comes with the SAM CLI; it does the few control-plane calls below.
py() { "$here/sam.sh" install && "$dir/sam-venv/bin/python" - "$@"; }

fix_mappings() {
	# ministack 1.5.33 keeps an event source mapping's ScalingConfig as
	# CloudFormation passed it, so MaximumConcurrency: !Ref SomeNumber stays
	# the string "10" and its SQS poller fails every second comparing it
	# with an int ("'>=' not supported between instances of 'int' and
	# 'str'"): no function ever runs. CloudFormation on AWS converts it.
	# Setting the same values again through the Lambda API stores numbers.
	py "$stack" <<'EOF'
import sys, boto3
fns = {o["OutputValue"] for o in boto3.client("cloudformation").describe_stacks(StackName=sys.argv[1])["Stacks"][0]["Outputs"]
       if o["OutputKey"].endswith("FunctionName")}
lam = boto3.client("lambda")
for m in lam.list_event_source_mappings()["EventSourceMappings"]:
    sc = m.get("ScalingConfig") or {}
    if m["FunctionArn"].split(":")[-1] in fns and "MaximumConcurrency" in sc:
        lam.update_event_source_mapping(UUID=m["UUID"], ScalingConfig={"MaximumConcurrency": int(sc["MaximumConcurrency"])})
EOF
}

up() {
	if [ -z "${E2E_ENDPOINT:-}" ]; then
		MINISTACK_PORT="$port" "$here/ministack.sh" start
	fi
	(cd "$root" && LAMBDA_GOARCH="$goarch" sam build --config-env e2e --parameter-overrides "Architecture=$arch")
	(cd "$root" && sam deploy --config-env e2e --stack-name "$stack" --no-progressbar --parameter-overrides "$params")
	fix_mappings
	echo "e2e: stack $stack deployed on $endpoint"
}

down() {
	# RetainData=false deletes the tables and the bucket with the stack, but
	# CloudFormation refuses to delete a bucket that is not empty.
	py "$stack" <<'EOF' || true
import sys, boto3
try:
    outs = boto3.client("cloudformation").describe_stacks(StackName=sys.argv[1])["Stacks"][0]["Outputs"]
except Exception as e:
    print(f"e2e: no stack {sys.argv[1]} to empty ({e})"); sys.exit(0)
bucket = next(o["OutputValue"] for o in outs if o["OutputKey"] == "BodiesBucketName")
b = boto3.resource("s3").Bucket(bucket)
n = sum(1 for _ in b.objects.all())
b.objects.all().delete()
print(f"e2e: emptied bucket {bucket} ({n} objects)")
EOF
	(cd "$root" && sam delete --config-env e2e --stack-name "$stack" --no-prompts) || true
	if [ -z "${E2E_ENDPOINT:-}" ]; then
		MINISTACK_PORT="$port" "$here/ministack.sh" stop
	fi
}

case "${1:-}" in
up) up ;;
check)
	# The functions' log lines of each phase land in $logs, and
	# bench/cost prices them: what a million pages would cost on AWS at
	# list prices, from the requests this run made (BENCHMARKS.md).
	cd "$root"
	logs="$dir/e2e-logs"
	rm -rf "$logs"
	# AWS CLI v1 (infra/pytools.sh) runs the README's recipes.
	CRAWLER_TEST_PYTOOLS=$(infra/pytools.sh bin) CRAWLER_E2E_LOGS="$logs" CRAWLER_E2E_STACK="$stack" \
		go test -count=1 -v -timeout 20m ./shared/testkit/e2e
	for phase in fresh recrawl; do
		if [ -s "$logs/$phase.jsonl" ]; then
			echo "== cost of the $phase crawl, from $logs/$phase.jsonl"
			go run ./bench/cost "$logs/$phase.jsonl" || true
		fi
	done
	;;
down) down ;;
env)
	echo "export AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY AWS_REGION=$AWS_REGION CRAWLER_STACK=$stack"
	;;
*) echo "usage: $0 up|check|down|env" >&2; exit 2 ;;
esac
