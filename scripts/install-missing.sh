#!/usr/bin/env bash
# install-missing.sh WHO PACKAGE...: installs those of the Debian packages that are not installed yet (apt-get,
# through sudo when not root), saying which under WHO's name; does nothing when all are. The README's commands use it
# for what they need (setup.sh: the build; python-tests.sh: venv, clang, Xvfb and Qt's libraries for napari).
set -euo pipefail
who=$1
shift
missing=()
for p in "$@"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
echo "$who: installing ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
