# syntax=docker/dockerfile:1
# chunk-ocr: one image for the HTTP API (the default command) and the arq worker
# (`arq app.worker.WorkerSettings`); docs/DEPLOY.md says how compose and Kubernetes run them.
#
#   docker build -t chunk-ocr .
#   docker build --build-arg TESSERACT_LANGS="eng osd deu rus" -t chunk-ocr .

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# -- build: the project and its locked dependencies in /app/.venv ------------------------------
FROM ${PYTHON_IMAGE} AS build

RUN pip install --no-cache-dir uv==0.13.9

# Bytecode compiled once here: the runtime's venv is read-only to its user, and every process
# (API, worker, each OCR process) would otherwise compile its imports again at start.
ENV UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/app/.venv

WORKDIR /src

# The dependencies alone first: this layer changes only with uv.lock.
COPY pyproject.toml uv.lock ./
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-install-project --no-editable

# Then the project, installed as a wheel (with supabase/migrations packaged into it).
COPY README.md ./
COPY backend/app backend/app
COPY supabase/migrations supabase/migrations
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --frozen --no-dev --no-editable

# -- runtime: Python, the OCR tools, the venv, a user of its own -----------------------------
FROM ${PYTHON_IMAGE} AS runtime

# Tesseract's languages, as the Makefile's TESSERACT_LANGS: its codes or Debian's suffixes.
ARG TESSERACT_LANGS="eng osd"

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# What the Makefile's system-deps installs, but chromium (the progress page's browser test);
# util-linux for setpriv (tesseract dies with its OCR process); tini as PID 1, which passes
# SIGTERM on and reaps what the OCR processes leave. Debian's versions are not pinned: the
# archive keeps only the current one, and the base image's tag decides the release.
# hadolint ignore=DL3008,SC2046
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        tesseract-ocr ghostscript poppler-utils qpdf fonts-dejavu-core util-linux tini \
        $(for lang in ${TESSERACT_LANGS}; do printf 'tesseract-ocr-%s ' "${lang//_/-}"; done) \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 chunkocr \
    && useradd --system --uid 10001 --gid chunkocr --create-home --home-dir /home/chunkocr \
        --shell /usr/sbin/nologin chunkocr \
    && mkdir -p /data/storage \
    && chown -R chunkocr:chunkocr /data

COPY --from=build /app/.venv /app/.venv

ENV PATH="/app/.venv/bin:${PATH}" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    ENVIRONMENT=production \
    DATA_DIR=/data \
    LOCAL_STORAGE_DIR=/data/storage \
    HOST=0.0.0.0 \
    PORT=8000

WORKDIR /home/chunkocr
USER 10001:10001
EXPOSE 8000

# The API's /healthz: 200 when the database and Redis answer. (A worker serves no HTTP: compose
# and Kubernetes give it a check of its own.)
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]

ENTRYPOINT ["tini", "--"]
# --http: a request uvicorn cannot parse is refused in the API's error shape (app/api/http_protocol.py).
CMD ["uvicorn", "--factory", "app.main:app", "--http", "app.api.http_protocol:JsonRefusalsH11Protocol", \
     "--host", "0.0.0.0", "--port", "8000"]
