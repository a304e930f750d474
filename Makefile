# One Makefile whose targets CI calls too. `make test` is the test command.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# uv: UV if set, else the uv on PATH, else the one python-deps bootstraps into .tools (a venv of
# its own: pip never installs into the system Python, which Debian and Homebrew refuse anyway).
TOOLS_UV := $(CURDIR)/.tools/bin/uv
ifeq ($(origin UV),undefined)
UV := $(or $(shell command -v uv 2>/dev/null),$(TOOLS_UV))
endif
# Tesseract's languages: its codes (rus, chi_sim) or Debian's package suffixes (chi-sim, script-latn),
# space-separated. The default is what the test suite reads: English, orientation data, Russian, German.
TESSERACT_LANGS ?= eng osd rus deu
TESSERACT_PACKAGES = $(foreach lang,$(TESSERACT_LANGS),tesseract-ocr-$(subst _,-,$(lang)))
APT_PACKAGES = tesseract-ocr ghostscript groff-base poppler-utils qpdf fonts-dejavu-core chromium util-linux $(TESSERACT_PACKAGES)
BREW_PACKAGES := tesseract tesseract-lang ghostscript groff poppler qpdf
UV_INSTALL_DOCS := https://docs.astral.sh/uv/getting-started/installation/
PYTEST_ARGS ?=
# `make test` and `make test-quick` run the suite in this many pytest-xdist processes, a test
# file to a process; each has its own database, embedded servers and Redis database. 1: serial.
# One more than the cores: many tests wait on servers, subprocesses and outages, and a third
# process on two cores fills that wait. At most 6, so REDIS_URL's /9 and the next five do not wrap
# round to a developer's /0.
CORES := $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)
TEST_PROCESSES ?= $(shell n=$$(($(CORES) + 1)); echo $$((n > 6 ? 6 : n)))
PYTEST_PARALLEL = $(if $(filter-out 1,$(TEST_PROCESSES)),-n $(TEST_PROCESSES) --dist loadfile)

# apt waits up to 10 minutes for another apt or dpkg instead of failing at once. DPkg::Lock::Timeout
# covers install; `apt-get update` ignores it for its lists lock (apt 2.6), so update is retried.
APT_LOCK_WAIT := 600
APT_INSTALL := DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=$(APT_LOCK_WAIT) install -y -qq
APT_UPDATE := { ok=1; for i in $$(seq $$(($(APT_LOCK_WAIT) / 5))); do \
		out=$$(apt-get -o DPkg::Lock::Timeout=$(APT_LOCK_WAIT) update -qq 2>&1) && { ok=0; break; }; \
		case "$$out" in *"Could not get lock"*) [ $$i = 1 ] && echo "waiting for another apt to finish"; sleep 5;; *) break;; esac; \
	done; [ -z "$$out" ] || echo "$$out" >&2; [ $$ok = 0 ]; }
AS_ROOT_WITH_APT := [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null

.PHONY: help install system-deps python-deps lint typecheck test test-quick test-fast check demo bench serve

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

system-deps: ## install tesseract and its TESSERACT_LANGS, ghostscript, groff, poppler, qpdf, fonts, setpriv with apt (root only; else one line naming what is missing)
	@missing=""; installed=""; \
	for bin in tesseract gs groff pdftotext qpdf chromium $$([ "$$(uname)" = Linux ] && echo setpriv); do \
		command -v $$bin >/dev/null || missing="$$missing $$bin"; \
	done; \
	[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing="$$missing fonts"; \
	if command -v tesseract >/dev/null; then \
		installed=" $$(tesseract --list-langs 2>/dev/null | { read -r _; while read -r l; do printf '%s ' "$$l"; done; })"; \
	fi; \
	for lang in $(TESSERACT_LANGS); do \
		[ -n "$$installed" ] || break; \
		package="tesseract-ocr-$${lang//_/-}"; \
		case "$$installed" in *" $${lang//-/_} "*) continue;; esac; \
		command -v dpkg-query >/dev/null && dpkg-query -W -f='$${Status}' "$$package" 2>/dev/null \
			| { read -r status; [ "$$status" = "install ok installed" ]; } && continue; \
		missing="$$missing $$package"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if $(AS_ROOT_WITH_APT); then \
		echo "installing$$missing with apt"; \
		$(APT_UPDATE) && $(APT_INSTALL) $(APT_PACKAGES) >/dev/null; \
	else \
		echo "make: missing$$missing; Debian/Ubuntu: apt-get install $(APT_PACKAGES) (make install does it as root); macOS: brew install $(BREW_PACKAGES)" >&2; \
	fi

# uv bootstrapped into a venv of its own, .tools, with the pip that python3 -m venv brings (so pip's
# configuration, pip.conf and PIP_*, decides where it comes from); only when no uv is on PATH.
$(TOOLS_UV):
	@python3 -c '' 2>/dev/null || { echo "make: no uv and no python3: install Python >= 3.11 (Debian/Ubuntu: apt-get install python3 python3-venv; macOS: brew install python) or uv ($(UV_INSTALL_DOCS))" >&2; exit 1; }; \
	version=$$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
	python3 -c 'import sys; sys.exit(sys.version_info[:2] < (3, 11))' || { echo "make: Python >= 3.11 needed, python3 is $$version: install a newer one (Debian/Ubuntu: apt-get install python3 python3-venv; macOS: brew install python) or uv ($(UV_INSTALL_DOCS))" >&2; exit 1; }; \
	if ! python3 -c 'import venv, ensurepip' 2>/dev/null && $(AS_ROOT_WITH_APT); then \
		echo "installing python3-venv with apt"; \
		$(APT_UPDATE) && $(APT_INSTALL) python3-venv >/dev/null || exit 1; \
	fi; \
	python3 -c 'import venv, ensurepip' 2>/dev/null || { echo "make: no uv, and python3 $$version cannot create a venv to install it in: apt-get install python3-venv (make install does it as root), or install uv ($(UV_INSTALL_DOCS))" >&2; exit 1; }; \
	echo "installing uv into .tools (python3 -m venv .tools; .tools/bin/pip install uv)"; \
	rm -rf .tools && python3 -m venv .tools && .tools/bin/pip install -q uv

ifeq ($(UV),$(TOOLS_UV))
python-deps: $(TOOLS_UV)
endif
python-deps: ## uv (bootstrapped into .tools when none is on PATH) and the locked Python dependencies, compiled to bytecode
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
	$(UV) run pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS)

test-quick: install ## the whole suite but the tests marked slow (each 10 s or more; `make test` runs them too)
	$(UV) run pytest -m "not slow" $(PYTEST_PARALLEL) $(PYTEST_ARGS)

test-fast: python-deps ## unit tests only (no database or Redis needed)
	$(UV) run pytest backend/tests/unit $(PYTEST_ARGS)

check: lint typecheck test ## what CI runs

demo: install ## OCR a generated 8-page 300 DPI scan with embedded PostgreSQL and Redis
	@mkdir -p out/demo
	$(UV) run chunk-ocr sample out/demo/sample-scan.pdf --pages 8
	$(UV) run chunk-ocr run out/demo/sample-scan.pdf --out out/demo
	@echo "text: out/demo/sample-scan.txt (pages separated by form feeds), details: out/demo/sample-scan.json"

serve: python-deps ## the HTTP API on HOST:PORT (127.0.0.1:8000); DATABASE_URL and REDIS_URL, else the embedded servers
	$(UV) run chunk-ocr serve

bench: install ## every benchmark, one table of ratios against baselines run beside them (about 25 minutes on 2 cores)
	$(UV) run python -m bench
