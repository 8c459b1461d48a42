#!/bin/sh
# Installs what building Sluice and running all of its tests need on Debian or Ubuntu: the
# packages of test/setup/packages.list. `sudo npm run setup:test` runs it; so does .ci/run.
set -eu
list="$(dirname "$0")/packages.list"
packages=$(sed -e 's/#.*//' "$list" | awk 'NF { print $1 }' | tr '\n' ' ')

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup:test installs Debian/Ubuntu packages with apt-get, which this system lacks; install the equivalents of: $packages" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup:test installs system packages: run it as root (sudo npm run setup:test)." >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # one word per package
apt-get install -y -qq --no-install-recommends $packages >/dev/null
echo "Installed: $packages"
