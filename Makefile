# One Makefile whose targets CI calls too. `make test` is the test command.
SHELL := /bin/bash
.DEFAULT_GOAL := help

UV ?= uv
APT_PACKAGES := tesseract-ocr tesseract-ocr-eng ghostscript poppler-utils fonts-dejavu-core chromium
PYTEST_ARGS ?=

.PHONY: help install system-deps python-deps lint typecheck test test-fast check demo bench serve

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

system-deps: ## install tesseract, ghostscript, poppler, fonts with apt (root only; skipped otherwise)
	@missing=""; \
	for bin in tesseract gs pdftotext chromium; do command -v $$bin >/dev/null || missing="$$missing $$bin"; done; \
	[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing="$$missing fonts"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing$$missing with apt"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES) >/dev/null; \
	else \
		echo "missing:$$missing - install $(APT_PACKAGES) with your package manager" >&2; \
	fi

python-deps: ## install uv (from PyPI) if needed and the locked Python dependencies, compiled to bytecode
	@command -v $(UV) >/dev/null || python3 -m pip install -q uv
	@# --compile-bytecode as pip does at install time: where PYTHONDONTWRITEBYTECODE is set, nothing
	@# else writes .pyc files and every process (CLI, worker, OCR process) recompiles its imports
	@# from source, about 1.5 s each here.
	@$(UV) sync --frozen --quiet --compile-bytecode
	@$(UV) run --frozen python -m compileall -q backend/app bench >/dev/null

install: system-deps python-deps ## everything `make test` needs

lint: python-deps ## ruff
	$(UV) run ruff check backend bench
	$(UV) run ruff format --check backend bench

typecheck: python-deps ## mypy --strict on the app
	$(UV) run mypy

test: install ## the whole suite (uses DATABASE_URL / REDIS_URL when set, else embedded servers)
	$(UV) run pytest $(PYTEST_ARGS)

test-fast: python-deps ## unit tests only
	$(UV) run pytest backend/tests/unit $(PYTEST_ARGS)

check: lint typecheck test ## what CI runs

demo: install ## OCR a generated 8-page 300 DPI scan with embedded PostgreSQL and Redis
	@mkdir -p out/demo
	$(UV) run chunk-ocr sample out/demo/sample-scan.pdf --pages 8
	$(UV) run chunk-ocr run out/demo/sample-scan.pdf --out out/demo
	@echo "text: out/demo/sample-scan.txt (pages separated by form feeds), details: out/demo/sample-scan.json"

serve: python-deps ## the HTTP API on :8000 (uvicorn; DATABASE_URL, REDIS_URL and SUPABASE_JWT_SECRET from the environment)
	$(UV) run uvicorn --factory app.main:app --host $${HOST:-127.0.0.1} --port $${PORT:-8000}

bench: install ## every benchmark, one table of ratios against baselines run beside them (about 6 minutes on 2 cores)
	$(UV) run python -m bench
