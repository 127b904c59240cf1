"""The wheel stands on its own: built from a copy of the source, installed with its ``app`` extra into a fresh
virtual environment, ``tcrex ui`` (run from an empty folder, nothing of the checkout on the path) starts the
dashboard on the bundled sample and answers its health check.

The fresh environment sees the already installed dependencies through a ``.pth`` line pointing at this
interpreter's site-packages (so nothing is downloaded), and ``pip install --no-index '<wheel>[app]'`` must still
resolve every requirement of the extra: a missing dependency fails the install. pip never removes a distribution
outside the environment it installs into, so the interpreter running the tests is left untouched.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest

from tests.support.servers import answers, serve_on_free_port, stop

pytestmark = pytest.mark.slow  # builds a wheel and a virtual environment: left out of `make test-fast`

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = ["tcrex/_app/app.py", "tcrex/_app/pages/views/home.py", "tcrex/_app/pages/views/data_model.py",
           "tcrex/_app/assets/logo.svg", "tcrex/_app/sample_data/loans.csv", "tcrex/_app/sample_data/loans_model.json",
           "tcrex/_app/sample_data/loans_model.meta.json", "tcrex/_app/sample_data/loans_codebook.csv",
           "tcrex/_app/.streamlit/config.toml"]
_COPY_IGNORE = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                                      ".hypothesis", "test-artifacts", "results")
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, even with http_proxy set


def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", **extra)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src") / "tcrex"
    shutil.copytree(ROOT, src, ignore=_COPY_IGNORE)
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
                   check=True, env=_clean_env(), timeout=600)
    (found,) = dist.glob("tcrex-*.whl")
    return found


def test_wheel_carries_the_app_and_the_sample(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [n for n in BUNDLED if n not in names]
    assert not missing, missing
    assert not any(n.startswith(("tests/", "benchmarks/", "app.py", "pages/")) for n in names)  # only inside tcrex/


def test_wheel_carries_every_sample_file_the_docs_and_the_package_offer(wheel):
    """Docs/compare.md offers the bundled model B; every ``sample_data/`` file that README.md or docs/
    name, and every file name tcrex.datasets defines (LOANS_MODEL_B, ...), is in the wheel. The sample's build
    script is the repository's provenance record (it trains the models), not something the package runs."""
    import re

    from tcrex import datasets
    names = set(zipfile.ZipFile(wheel).namelist())
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    offered = {m for p in docs for m in re.findall(r"sample_data/([\w.-]+\w)", p.read_text(encoding="utf-8"))}
    offered |= {v for k, v in vars(datasets).items() if k.startswith("LOANS") and isinstance(v, str)
                and (ROOT / "sample_data" / v).is_file()}
    offered -= {"build.py"}
    assert "loans_model_b.json" in offered
    missing = sorted(f for f in offered if f"tcrex/_app/sample_data/{f}" not in names)
    assert not missing, missing


def test_installed_wheel_starts_the_dashboard_on_the_bundled_sample(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "zz_shared_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "--no-index", "-q", f"{wheel}[app]"], check=True,
                   env=_clean_env(), timeout=600, cwd=tmp_path)

    work = tmp_path / "elsewhere"  # no checkout, no .streamlit/ here
    work.mkdir()
    where = subprocess.run([str(py), "-c", "import tcrex, tcrex.datasets as d; print(tcrex.__file__); "
                                           "print(d.SAMPLE_DATA_DIR); print(len(d.load_bundled_loans())); "
                                           "print(type(d.load_bundled_model()).__name__)"],
                           check=True, capture_output=True, text=True, env=_clean_env(), cwd=work).stdout.split()
    assert Path(where[0]).is_relative_to(env_dir), where  # the installed package, not the checkout
    assert Path(where[1]) == Path(where[0]).parent / "_app" / "sample_data"
    assert int(where[2]) > 0

    command = lambda port: [str(env_dir / "bin" / "tcrex"), "ui", "--server.port", str(port),  # noqa: E731
                            "--server.address", "127.0.0.1"]
    server, port = serve_on_free_port(command, tmp_path / "server.log", cwd=work, env=_clean_env(),
                                      ready=lambda port: answers(f"http://127.0.0.1:{port}/_stcore/health", "ok"))
    try:
        page = _DIRECT.open(f"http://127.0.0.1:{port}/", timeout=30).read().decode()
        assert "<title>" in page.lower() or "streamlit" in page.lower()
    finally:
        stop(server)
    assert "is not supported" not in (tmp_path / "server.log").read_text()
