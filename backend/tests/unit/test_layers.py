"""The layering of backend/app (docs/ARCHITECTURE.md), checked on every import the code makes.

Each module of the app belongs to a layer, the package under `app` it lives in
(the entry points `app.cli`, `app.main`, `app.worker` and `app.worker_loop`, and
`app.embedded`, are layers of their own). A layer may import only the layers
listed for it below. Imports inside functions count as much as those at the top:
a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"

BASE = {"core", "models"}
ENTRY_POINTS = {"api", "local", "cli", "main", "worker", "worker_loop"}

ALLOWED: dict[str, set[str]] = {
    "app": set(),  # the package itself imports nothing of its own
    "core": {"core"},
    "models": {"core", "models"},
    "pdf": BASE | {"pdf"},
    "engines": BASE | {"pdf", "engines"},  # never the database, storage or the services
    "db": BASE | {"db"},  # the repository knows SQL and rows, nothing above it
    "storage": BASE | {"storage"},
    "metrics": BASE | {"metrics"},  # counters and the queue's gauges; nothing that does the work
    "services": BASE | {"pdf", "engines", "db", "storage", "metrics", "services"},
    "embedded": {"core", "embedded"},
    **{
        entry: BASE | {"services", "engines", "pdf", "embedded", "metrics"} | ENTRY_POINTS
        for entry in ENTRY_POINTS
    },
}

# Entry points reach the data only through the services. These modules are the exceptions:
# the operator's schema commands, and the error types the API maps to HTTP statuses.
ENTRY_POINT_EXCEPTIONS = {"app.db.migrations", "app.db.admin", "app.storage.errors"}

# Drivers stay inside the layer that owns them: no entry point opens its own database connection.
DRIVERS: dict[str, set[str]] = {"asyncpg": {"db"}}


@dataclass(frozen=True, slots=True)
class Violation:
    module: str
    line: int
    imported: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported}"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "app"


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every module the file imports, with the line: absolute names, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path}:{node.lineno}: relative import; the app imports absolutely")
            if node.module is not None:
                for alias in node.names:
                    # `from app.db import admin` depends on app.db.admin
                    yield node.lineno, f"{node.module}.{alias.name}" if node.module == "app" else node.module


def violations(root: Path) -> list[Violation]:
    found: list[Violation] = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        layer = layer_of(module)
        allowed = ALLOWED.get(layer)
        if allowed is None:
            found.append(Violation(module, 0, "(a layer the rules do not know; add it to ALLOWED)"))
            continue
        for line, imported in imports(path):
            top = imported.split(".")[0]
            if top in DRIVERS and layer not in DRIVERS[top]:
                found.append(Violation(module, line, imported))
            if top != "app":
                continue
            target = layer_of(imported)
            if target in allowed:
                continue
            if layer in ENTRY_POINTS and any(
                imported == ok or imported.startswith(f"{ok}.") for ok in ENTRY_POINT_EXCEPTIONS
            ):
                continue
            found.append(Violation(module, line, imported))
    return found


def test_the_app_keeps_its_layers() -> None:
    assert [str(v) for v in violations(APP)] == []


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        ("api/routes/x.py", "from app.db.repository import ChunkRepository\n", "app.db.repository"),
        ("local/x.py", "def f():\n    from app.storage.local import LocalBlobStore\n", "app.storage.local"),
        ("cli.py", "import asyncpg\n", "asyncpg"),
        ("engines/x.py", "from app.storage.base import BlobStore\n", "app.storage.base"),
        ("engines/y.py", "from app.db import repository\n", "app.db"),
        ("db/x.py", "from app.services.ocr_chunk_service import OCRChunkService\n", "app.services"),
        ("services/x.py", "from app.api.schemas import DocumentView\n", "app.api.schemas"),
        ("pdf/x.py", "from app import engines\n", "app.engines"),
    ],
)
def test_a_reach_across_layers_is_caught(tmp_path: Path, path: str, source: str, expected: str) -> None:
    root = tmp_path / "app"
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(source, encoding="utf-8")
    (found,) = violations(root)
    assert found.imported.startswith(expected)


def test_allowed_imports_pass(tmp_path: Path) -> None:
    root = tmp_path / "app"
    (root / "api").mkdir(parents=True)
    (root / "api" / "x.py").write_text(
        "from app.services.documents import Documents\nfrom app.storage.errors import StorageError\n"
        "from app.db.migrations import migrate\nimport fastapi\n",
        encoding="utf-8",
    )
    (root / "db").mkdir()
    (root / "db" / "x.py").write_text("import asyncpg\nfrom app.models.document import Document\n")
    assert violations(root) == []
