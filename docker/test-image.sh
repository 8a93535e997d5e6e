#!/usr/bin/env bash
# Builds the gigakv image from docker/Dockerfile and checks that the server inside it answers PING
# and keeps a key in /data across a restart, and that the image's gigakv-check-rdb accepts the
# file the server saved.
# Run by `make docker-test` from the repository root. Runs as root (re-executes itself with sudo
# otherwise): it installs packages, and podman/buildah use the system-wide image store.
#
# Usage: docker/test-image.sh [--base-only]
#   --base-only  only make sure the base image exists (steps a and b), then stop.
#
# No Docker engine is needed: the image is built with podman and run with buildah, both with
# chroot isolation (which shares the host's network, so the server is reached on 127.0.0.1).
# When the base image docker.io/library/debian:bookworm-slim is not in podman's store it is made
# locally with debootstrap from the machine's Debian mirror, so no container registry is used.
#
# Environment:
#   GIGAKV_TEST_IMAGE     tag to build (default gigakv:test)
#   GIGAKV_DEBIAN_MIRROR  Debian mirror for debootstrap and the base image's apt sources
#                         (default: the bookworm mirror in the host's apt sources, else
#                         http://deb.debian.org/debian)
#   GIGAKV_BUILD_JOBS     passed to the Dockerfile as build argument JOBS (default 2)
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  exec sudo --preserve-env=GIGAKV_TEST_IMAGE,GIGAKV_DEBIAN_MIRROR,GIGAKV_BUILD_JOBS,TMPDIR \
    bash "$0" "$@"
fi

base_only=""
case "${1:-}" in
  "") ;;
  --base-only) base_only=yes ;;
  *)
    echo "usage: $0 [--base-only]" >&2
    exit 2
    ;;
esac

cd "$(dirname "${BASH_SOURCE[0]}")/.."

readonly BASE_IMAGE=docker.io/library/debian:bookworm-slim
readonly IMAGE=${GIGAKV_TEST_IMAGE:-gigakv:test}
readonly SUITE=bookworm
readonly PING_TIMEOUT_S=20

log() { echo "docker-test: $*"; }
die() {
  echo "docker-test: FAIL: $*" >&2
  exit 1
}

tmp_root=""
ctr=""
server_pid=""

# Unmounts whatever is still mounted below $1 (debootstrap mounts proc/sys in its target and may
# leave them behind when it fails), deepest first.
unmount_below() {
  local dir=$1 mnt
  while read -r mnt; do
    umount -l "$mnt" 2>/dev/null || true
  done < <(awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r)
}

cleanup() {
  local rc=$?
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM -- "-$server_pid" 2>/dev/null || kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [[ -n "$ctr" ]]; then
    buildah rm "$ctr" >/dev/null 2>&1 || true
  fi
  if [[ -n "$tmp_root" && -d "$tmp_root" ]]; then
    unmount_below "$tmp_root"
    rm -rf --one-file-system "$tmp_root"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tmp_root=$(mktemp -d "${TMPDIR:-/tmp}/gigakv-docker-test.XXXXXX")

# Prints the first Debian mirror URI that the host's apt sources use for the bookworm suite
# (one-line .list format and deb822 .sources format), or nothing.
host_debian_mirror() {
  local files=()
  [[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
  local f
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] && files+=("$f")
  done
  [[ ${#files[@]} -gt 0 ]] || return 0
  awk -v suite="$SUITE" '
    function has_word(list, w,   n, parts, i) {
      n = split(list, parts, /[ \t]+/)
      for (i = 1; i <= n; i++) if (parts[i] == w) return 1
      return 0
    }
    function flush() {
      if (types != "" && has_word(types, "deb") && has_word(suites, suite) &&
          tolower(enabled) != "no" && uris != "") {
        split(uris, u, /[ \t]+/); print u[1]; found = 1; exit
      }
      types = ""; uris = ""; suites = ""; enabled = ""
    }
    FNR == 1 { flush() }
    /^[ \t]*#/ { next }
    # deb822 stanza fields
    /^Types:/   { sub(/^Types:[ \t]*/, "");   types = $0;   next }
    /^URIs:/    { sub(/^URIs:[ \t]*/, "");    uris = $0;    next }
    /^Suites:/  { sub(/^Suites:[ \t]*/, "");  suites = $0;  next }
    /^Enabled:/ { sub(/^Enabled:[ \t]*/, ""); enabled = $0; next }
    /^[ \t]*$/  { flush(); next }
    # one-line format: deb [options] uri suite component...
    $1 == "deb" {
      i = 2
      if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      if ($(i + 1) == suite) { print $i; found = 1; exit }
    }
    END { if (!found) flush() }
  ' "${files[@]}" | head -n 1
}

# Creates $BASE_IMAGE from a debootstrap'ed minbase rootfs, with apt sources on $mirror.
create_base_image() {
  local mirror=$1 rootfs="$tmp_root/rootfs"
  local include=()
  if [[ "$mirror" == https://* ]]; then
    include=(--include=ca-certificates)
  fi
  log "debootstrap --variant=minbase $SUITE from $mirror (about a minute)"
  mkdir -p "$rootfs"
  if ! debootstrap --variant=minbase "${include[@]}" "$SUITE" "$rootfs" "$mirror" \
      >"$tmp_root/debootstrap.log" 2>&1; then
    tail -n 30 "$tmp_root/debootstrap.log" >&2
    if [[ -f "$rootfs/debootstrap/debootstrap.log" ]]; then
      tail -n 30 "$rootfs/debootstrap/debootstrap.log" >&2
    fi
    die "debootstrap failed (log above)"
  fi
  unmount_below "$rootfs"

  # The image's apt must reach the same mirror, so the Dockerfile's apt-get works.
  cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $mirror $SUITE main
deb $mirror $SUITE-updates main
EOF
  # Like the official slim image: no man pages, docs or translations from later installs.
  mkdir -p "$rootfs/etc/dpkg/dpkg.cfg.d"
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
  # ...no apt caches left in image layers...
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  # ...and drop what debootstrap already installed or cached.
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias \
    -exec rm -rf {} +
  rm -rf "$rootfs"/usr/share/{man,groff,info,lintian,linda}/*
  rm -rf "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log "$rootfs"/debootstrap

  log "importing the rootfs as $BASE_IMAGE"
  tar --numeric-owner --xattrs -C "$rootfs" -c . |
    podman import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' \
      - "$BASE_IMAGE" >/dev/null
  rm -rf --one-file-system "$rootfs"
}

# Prints the PIDs of all descendants of process $1.
descendants() {
  local child
  for child in $(pgrep -P "$1" || true); do
    echo "$child"
    descendants "$child"
  done
}

# Prints a TCP port on 127.0.0.1 that nothing listens on.
free_port() {
  local port
  for _ in $(seq 1 200); do
    port=$((20000 + (RANDOM % 30000)))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  die "found no free TCP port"
}

# --- (a) tools -------------------------------------------------------------------------------
log "checking podman, buildah, debootstrap, redis-cli"
scripts/install-deps.sh --docker

# --- (b) base image --------------------------------------------------------------------------
if podman image exists "$BASE_IMAGE"; then
  log "base image $BASE_IMAGE is present"
else
  mirror=${GIGAKV_DEBIAN_MIRROR:-$(host_debian_mirror)}
  mirror=${mirror:-http://deb.debian.org/debian}
  create_base_image "${mirror%/}"
fi

if [[ -n "$base_only" ]]; then
  log "PASS: base image ready (--base-only)"
  exit 0
fi

# --- (c) build -------------------------------------------------------------------------------
# --format docker keeps the HEALTHCHECK (the OCI image format has no field for it).
# --layers=false leaves no build-stage image (hundreds of MB) behind after each run; the
# compile step would miss the layer cache whenever the sources change anyway.
old_image_id=$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
log "building $IMAGE from docker/Dockerfile (compiles gigakv-server; takes several minutes)"
podman build --pull=never --isolation=chroot --format docker --layers=false \
  --build-arg "JOBS=${GIGAKV_BUILD_JOBS:-2}" \
  -f docker/Dockerfile -t "$IMAGE" .
image_id=$(podman image inspect --format '{{.Id}}' "$IMAGE")
log "image built: $IMAGE $image_id ($(podman image inspect --format '{{.Size}}' "$IMAGE") bytes)"
# The previous build of this tag is now untagged: remove it (only if nothing else uses it).
if [[ -n "$old_image_id" && "$old_image_id" != "$image_id" ]]; then
  podman rmi "$old_image_id" >/dev/null 2>&1 || true
fi

# --- (d) run, write, restart, read --------------------------------------------------------
# The container is started twice, like `docker restart`: the key written in the first run must be
# back in the second, loaded from /data/dump.rdb (the final save at SIGTERM, as Redis does with
# its default save points).
port=$(free_port)
ctr=$(buildah from "$IMAGE")

# Starts gigakv-server in the container; sets server_pid and pong.
start_server() {
  log "starting gigakv-server in container $ctr on 127.0.0.1:$port"
  # setsid: the server runs in its own process group, which is stopped as a whole below.
  setsid buildah run --isolation=chroot "$ctr" -- \
    gigakv-server /etc/gigakv/gigakv.conf --bind 127.0.0.1 --port "$port" \
    --protected-mode no --dir /data >>"$tmp_root/server.log" 2>&1 &
  server_pid=$!
  pong=""
  local deadline=$((SECONDS + PING_TIMEOUT_S)) reply
  while ((SECONDS < deadline)); do
    reply=$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null || true)
    if [[ "$reply" == "PONG" ]]; then
      pong=yes
      break
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      break
    fi
    sleep 0.5
  done
}

# Stops like `docker stop`: SIGTERM to gigakv-server itself (buildah answers a SIGTERM of its own
# by killing the container's process), then, if it has not exited within 10 s, the whole process
# group started above is killed.
stop_server() {
  log "stopping the server (buildah run pid $server_pid)"
  local stopped="" pid
  if kill -0 "$server_pid" 2>/dev/null; then
    for pid in $(descendants "$server_pid"); do
      if [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == gigakv-server ]]; then
        kill -TERM "$pid" 2>/dev/null || true
      fi
    done
    for _ in $(seq 1 20); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.5
    done
    if kill -0 "$server_pid" 2>/dev/null; then
      log "server still running 10 s after SIGTERM, killing it"
      kill -KILL -- "-$server_pid" 2>/dev/null || kill -KILL "$server_pid" 2>/dev/null || true
    else
      stopped=yes
    fi
  fi
  server_status=0
  wait "$server_pid" 2>/dev/null || server_status=$?
  server_pid=""
  if [[ -n "$stopped" ]]; then
    log "server exited after SIGTERM with status $server_status"
  fi
}

show_log() {
  echo "--- server output (last lines) ---"
  tail -n 12 "$tmp_root/server.log" || true
  echo "---"
}

start_server
if [[ -z "$pong" ]]; then
  stop_server
  show_log
  die "no PONG from the server in the image within ${PING_TIMEOUT_S}s"
fi
log "redis-cli -p $port ping -> PONG"
log "server INFO: $(redis-cli -h 127.0.0.1 -p "$port" info server 2>/dev/null |
  tr -d '\r' | grep -E '^(redis_version|gigakv_version|tcp_port|executable|config_file):' |
  paste -sd ' ' - || true)"
marker="persisted-$RANDOM-$RANDOM"
redis-cli -h 127.0.0.1 -p "$port" set docker-test-key "$marker" >/dev/null
stop_server

# The final save's file passes the image's gigakv-check-rdb.
if ! check=$(buildah run --isolation=chroot "$ctr" -- gigakv-check-rdb /data/dump.rdb 2>&1); then
  echo "$check"
  die "gigakv-check-rdb in the image rejects /data/dump.rdb"
fi
log "gigakv-check-rdb /data/dump.rdb: OK, $(grep -E '^\[info\] [0-9]+ keys read' <<<"$check" ||
  true)"

start_server
if [[ -z "$pong" ]]; then
  stop_server
  show_log
  die "no PONG from the restarted server within ${PING_TIMEOUT_S}s"
fi
value=$(redis-cli -h 127.0.0.1 -p "$port" get docker-test-key 2>/dev/null || true)
stop_server
show_log
buildah rm "$ctr" >/dev/null
ctr=""

if [[ "$value" != "$marker" ]]; then
  die "the key written before the restart is gone (got '$value'): /data did not keep dump.rdb"
fi
log "PASS: image $IMAGE serves PING and keeps its data in /data across a restart"
