#!/bin/sh
# As the official redis image's entry point: started as root, own /data and drop to the
# "redis" user (setpriv, from util-linux) before running the command.
set -e
if [ "$(id -u)" = 0 ]; then
  chown -R redis:redis /data 2>/dev/null || true
  exec setpriv --reuid=redis --regid=redis --init-groups "$@"
fi
exec "$@"
