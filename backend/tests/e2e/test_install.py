"""`make install` and `make demo` on a stock Debian Python, in a copy of the working tree: no uv and
no pyenv on PATH, an empty HOME, a system Python that refuses `pip install` (PEP 668). uv is
bootstrapped into .tools, the system Python is left as it was, and the demo reads its scan. The
missing-prerequisite messages run the real Makefile too (as nobody where being root would apt-get)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from rapidfuzz.distance import Levenshtein

from tests.e2e.conftest import REPO_ROOT, outer_uv_cache

# A stock Debian PATH: no uv, no pyenv shims (asserted below, so a different machine fails, not skips).
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SYSTEM_PYTHON = "/usr/bin/python3"
NOBODY = [
    shutil.which("setpriv", path=SYSTEM_PATH) or "setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
    "--",
]
# What reaches pip and the network on this machine; nothing else of the outer environment is kept.
KEPT = ("LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE")
KEPT_PROXY = ("http_proxy", "https_proxy", "no_proxy", "all_proxy")


def _user_pip_config() -> str | None:
    """The developer's own pip.conf, which an empty HOME would hide (pip.conf in /etc stays read)."""
    if "PIP_CONFIG_FILE" in os.environ:
        return os.environ["PIP_CONFIG_FILE"]
    config_home = Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config"))
    for candidate in (config_home / "pip" / "pip.conf", Path.home() / ".pip" / "pip.conf"):
        if candidate.is_file():
            return str(candidate)
    return None


def stock_env(home: Path, path: str = SYSTEM_PATH) -> dict[str, str]:
    env = {"PATH": path, "HOME": str(home), "UV_CACHE_DIR": outer_uv_cache()}
    for name, value in os.environ.items():
        if name in KEPT or name.lower() in KEPT_PROXY or name.startswith("PIP_"):
            env[name] = value
    env.pop("PIP_BREAK_SYSTEM_PACKAGES", None)  # a stock machine does not lift PEP 668
    if (config := _user_pip_config()) is not None:
        env["PIP_CONFIG_FILE"] = config
    return env


def copy_working_tree(dest: Path) -> None:
    """Tracked and untracked, not ignored files as they are now (uncommitted changes included)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO_ROOT / name
        if not source.exists():  # deleted in the working tree
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest / name, follow_symlinks=False)


def make(
    target: str, cwd: Path, env: dict[str, str], *, user: list[str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(user or []), "/usr/bin/make", "--no-print-directory", target],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def own_lines(stderr: str) -> list[str]:
    """stderr without make's own `make: *** [...] Error 1` line, which every failed recipe gets."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("make: ***")]


def cer(reference: str, hypothesis: str) -> float:
    """Character error rate, whitespace runs collapsed."""
    ref, hyp = " ".join(reference.split()), " ".join(hypothesis.split())
    return Levenshtein.distance(ref, hyp) / len(ref)


def system_site_packages() -> dict[str, list[str]]:
    dirs = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import site; print('\\n'.join(site.getsitepackages()))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return {d: sorted(os.listdir(d)) if os.path.isdir(d) else [] for d in dirs}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_make_install_and_demo_on_a_stock_debian_python(tmp_path: Path, empty_home: Path) -> None:
    assert shutil.which("uv", path=SYSTEM_PATH) is None, "uv on the stock PATH: not a stock machine"
    assert shutil.which("python3", path=SYSTEM_PATH) == SYSTEM_PYTHON
    repo, home = tmp_path / "repo", empty_home
    copy_working_tree(repo)
    env = stock_env(home)

    # The simulation is faithful: the system Python refuses pip (--dry-run: nothing installed if not).
    assert Path("/usr/lib/python3.11/EXTERNALLY-MANAGED").is_file()
    refused = subprocess.run(
        [SYSTEM_PYTHON, "-m", "pip", "install", "--dry-run", "uv"], env=env, capture_output=True, text=True
    )
    assert refused.returncode != 0
    assert "externally-managed-environment" in refused.stderr, refused.stderr
    site_before = system_site_packages()

    install = make("install", repo, env)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    assert "installing uv into .tools" in install.stdout
    tools_uv = repo / ".tools" / "bin" / "uv"
    assert subprocess.run([tools_uv, "--version"], capture_output=True, check=False).returncode == 0
    assert (repo / ".venv" / "bin" / "chunk-ocr").is_file()
    # The system Python is as it was.
    assert system_site_packages() == site_before
    no_uv = subprocess.run([SYSTEM_PYTHON, "-m", "uv", "--version"], env=env, capture_output=True, text=True)
    assert no_uv.returncode != 0
    assert "No module named uv" in no_uv.stderr

    demo = make("demo", repo, env)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "installing uv" not in demo.stdout  # the uv bootstrapped before is found in .tools
    assert (home / ".cache" / "chunk-ocr").is_dir()  # the embedded servers, under the empty HOME
    out = repo / "out" / "demo"
    expected = (out / "sample-scan.expected.txt").read_text().split("\f")
    pages = (out / "sample-scan.txt").read_text().split("\f")
    assert len(pages) == len(expected) == 8
    error = cer("\n".join(expected), "\n".join(pages))
    assert error < 0.02, f"character error rate {error:.3%}"


@pytest.fixture
def nobody_dir() -> Iterator[Path]:
    """A directory with the Makefile that nobody (uid 65534) can write to; pytest's tmp_path is 0700."""
    with tempfile.TemporaryDirectory(prefix="install-nobody-") as name:
        path = Path(name)
        path.chmod(0o777)
        shutil.copy2(REPO_ROOT / "Makefile", path / "Makefile")
        yield path


def python_reporting_3_9(bin_dir: Path) -> None:
    """A `python3` on PATH that is the system Python with sys.version_info (3, 9, ...), set by a
    sitecustomize of ours: the Makefile's version check gets 3.9 however it asks."""
    site = bin_dir / "site"
    site.mkdir(parents=True)
    (site / "sitecustomize.py").write_text("import sys\nsys.version_info = (3, 9, 18, 'final', 0)\n")
    script = bin_dir / "python3"
    script.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {SYSTEM_PYTHON} "$@"\n')
    script.chmod(0o755)


def python_without_ensurepip(prefix: Path) -> Path:
    """The system Python as Debian has it without python3-venv: a copy of the interpreter whose
    standard library (symlinks to the real one) lacks ensurepip, so `python3 -m venv` fails. Returns
    its bin directory."""
    real = Path(os.path.realpath(SYSTEM_PYTHON))  # /usr/bin/python3.11
    stdlib = Path(f"/usr/lib/{real.name}")
    (prefix / "bin").mkdir(parents=True)
    shutil.copy2(real, prefix / "bin" / real.name)
    (prefix / "bin" / "python3").symlink_to(real.name)
    (prefix / "lib" / real.name).mkdir(parents=True)
    for entry in stdlib.iterdir():
        if entry.name != "ensurepip":
            (prefix / "lib" / real.name / entry.name).symlink_to(entry)
    return prefix / "bin"


@pytest.mark.timeout(60)
def test_python_older_than_3_11_gets_one_line(nobody_dir: Path) -> None:
    python_reporting_3_9(nobody_dir / "fake")
    env = stock_env(nobody_dir, path=f"{nobody_dir / 'fake'}:{SYSTEM_PATH}")
    done = make("python-deps", nobody_dir, env)  # as root: nothing here would apt-get
    assert done.returncode != 0
    (line,) = own_lines(done.stderr)
    assert line.startswith("make: Python >= 3.11 needed, python3 is 3.9"), line
    assert "apt-get install python3" in line
    assert "brew install python" in line
    assert not (nobody_dir / ".tools").exists()


@pytest.mark.timeout(60)
def test_python_without_venv_gets_one_line_when_not_root(nobody_dir: Path) -> None:
    bin_dir = python_without_ensurepip(nobody_dir / "python")
    env = stock_env(nobody_dir, path=f"{bin_dir}:{SYSTEM_PATH}")
    probe = subprocess.run(
        [bin_dir / "python3", "-m", "venv", nobody_dir / "probe"], env=env, capture_output=True, text=True
    )
    assert probe.returncode != 0
    assert "because ensurepip is not available" in " ".join((probe.stdout + probe.stderr).split()), probe
    done = make("python-deps", nobody_dir, env, user=NOBODY)
    assert done.returncode != 0
    (line,) = own_lines(done.stderr)
    assert line.startswith("make: no uv, and python3 3.11 cannot create a venv"), line
    assert "apt-get install python3-venv" in line
    assert "install uv" in line
    assert "apt" not in done.stdout  # not root: no apt-get attempted
    assert not (nobody_dir / ".tools").exists()


@pytest.mark.timeout(60)
def test_missing_system_binaries_get_one_line_when_not_root(nobody_dir: Path) -> None:
    # A PATH with what the recipe itself runs and none of the OCR tools.
    bin_dir = nobody_dir / "bin"
    bin_dir.mkdir()
    for tool in ("id", "uname"):
        (bin_dir / tool).symlink_to(shutil.which(tool, path=SYSTEM_PATH) or tool)
    bin_dir.chmod(0o755)
    done = make("system-deps", nobody_dir, stock_env(nobody_dir, path=str(bin_dir)), user=NOBODY)
    assert done.returncode == 0, done.stderr  # a warning: the Python side still installs
    (line,) = own_lines(done.stderr)
    assert line.startswith("make: missing tesseract gs groff pdftotext qpdf chromium setpriv;"), line
    assert (
        "apt-get install tesseract-ocr ghostscript groff-base poppler-utils qpdf fonts-dejavu-core chromium"
        in line
    )
    # the language packs the tests read (TESSERACT_LANGS' default), Debian's names for them
    assert "util-linux tesseract-ocr-eng tesseract-ocr-osd tesseract-ocr-rus tesseract-ocr-deu " in line
    assert "brew install tesseract tesseract-lang ghostscript groff poppler qpdf" in line


@pytest.mark.timeout(60)
def test_a_missing_language_pack_gets_one_line_when_not_root(nobody_dir: Path) -> None:
    """tesseract is there, but not every language TESSERACT_LANGS asks for: the binary alone does
    not pass. A code (chi_sim) is named by its Debian package (tesseract-ocr-chi-sim)."""
    assert shutil.which("tesseract", path=SYSTEM_PATH), "tesseract missing: make install first"
    env = stock_env(nobody_dir)
    wanted = "TESSERACT_LANGS=eng rus zzz chi_sim"
    done = subprocess.run(
        [*NOBODY, "/usr/bin/make", "--no-print-directory", "system-deps", wanted],
        cwd=nobody_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # a warning, as for a missing binary
    (line,) = own_lines(done.stderr)
    assert line.startswith("make: missing tesseract-ocr-zzz tesseract-ocr-chi-sim;"), line
    assert "apt-get install tesseract-ocr " in line
    assert line.rstrip().endswith("brew install tesseract tesseract-lang ghostscript groff poppler qpdf"), (
        line
    )

    # what is installed passes without a word: the default languages (installed by make install)
    default = make("system-deps", nobody_dir, env, user=NOBODY)
    assert (default.returncode, own_lines(default.stderr), default.stdout) == (0, [], "")
