#!/usr/bin/env bash
# aws-cli.sh: the README's recipes for a deployed stack with the AWS CLI
# alone, written to work with AWS CLI v1 and v2 alike (make e2e runs them
# with v1 against the local stack):
#
#   events/aws-cli.sh enqueue STACK URL [EVENT.json...]  send a bare URL, then each event file
#   events/aws-cli.sh logs STACK FUNCTION [MINUTES]       a function's log lines of the last MINUTES (10)
#   events/aws-cli.sh alarms STACK                        the stack's alarms and their states
#
# Why it looks the way it does:
# - the region is given with --region: v1 reads AWS_DEFAULT_REGION (not
#   AWS_REGION) and has no default;
# - an emulator's address is given with --endpoint-url: v1 ignores
#   AWS_ENDPOINT_URL;
# - message bodies are read from files (file://): given on the command
#   line, a body that is a URL is fetched by v1 (cli_follow_urlparam),
#   which would send the page's HTML instead of the URL;
# - `aws logs tail` is v2 only: filter-log-events does the same once.
set -euo pipefail

region="${AWS_REGION:-${AWS_DEFAULT_REGION:-}}"
if [ -z "$region" ]; then
	echo "aws-cli.sh: set AWS_REGION (or AWS_DEFAULT_REGION) to the stack's region" >&2
	exit 2
fi
awsc() {
	if [ -n "${AWS_ENDPOINT_URL:-}" ]; then
		aws --region "$region" --endpoint-url "$AWS_ENDPOINT_URL" "$@"
	else
		aws --region "$region" "$@"
	fi
}
output() { # output STACK KEY: one of the stack's outputs
	awsc cloudformation describe-stacks --stack-name "$1" \
		--query "Stacks[0].Outputs[?OutputKey=='$2'].OutputValue" --output text
}

case "${1:-}" in
enqueue)
	[ $# -ge 3 ] || { echo "usage: $0 enqueue STACK URL [EVENT.json...]" >&2; exit 2; }
	queue=$(output "$2" EnqueueQueueUrl)
	body=$(mktemp)
	trap 'rm -f "$body"' EXIT
	printf '%s' "$3" >"$body"
	awsc sqs send-message --queue-url "$queue" --message-body "file://$body" --query MessageId --output text
	for f in "${@:4}"; do
		awsc sqs send-message --queue-url "$queue" --message-body "file://$f" --query MessageId --output text
	done
	;;
logs)
	[ $# -ge 3 ] || { echo "usage: $0 logs STACK FUNCTION [MINUTES]" >&2; exit 2; }
	since=$(( ($(date +%s) - ${4:-10} * 60) * 1000 ))
	awsc logs filter-log-events --log-group-name "/aws/lambda/$2/$3" --start-time "$since" \
		--query 'events[].message' --output text
	;;
alarms)
	[ $# -ge 2 ] || { echo "usage: $0 alarms STACK" >&2; exit 2; }
	awsc cloudwatch describe-alarms --alarm-name-prefix "$2-" \
		--query 'MetricAlarms[].[AlarmName,StateValue]' --output text
	;;
*)
	echo "usage: $0 enqueue|logs|alarms STACK ..." >&2
	exit 2
	;;
esac
