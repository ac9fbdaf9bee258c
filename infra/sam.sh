#!/usr/bin/env bash
# The AWS SAM CLI, pinned, in a virtualenv of its own.
#   infra/sam.sh install        install into .local-aws/sam-venv (ignored)
#   infra/sam.sh run ARGS...    run `sam ARGS...` (e.g. `run validate --lint`)
# Versions are pinned by infra/sam-requirements.txt. Telemetry is off.
# Without Docker, `sam build` (makefile build method), `sam validate --lint`
# and `sam local generate-event` work; `sam local invoke` does not.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dir="${LOCAL_AWS_DIR:-$root/.local-aws}"
venv="$dir/sam-venv"
req="$here/sam-requirements.txt"
export SAM_CLI_TELEMETRY=0
# shellcheck source=venv.sh
. "$here/venv.sh"

install() { venv_install sam "$venv" "$req" "$venv/bin/sam"; }

case "${1:-}" in
install) install ;;
run)
	shift
	install
	exec "$venv/bin/sam" "$@"
	;;
*) echo "usage: $0 install | run SAM-ARGS..." >&2; exit 2 ;;
esac
