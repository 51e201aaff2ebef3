#!/bin/sh
# Start redis-server with invcrawl's users (deploy/redis/users.acl.in), their passwords
# taken from INVCRAWL_REDIS_{PRODUCER,CONSUMER,READER,EXPORTER}_PASSWORD.
#
#   start.sh redis-server ARGS...   render the ACL file, then run redis-server ARGS...
#                                   --aclfile FILE (the compose redis service's entry point)
#   start.sh render FILE            only render the ACL file (tests, your own Redis)
#
# Passwords must be 16 or more characters among A-Z a-z 0-9 . _ ~ - (they go into Redis
# URLs as they are): `openssl rand -hex 24` makes one.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
template="$here/users.acl.in"

render() {
  out=$1
  script=""
  for role in PRODUCER CONSUMER READER EXPORTER; do
    eval "password=\${INVCRAWL_REDIS_${role}_PASSWORD:-}"
    if ! printf '%s' "$password" | grep -Eq '^[A-Za-z0-9._~-]{16,}$'; then
      echo "start.sh: INVCRAWL_REDIS_${role}_PASSWORD must be 16+ characters of" \
        "A-Z a-z 0-9 . _ ~ - (e.g. \`openssl rand -hex 24\`)" >&2
      exit 2
    fi
    script="$script s/@${role}_PASSWORD@/$password/;"
  done
  # The cluster admin user is optional (the cluster profile sets its password).
  admin=${INVCRAWL_REDIS_ADMIN_PASSWORD:-}
  if [ -z "$admin" ]; then
    script="$script /@ADMIN_PASSWORD@/d;"
  elif ! printf '%s' "$admin" | grep -Eq '^[A-Za-z0-9._~-]{16,}$'; then
    echo "start.sh: INVCRAWL_REDIS_ADMIN_PASSWORD must be 16+ characters of" \
      "A-Z a-z 0-9 . _ ~ - (e.g. \`openssl rand -hex 24\`)" >&2
    exit 2
  else
    script="$script s/@ADMIN_PASSWORD@/$admin/;"
  fi
  # An ACL file takes no comments: the template's are dropped.
  (umask 077 && sed -e '/^#/d' -e '/^$/d' -e "$script" "$template" >"$out")
}

if [ "${1:-}" = "render" ]; then
  render "$2"
  exit 0
fi

acl=${INVCRAWL_REDIS_ACL_FILE:-/tmp/invcrawl-users.acl}
render "$acl"
# The official image's entry point drops root for the "redis" user: let it read the file.
if [ "$(id -u)" = 0 ] && id redis >/dev/null 2>&1; then
  chown redis "$acl"
fi
if command -v docker-entrypoint.sh >/dev/null 2>&1; then
  exec docker-entrypoint.sh "$@" --aclfile "$acl"
fi
exec "$@" --aclfile "$acl"
