#!/usr/bin/env bash
# Start a Docker engine for the compose suite (tests/e2e/test_compose.py), idempotently:
# Debian's docker.io (dockerd, containerd, runc) installed if missing, dockerd started
# in the background unless an engine already answers. Its log: /var/log/invcrawl-dockerd.log.
# Prints nothing on success; exits non-zero with the log's tail if the engine won't start.
set -euo pipefail
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! command -v dockerd >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q --no-install-recommends docker.io >/dev/null \
    || { $SUDO apt-get update -q >/dev/null \
         && $SUDO apt-get install -y -q --no-install-recommends docker.io >/dev/null; }
fi
# Debian's client, which matches its engine (another `docker` earlier on PATH may not).
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER=docker
if $SUDO "$DOCKER" info >/dev/null 2>&1; then
  exit 0
fi
log=/var/log/invcrawl-dockerd.log
# A dockerd (or its containerd) killed with the machine's other processes may leave its
# pid file behind, naming a process that is gone or a zombie nobody reaps (this
# container's init does not): dockerd then refuses to start ("pid file found").
stale() {
  [ -f "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
  [ -z "$state" ] || [ "$state" = Z ] || [ "$state" = X ]
}
for pidfile in /var/run/docker.pid /var/run/docker/containerd/containerd.pid; do
  if stale "$pidfile"; then $SUDO rm -f "$pidfile"; fi
done
# No systemd here: dockerd runs its own containerd. setsid: CI's process group may be
# signalled when a step ends; the engine stays up for the next run (idempotent).
$SUDO setsid dockerd >>"$log" 2>&1 < /dev/null &
for _ in $(seq 1 120); do
  if $SUDO "$DOCKER" info >/dev/null 2>&1; then
    exit 0
  fi
  sleep 0.5
done
echo "dockerd did not start; the end of $log:" >&2
tail -n 20 "$log" >&2
exit 1
