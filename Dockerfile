# The neardup command in a container: `docker run neardup:local scan sample`, or the services
# of docker-compose.yml. A build stage with a Rust toolchain installs neardup into a virtual
# environment, compiling the native fingerprint path (worker/native -> worker._native); every
# other dependency ships a manylinux wheel for CPython 3.11 (or is pure Python). The runtime
# image gets that environment and needs no compiler.
FROM python:3.11-slim AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/root/.cargo/bin:$PATH

RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential curl ca-certificates \
    && curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY . /app
# The import check fails the build if the native module did not build (it is optional for pip).
RUN python -m venv /opt/neardup \
    && /opt/neardup/bin/pip install . \
    && /opt/neardup/bin/python -c "import worker._native"

FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/neardup/bin:$PATH

WORKDIR /app
COPY . /app
COPY --from=build /opt/neardup /opt/neardup
RUN useradd --system --uid 10001 --create-home --home-dir /home/neardup neardup \
    && mkdir -p /var/lib/neardup \
    && chown neardup:neardup /var/lib/neardup

# The state directory is created here, owned by the runtime user, so a named volume mounted
# on it starts out writable without running anything as root.
ENV NEARDUP_STATE_DIR=/var/lib/neardup
USER neardup

ENTRYPOINT ["neardup"]
CMD ["worker"]
