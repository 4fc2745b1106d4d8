#!/usr/bin/env bash
# Makes sure a Chromium for the console's browser tests is there, and prints its path. Playwright's
# own browser downloads are not reachable from our machines; Debian's chromium package is, so it is
# installed with apt-get when missing (as root, or with sudo). Where that cannot be done it says so
# loudly and fails: the browser tests never pass silently without a browser.
#
#   tools/ensure-chromium.sh                 install if needed, print the path
#   SIMLOCK_CHROMIUM=/path/to/chrome ...     use that browser instead
set -euo pipefail
if [ -n "${SIMLOCK_CHROMIUM:-}" ]; then
  [ -x "$SIMLOCK_CHROMIUM" ] || { echo "chromium: SIMLOCK_CHROMIUM=$SIMLOCK_CHROMIUM is not an executable" >&2; exit 1; }
  echo "$SIMLOCK_CHROMIUM"
  exit 0
fi
for candidate in /usr/bin/chromium /usr/bin/chromium-browser; do
  if [ -x "$candidate" ]; then echo "$candidate"; exit 0; fi
done

fail() {
  cat >&2 <<MESSAGE
================================================================================================
chromium: NOT INSTALLED, and it could not be installed ($1).
The console's tests drive a real Chromium through playwright-core. Install Debian's package
(apt-get install chromium), or point SIMLOCK_CHROMIUM at a Chromium or Chrome binary.
================================================================================================
MESSAGE
  exit 1
}

command -v apt-get >/dev/null || fail "no apt-get on this machine"
sudo=
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null && sudo -n true 2>/dev/null || fail "not root, and no sudo without a password"
  sudo=sudo
fi
# One install at a time: test files may ask at once.
exec 9>/tmp/simlock-chromium-install.lock
flock 9
if [ -x /usr/bin/chromium ]; then echo /usr/bin/chromium; exit 0; fi
echo "chromium: installing Debian's chromium package for the browser tests (apt-get)" >&2
$sudo apt-get update -qq >&2 || fail "apt-get update failed"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2 || fail "apt-get install chromium failed"
[ -x /usr/bin/chromium ] || fail "the package installed no /usr/bin/chromium"
echo /usr/bin/chromium
