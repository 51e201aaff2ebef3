#!/usr/bin/env bash
# Build invcrawl's base images locally, without any image registry: a Debian bookworm
# root filesystem made by debootstrap, imported into Docker, then
#   invcrawl-base/python:<hash>  Debian's python3 (3.11) + venv + pip: deploy/Dockerfile's
#                                PYTHON_IMAGE (compose: INVCRAWL_PYTHON_IMAGE)
#   invcrawl-base/redis:<hash>   Debian's redis-server (7.0) and redis-cli, started as the
#                                "redis" user like the official image: INVCRAWL_REDIS_IMAGE
# The machine's CA bundle (/etc/ssl/certs/ca-certificates.crt) goes into the images, and
# pip is told to use it, so that downloads through a TLS-inspecting proxy work.
#
#   deploy/base-images/build.sh            build what is missing, then print
#                                          INVCRAWL_PYTHON_IMAGE=... and INVCRAWL_REDIS_IMAGE=...
#                                          (eval "$(deploy/base-images/build.sh)")
#
# Needs root (debootstrap), debootstrap and a Docker engine. Everything is cached, keyed
# by a hash of its recipe (this folder, the mirror, the CA bundle): the root filesystem
# tarball in $INVCRAWL_BASE_CACHE (default ~/.cache/invcrawl-ci), the images in Docker.
# A second run with nothing changed takes a second. Progress goes to standard error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite=${INVCRAWL_BASE_SUITE:-bookworm}
mirror=${INVCRAWL_BASE_MIRROR:-http://deb.debian.org/debian}
ca=${INVCRAWL_BASE_CA:-/etc/ssl/certs/ca-certificates.crt}
cache=${INVCRAWL_BASE_CACHE:-$HOME/.cache/invcrawl-ci}
docker=${DOCKER:-docker}
log() { echo "base-images: $*" >&2; }

# The root filesystem: minbase + CA certificates (and the machine's bundle).
include=ca-certificates
rootfs_recipe="debootstrap --variant=minbase --include=$include $suite $mirror"
rootfs_key=$( { echo "$rootfs_recipe"; cat "$ca"; } | sha256sum | cut -c1-16)
# The images: that root filesystem and every file of this folder.
images_key=$( { echo "$rootfs_key"; cd "$here" && cat ./*.Dockerfile ./*.sh; } \
  | sha256sum | cut -c1-16)
base="invcrawl-base/debian:$suite-$rootfs_key"
python_image="invcrawl-base/python:$images_key"
redis_image="invcrawl-base/redis:$images_key"

have() { "$docker" image inspect "$1" >/dev/null 2>&1; }

if ! have "$python_image" || ! have "$redis_image"; then
  if ! have "$base"; then
    tarball="$cache/rootfs-$suite-$rootfs_key.tar"
    if [ ! -s "$tarball" ]; then
      mkdir -p "$cache"
      work=$(mktemp -d "$cache/rootfs.XXXXXX")
      trap 'rm -rf "$work"' EXIT
      log "debootstrap $suite from $mirror (a few minutes, once)"
      debootstrap --variant=minbase --include="$include" "$suite" "$work/root" "$mirror" \
        >"$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
      # The proxy's CA: in the bundle every TLS client reads, and where
      # update-ca-certificates keeps it if a later package rebuilds the bundle.
      cp "$ca" "$work/root/etc/ssl/certs/ca-certificates.crt"
      cp "$ca" "$work/root/usr/local/share/ca-certificates/invcrawl-build-host.crt"
      printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$work/root/etc/pip.conf"
      # apt inside image builds: no recommends, no caches, sources of this suite only.
      printf 'deb %s %s main\ndeb %s %s-updates main\n' "$mirror" "$suite" "$mirror" "$suite" \
        >"$work/root/etc/apt/sources.list"
      rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*
      tar -C "$work/root" --numeric-owner -cf "$tarball.tmp" .
      mv "$tarball.tmp" "$tarball"
      rm -rf "$work"
      trap - EXIT
    fi
    log "docker import $base"
    "$docker" import \
      --change 'ENV LANG=C.UTF-8 SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
      --change 'CMD ["/bin/bash"]' "$tarball" "$base" >/dev/null
  fi
  log "docker build $python_image"
  "$docker" build -q --build-arg "BASE=$base" -t "$python_image" \
    -f "$here/python.Dockerfile" "$here" >/dev/null
  log "docker build $redis_image"
  "$docker" build -q --build-arg "BASE=$base" -t "$redis_image" \
    -f "$here/redis.Dockerfile" "$here" >/dev/null
fi
echo "INVCRAWL_PYTHON_IMAGE=$python_image"
echo "INVCRAWL_REDIS_IMAGE=$redis_image"
