# Sourced by the scripts that install pinned Python tools (sam.sh,
# pytools.sh) into virtualenvs of their own.

# venv_install NAME VENV REQUIREMENTS BIN installs REQUIREMENTS into a new
# VENV, unless BIN is there and the requirements installed last are these.
venv_install() {
	local name=$1 venv=$2 req=$3 bin=$4
	if [ -x "$bin" ] && [ -f "$venv/.installed" ] && cmp -s "$req" "$venv/.installed"; then return; fi
	command -v python3 >/dev/null || { echo "$name: 'python3' is missing: install Python 3.9 or newer" >&2; exit 1; }
	rm -rf "$venv"
	mkdir -p "$(dirname "$venv")"
	echo "$name: installing $(grep -v '^#' "$req" | tr '\n' ' ')into $venv" >&2
	python3 -m venv "$venv"
	"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
	cp "$req" "$venv/.installed"
}
