# The compose redis service's image without a registry (deploy/base-images/build.sh):
# Debian's redis-server and redis-cli on the local Debian base, data in /data, run as
# the "redis" user by docker-entrypoint.sh, as the official image does (deploy/redis/start.sh
# hands it the server command).
ARG BASE
FROM ${BASE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server redis-tools \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data && chown redis:redis /data
COPY redis-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
WORKDIR /data
VOLUME /data
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
