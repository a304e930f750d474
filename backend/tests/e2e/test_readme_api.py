"""The README's "Try it on this machine": its three terminals' commands, run as written (the
port aside), from `make serve` to the text of an uploaded scan, on the embedded servers."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from tests.e2e.conftest import REPO_ROOT, outer_uv_cache
from tests.pdf_factories import cer

pytestmark = pytest.mark.slow

SECTION = "### Try it on this machine"
SERVICE_SETTINGS = ("DATABASE_URL", "REDIS_URL", "LOCAL_STORAGE_DIR", "ENVIRONMENT", "AUTH_DISABLED")


def readme_blocks() -> list[str]:
    """The `sh` blocks of the section, in order."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ")]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def newcomer(empty_home: Path) -> Iterator[tuple[dict[str, str], list[subprocess.Popen[bytes]]]]:
    """An empty HOME, no service settings; uv's own cache kept (nothing is downloaded again)."""
    home = empty_home
    cache = outer_uv_cache()
    env = {k: v for k, v in os.environ.items() if k not in SERVICE_SETTINGS and not k.startswith("SUPABASE_")}
    env |= {"HOME": str(home), "UV_CACHE_DIR": cache, "PYTHONUNBUFFERED": "1", "OCR_PROCESSES": "2"}
    started: list[subprocess.Popen[bytes]] = []
    yield env, started
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _terminal(block: str, port: int) -> str:
    # `source .venv/bin/activate` is written relative to the repository; the third terminal's files
    # go to its own directory.
    block = block.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
    return "set -euo pipefail\n" + block.replace(
        "source .venv/bin/activate", f"source {REPO_ROOT}/.venv/bin/activate"
    )


@pytest.mark.timeout(300)
def test_the_readme_local_api_path_runs_as_written(
    newcomer: tuple[dict[str, str], list[subprocess.Popen[bytes]]], tmp_path: Path
) -> None:
    env, started = newcomer
    serve_block, worker_block, client_block = readme_blocks()
    assert serve_block.strip() == "make serve"
    port = _free_port()
    logs = {name: (tmp_path / f"{name}.log").open("wb") for name in ("serve", "worker")}
    for name, block in (("serve", serve_block), ("worker", worker_block)):
        started.append(
            subprocess.Popen(
                ["bash", "-c", _terminal(block, port)],
                cwd=REPO_ROOT,
                env=env | {"PORT": str(port)},
                stdout=logs[name],
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        logs[name].close()  # the terminal holds its own descriptor
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code < 500:
                break
        except httpx.TransportError:
            pass
        assert started[0].poll() is None, (tmp_path / "serve.log").read_text()
        assert time.monotonic() < deadline, "the API did not come up"
        time.sleep(0.5)

    work = tmp_path / "terminal-3"
    work.mkdir()
    client = subprocess.run(
        ["bash", "-c", _terminal(client_block, port)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert client.returncode == 0, client.stderr
    expected_first_page = (work / "sample.expected.txt").read_text(encoding="utf-8").split("\f")[0]
    wrote, text = client.stdout.split("\n", 1)
    assert wrote.startswith("wrote sample.pdf (4 scanned pages)")
    assert cer(expected_first_page, text.rstrip("\n")) < 0.02, text

    # Stopping the API with SIGTERM (`kill`, a process manager) is a clean exit: `make serve`
    # ends with status 0 and no "make: *** Error 143".
    serve = started[0]
    children = psutil.Process(serve.pid).children(recursive=True)
    (api,) = [p for p in children if "python" in Path(p.cmdline()[0]).name and p.cmdline()[-1] == "serve"]
    api.send_signal(signal.SIGTERM)
    assert serve.wait(timeout=60) == 0
    serve_log = (tmp_path / "serve.log").read_text()
    assert "Error" not in serve_log, serve_log
    assert "chunk-ocr serve: http://127.0.0.1:" in serve_log
    worker_log = (tmp_path / "worker.log").read_text()
    assert "chunk-ocr worker: using the embedded PostgreSQL and Redis" in worker_log

    # The second terminal's Ctrl-C: the worker stops, and the embedded servers stop with the last
    # process using them.
    os.killpg(started[1].pid, signal.SIGINT)
    started[1].wait(timeout=90)
    pgdata = str(Path(env["HOME"]) / ".cache" / "chunk-ocr" / "pgdata")
    assert not [p.pid for p in psutil.process_iter(["cmdline"]) if pgdata in (p.info["cmdline"] or [])]
