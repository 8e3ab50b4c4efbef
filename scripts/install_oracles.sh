#!/usr/bin/env bash
# Install the pyserq reference wheels used by the differential tests
# (tests/oracle.py), one virtualenv per version:
#
#   DIR/pyserq-0.1.3/bin/python   flat "seed" dialect (run { … } block)
#   DIR/pyserq-0.1.4/bin/python   fn main, std/args, cost(…)
#   DIR/pyserq-0.1.5/bin/python   fn main, `if`; the random streams of Part 07
#
# Usage: scripts/install_oracles.sh [DIR]      (default: <repo>/.oracle)
#        eval "$(scripts/install_oracles.sh)"  to export the variables
#
# Prints one `export SERQ_ORACLE_01X=DIR/pyserq-0.1.X/bin/python` line per
# installed version on stdout; progress and warnings go to stderr.
# tests/oracle.py also finds DIR=<repo>/.oracle without the exports.
#
# Quiet, idempotent (a venv that already imports the right version is left
# alone), and soft: when a venv cannot be made or PyPI cannot be reached it
# prints a warning, skips that version and still exits 0, so the oracle
# tests are merely skipped. Environment: PYTHON (interpreter used to create
# the venvs, default python3), ORACLE_VERSIONS (default "0.1.3 0.1.4 0.1.5").

set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
dir="${1:-$repo/.oracle}"
python="${PYTHON:-python3}"
versions="${ORACLE_VERSIONS:-0.1.3 0.1.4 0.1.5}"

warn() { printf 'install_oracles: warning: %s\n' "$*" >&2; }

if ! command -v "$python" >/dev/null 2>&1; then
  warn "no interpreter '$python'; no oracle installed"
  exit 0
fi
if ! mkdir -p "$dir" 2>/dev/null; then
  warn "cannot create $dir; no oracle installed"
  exit 0
fi
dir="$(cd "$dir" && pwd)"

has_version() { # python version -> 0 if python imports pyserq at version
  [ -x "$1" ] || return 1
  local got
  got="$("$1" -c 'import pyserq, sys; sys.stdout.write(pyserq.__version__)' 2>/dev/null)" || return 1
  [ "$got" = "$2" ]
}

for v in $versions; do
  tag="${v//./}"
  venv="$dir/pyserq-$v"
  py="$venv/bin/python"
  if ! has_version "$py" "$v"; then
    if [ ! -x "$py" ]; then
      rm -rf "$venv"
      if ! "$python" -m venv "$venv" >/dev/null 2>&1; then
        warn "cannot create a virtualenv at $venv (is the venv module installed?); skipping pyserq $v"
        rm -rf "$venv"
        continue
      fi
    fi
    if ! "$py" -m pip install --quiet --disable-pip-version-check --no-input \
         --timeout 30 --retries 2 "pyserq==$v" >/dev/null 2>"$venv/install.log"; then
      warn "pip could not install pyserq==$v (PyPI unreachable?); see $venv/install.log; skipping"
      continue
    fi
    if ! has_version "$py" "$v"; then
      warn "pyserq $v installed into $venv but does not import; skipping"
      continue
    fi
  fi
  printf 'export SERQ_ORACLE_%s=%s\n' "$tag" "$py"
done
exit 0
