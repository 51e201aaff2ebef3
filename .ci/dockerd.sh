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
