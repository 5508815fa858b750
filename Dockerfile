# The neardup command in a container: `docker run neardup:local scan sample`, or the services
# of docker-compose.yml. Every dependency ships a manylinux wheel for CPython 3.11 (or is pure
# Python), so the slim image needs no compiler.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY . /app
RUN pip install . \
    && useradd --system --uid 10001 --create-home --home-dir /home/neardup neardup \
    && mkdir -p /var/lib/neardup \
    && chown neardup:neardup /var/lib/neardup

# The state directory is created here, owned by the runtime user, so a named volume mounted
# on it starts out writable without running anything as root.
ENV NEARDUP_STATE_DIR=/var/lib/neardup
USER neardup

ENTRYPOINT ["neardup"]
CMD ["worker"]
