# deploy/Dockerfile's PYTHON_IMAGE without a registry (deploy/base-images/build.sh):
# Debian's Python 3.11 with venv and pip on the local Debian base.
ARG BASE
FROM ${BASE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv python3-pip python-is-python3 \
    && rm -rf /var/lib/apt/lists/*
CMD ["python3"]
