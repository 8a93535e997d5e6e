#!/usr/bin/env bash
# Installs the Debian packages that `make docker-test` (docker/test-image.sh) needs to build and
# run the gigakv image without a Docker engine: podman and buildah (daemonless, chroot isolation)
# and debootstrap (to create the debian:bookworm-slim base image offline from the apt mirror).
# Idempotent: only packages that are missing are installed; a second run installs nothing.
#
# Usage: scripts/install-docker-deps.sh
set -euo pipefail

packages=(podman buildah debootstrap redis-tools)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "install-docker-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
