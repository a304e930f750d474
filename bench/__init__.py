"""Benchmarks, each printing rows of ratios against a baseline run beside it (`python -m bench`)."""

import os

from app.core.logging import configure_logging

# A benchmark's own events (migrations applied, ...) are noise beside its table.
configure_logging(os.environ.get("LOG_LEVEL", "WARNING"))
