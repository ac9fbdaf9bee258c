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

need() { command -v "$1" >/dev/null || { echo "sam: '$1' is missing: $2" >&2; exit 1; }; }

install() {
	if [ -x "$venv/bin/sam" ] && [ -f "$venv/.installed" ] && cmp -s "$req" "$venv/.installed"; then return; fi
	need python3 "install Python 3.9 or newer"
	rm -rf "$venv"
	mkdir -p "$dir"
	echo "sam: installing $(grep -v '^#' "$req" | tr '\n' ' ')into $venv" >&2
	python3 -m venv "$venv"
	"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
	cp "$req" "$venv/.installed"
}

case "${1:-}" in
install) install ;;
run)
	shift
	install
	exec "$venv/bin/sam" "$@"
	;;
*) echo "usage: $0 install | run SAM-ARGS..." >&2; exit 2 ;;
esac
