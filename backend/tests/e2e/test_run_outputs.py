"""Where `chunk-ocr run` writes: an output directory it cannot use is refused before any work, an
output it cannot write after the work says where the stored result is, and a summary nobody
reads (a closed pipe, a full disk behind stdout) is no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pikepdf
import pytest

from app.local.exit_codes import ExitCode
from app.pdf.samples import make_born_digital_pdf
from tests.e2e.conftest import REPO_ROOT, run_cli

pytestmark = pytest.mark.slow


@pytest.fixture
def env(cli_env: dict[str, str]) -> dict[str, str]:
    """The command as a person runs it: its log lines are not on stderr."""
    return {key: value for key, value in cli_env.items() if key != "LOG_LEVEL"}


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    path = tmp_path / "letters.pdf"
    make_born_digital_pdf(path, 3, seed=5)  # read at planning: no worker, a second or so
    return path


def test_an_out_that_is_a_file_is_refused_before_anything_starts(
    env: dict[str, str], pdf: Path, tmp_path: Path
) -> None:
    out = tmp_path / "taken"
    out.write_text("not a directory")
    data_dir = Path(env["DATA_DIR"])
    result = run_cli(["run", str(pdf), "--out", str(out)], env)
    assert result.returncode == ExitCode.BAD_INPUT
    assert result.stderr == f"chunk-ocr: error: --out {out}: not a directory\n"
    assert not (data_dir / "logs").exists()  # no worker, nothing planned


def test_an_out_that_cannot_be_made_is_refused_in_one_line(env: dict[str, str], pdf: Path) -> None:
    out = Path("/proc/chunk-ocr-cannot-be-here")  # procfs makes no directories, not even for root
    result = run_cli(["run", str(pdf), "--out", str(out)], env)
    assert result.returncode == ExitCode.BAD_INPUT
    assert result.stderr.startswith(f"chunk-ocr: error: --out {out}: cannot be made (")
    assert result.stderr.count("\n") == 1


def test_an_out_made_for_the_run_when_missing(env: dict[str, str], pdf: Path, tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper"
    result = run_cli(["run", str(pdf), "--out", str(out)], env)
    assert result.returncode == ExitCode.OK, result.stderr
    assert (out / "letters.txt").read_text(encoding="utf-8").strip()


def test_an_output_that_cannot_be_written_names_the_stored_result(
    env: dict[str, str], pdf: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    (out / "letters.txt").mkdir(parents=True)  # where the text would go: a directory
    result = run_cli(["run", str(pdf), "--out", str(out)], env)
    assert result.returncode == ExitCode.FAILED
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"chunk-ocr: {pdf}: cannot write to {out}: ")
    command = line.split("the result is stored: ", 1)[1]
    assert command.startswith("chunk-ocr result ")
    assert command.endswith(" --out DIR")
    document_id = command.split()[2]
    again = run_cli(["result", document_id, "--out", str(tmp_path / "elsewhere")], env)
    assert again.returncode == 0, again.stderr
    (text,) = (tmp_path / "elsewhere").glob("*.txt")
    assert text.read_text(encoding="utf-8").strip()


def test_a_summary_into_a_full_disk_is_one_line_and_the_outputs_are_written(
    env: dict[str, str], pdf: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    with open("/dev/full", "w") as full:  # every write: ENOSPC
        result = subprocess.run(
            [sys.executable, "-m", "app.cli", "run", str(pdf), "--out", str(out)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO_ROOT,
            timeout=300,
            check=False,
        )
    assert result.returncode == ExitCode.FAILED
    assert result.stderr == "chunk-ocr: error: cannot print the summary: No space left on device\n"
    assert (out / "letters.txt").read_text(encoding="utf-8").strip()


def test_a_summary_into_a_closed_pipe_is_no_traceback(env: dict[str, str], pdf: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "run", str(pdf), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO_ROOT,
    )
    assert run.stdout is not None
    run.stdout.close()  # the reader is gone before the summary comes (as `| true`)
    _, stderr = run.communicate(timeout=300)
    assert stderr.decode() == ""
    assert run.returncode == ExitCode.OK
    assert (out / "letters.txt").read_text(encoding="utf-8").strip()


def test_an_xfa_form_is_read_without_a_warning_to_rebuild_pdfium(
    env: dict[str, str], pdf: Path, tmp_path: Path
) -> None:
    """This PDFium reads no XFA; pypdfium2 warned of it on stderr, asking for another build. The
    form's AcroForm part and the pages are read all the same, and nothing is said."""
    with pikepdf.open(pdf) as document:
        template = document.make_stream(
            b'<xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/"><template/></xdp:xdp>'
        )
        document.Root.AcroForm = pikepdf.Dictionary(Fields=pikepdf.Array(), XFA=template)
        document.save(tmp_path / "form.pdf")
    result = run_cli(["run", str(tmp_path / "form.pdf"), "--out", str(tmp_path / "out")], env)
    assert result.returncode == ExitCode.OK, result.stderr
    assert result.stderr == ""
    assert (tmp_path / "out" / "form.txt").read_text(encoding="utf-8").strip()
