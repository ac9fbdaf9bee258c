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
# shellcheck source=venv.sh
. "$here/venv.sh"

install() { venv_install pytools "$venv" "$req" "$venv/bin/python"; }

case "${1:-}" in
install) install ;;
bin) install && echo "$venv/bin" ;;
*) echo "usage: $0 install | bin" >&2; exit 2 ;;
esac
