#!/usr/bin/env bash
# Installs the Debian packages gigakv needs to build and test, and only those that are missing.
# Idempotent: a second run installs nothing. This script owns the package list.
#
# Usage: scripts/install-deps.sh [--build-only | --docker]
#   (default)     build and test packages (make run, make test)
#   --build-only  build packages only (e.g. inside the image's build stage)
#   --docker      the tools make docker-test needs without a Docker engine: podman and buildah
#                 (daemonless, chroot isolation), debootstrap (the bookworm-slim base image built
#                 offline from the apt mirror) and redis-cli to ping the container
set -euo pipefail

build_packages=(
  build-essential cmake ninja-build pkg-config
  libasio-dev libabsl-dev libspdlog-dev libcxxopts-dev
  libgtest-dev libgmock-dev libbenchmark-dev liblzf-dev
  libluajit-5.1-dev lua-cjson-dev
)
test_packages=(
  redis-tools redis-server python3 python3-redis python3-pytest
  clang libclang-rt-14-dev procps util-linux
)

docker_packages=(podman buildah debootstrap redis-tools)

case "${1:-}" in
  --build-only) packages=("${build_packages[@]}") ;;
  --docker) packages=("${docker_packages[@]}") ;;
  "") packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  *)
    echo "usage: $0 [--build-only | --docker]" >&2
    exit 2
    ;;
esac

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

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

# Debian's redis-server package starts a system service on 6379 when it is installed; gigakv's
# `make run` wants that port, and tests start their own reference servers on free ports.
if [[ " ${missing[*]} " == *" redis-server "* ]] && command -v systemctl >/dev/null 2>&1; then
  "${sudo_cmd[@]}" systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
