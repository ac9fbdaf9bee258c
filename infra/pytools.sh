#!/usr/bin/env bash
# Python tools the tests check our output with (infra/pytools-requirements.txt),
# pinned, in a virtualenv of their own.
#   infra/pytools.sh install   install into .local-aws/pytools-venv (ignored)
#   infra/pytools.sh bin       install, then print the venv's bin directory
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dir="${LOCAL_AWS_DIR:-$root/.local-aws}"
venv="$dir/pytools-venv"
req="$here/pytools-requirements.txt"

install() {
	if [ -x "$venv/bin/python" ] && [ -f "$venv/.installed" ] && cmp -s "$req" "$venv/.installed"; then return; fi
	command -v python3 >/dev/null || { echo "pytools: python3 is missing: install Python 3.9 or newer" >&2; exit 1; }
	rm -rf "$venv"
	mkdir -p "$dir"
	echo "pytools: installing $(grep -v '^#' "$req" | tr '\n' ' ')into $venv" >&2
	python3 -m venv "$venv"
	"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
	cp "$req" "$venv/.installed"
}

case "${1:-}" in
install) install ;;
bin) install && echo "$venv/bin" ;;
*) echo "usage: $0 install | bin" >&2; exit 2 ;;
esac
