#!/usr/bin/env bash
# inputs.sh: the benchmark's inputs, from Debian's packages, unpacked
# into .local-bench/root (cached: a second run downloads nothing).
#
#   python3.11-doc  the Python 3.11 documentation as HTML (526 pages, ~51 MB),
#                   plus libjs-jquery and libjs-underscore, which two of its
#                   files are symlinks to
#   sphinx-doc      Sphinx's documentation (137 HTML pages): make eval's
#                   second tree, so that search is not tuned to one site
#   postgresql-doc-15  PostgreSQL's manual (1,169 short HTML pages, DocBook,
#                   no <html lang>): a tree of another generator, for the
#                   crawl (per-page costs) and for make eval
#   python-flask-doc   Flask's documentation (75 HTML pages): make eval's
#                   fourth tree
#   python-django-doc, python-sqlalchemy-doc, git-doc  Django's (692 HTML
#                   pages), SQLAlchemy's (220) and Git's (the manual pages,
#                   218 reachable): make eval's fifth to seventh trees, with
#                   queries written by someone who had not seen the ranking
#   openjdk-17-doc  the Java SE 17 API documentation (javadoc, 10,140 HTML
#                   pages, 256 MB, pages up to 6 MB with thousands of links):
#                   make eval's eighth tree, and a large tree for the crawl
#   wget2           the reference crawler, with libwget0 and whichever of
#                   their declared libraries the machine lacks
#
# Why `apt-get download` + `dpkg -x` rather than `apt-get install`: it
# needs no root (only apt's package lists), changes nothing on the
# machine, pins nothing system-wide, and leaves the .deb files in
# .local-bench/debs as the cache. As root with empty package lists it
# runs `apt-get update` first; without root it asks you to.
#
# Prints the paths as shell assignments (DOC_ROOT=..., SPHINX_DOC_ROOT=...,
# PG_DOC_ROOT=..., FLASK_DOC_ROOT=..., DJANGO_DOC_ROOT=...,
# SQLALCHEMY_DOC_ROOT=..., GIT_DOC_ROOT=..., JDK_DOC_ROOT=..., WGET2=...,
# WGET2_LD_LIBRARY_PATH=...) for bench/run.sh to eval.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
dir=${BENCH_DIR:-$here/.local-bench}
root=$dir/root
debs=$dir/debs
doc=$root/usr/share/doc/python3.11/html
sphinxdoc=$root/usr/share/doc/sphinx-doc/html
pgdoc=$root/usr/share/doc/postgresql-doc-15/html
flaskdoc=$root/usr/share/doc/python-flask-doc/html
djangodoc=$root/usr/share/doc/python-django-doc/html
sqlalchemydoc=$root/usr/share/doc/python-sqlalchemy-doc/html
gitdoc=$root/usr/share/doc/git-doc
jdkdoc=$root/usr/share/doc/openjdk-17-jre-headless/api
wget2=$root/usr/bin/wget2
libpath=$root/usr/lib:$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu

say() { echo "bench/inputs: $*" >&2; }

ready() {
	[ -f "$doc/index.html" ] && [ -f "$sphinxdoc/index.html" ] && [ -f "$pgdoc/index.html" ] &&
		[ -f "$flaskdoc/index.html" ] && [ -f "$djangodoc/index.html" ] && [ -f "$sqlalchemydoc/index.html" ] &&
		[ -f "$gitdoc/index.html" ] && [ -f "$jdkdoc/index.html" ] && [ -x "$wget2" ] &&
		LD_LIBRARY_PATH=$libpath "$wget2" --version >/dev/null 2>&1
}

if ! ready; then
	command -v apt-get >/dev/null || { say "needs apt-get (Debian or Ubuntu)"; exit 1; }
	mkdir -p "$debs" "$root"
	pkgs=(python3.11-doc sphinx-doc postgresql-doc-15 python-flask-doc python-django-doc python-sqlalchemy-doc git-doc
		openjdk-17-doc libjs-jquery libjs-underscore wget2 libwget0)
	# wget2's and libwget0's declared libraries, where the machine lacks them.
	for p in libgpgme11 libassuan0 libgpg-error0 libpcre2-8-0 libgnutls30 libpsl5 libidn2-0 \
		libnghttp2-14 libbrotli1 zlib1g liblzma5 libbz2-1.0; do
		if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
			pkgs+=("$p")
		fi
	done
	missing=()
	for p in "${pkgs[@]}"; do
		compgen -G "$debs/${p}_*.deb" >/dev/null || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		say "downloading ${missing[*]}"
		if ! (cd "$debs" && apt-get download "${missing[@]}" >&2); then
			if [ "$(id -u)" = 0 ]; then
				say "apt-get download failed; running apt-get update and trying again"
				apt-get update >&2
				(cd "$debs" && apt-get download "${missing[@]}" >&2)
			else
				say "apt-get download failed: run 'sudo apt-get update' once, then again"
				exit 1
			fi
		fi
	fi
	for f in "$debs"/*.deb; do
		dpkg -x "$f" "$root"
	done
	if ! ready; then
		say "wget2 does not run from $root:"
		LD_LIBRARY_PATH=$libpath ldd "$wget2" | grep 'not found' >&2 || true
		exit 1
	fi
	say "unpacked into $root"
fi

echo "DOC_ROOT=$doc"
echo "SPHINX_DOC_ROOT=$sphinxdoc"
echo "PG_DOC_ROOT=$pgdoc"
echo "FLASK_DOC_ROOT=$flaskdoc"
echo "DJANGO_DOC_ROOT=$djangodoc"
echo "SQLALCHEMY_DOC_ROOT=$sqlalchemydoc"
echo "GIT_DOC_ROOT=$gitdoc"
echo "JDK_DOC_ROOT=$jdkdoc"
echo "WGET2=$wget2"
echo "WGET2_LD_LIBRARY_PATH=$libpath"
echo "DOC_VERSION=$(basename "$(ls "$debs"/python3.11-doc_*.deb)" .deb | sed 's/^python3.11-doc_//; s/_all$//')"
echo "WGET2_VERSION=$(LD_LIBRARY_PATH=$libpath "$wget2" --version 2>/dev/null | head -1 | awk '{print $3}')"
