"""A ``tcrex explain`` process killed at any moment (SIGTERM as a scheduler's timeout sends it, SIGKILL as the
kernel's out-of-memory killer does) leaves only complete files under their final names: every visible output
reads back whole, with all the rows of its input. SIGTERM also removes the unfinished file; SIGKILL leaves at most
a hidden ``.NAME.partial-`` file, which no ``*.parquet`` glob, pyarrow or Dask reads.

Each moment is an event the test waits for (a file appearing in the output folder), never a time."""
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

xgboost = pytest.importorskip("xgboost")

from tcrex import TCREx  # noqa: E402
from tcrex.datasets import make_loans  # noqa: E402
from tcrex.intake import load_model  # noqa: E402
from tcrex.outputs import is_partial  # noqa: E402

from tests.support.builders import xgb_classifier  # noqa: E402
from tests.support.servers import wait_until  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ROWS = 2000


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("killed")
    X = make_loans(3 * ROWS, random_state=11)
    y = X.pop("approved").to_numpy()
    (d / "m.json").write_bytes(xgb_classifier(X, y, n_estimators=10)[0])
    ex = TCREx(rho=0.05).fit(X, load_model((d / "m.json").read_bytes(), "m.json", sandbox=False))
    (d / "rules.json").write_text(ex.to_json())
    (d / "in").mkdir()
    for i in range(3):
        X.iloc[i * ROWS:(i + 1) * ROWS].to_parquet(d / "in" / f"p{i}.parquet", index=False)
    return d


def _events(out: Path):
    """What the output folder shows: hidden unfinished files and finished files, by name."""
    names = os.listdir(out) if out.exists() else []
    return {n for n in names if is_partial(n)}, {n for n in names if not n.startswith(".")}


def _wait(proc, out, moment):
    """Poll the output folder until ``moment(partials, finished)`` holds; False when the run ended first."""
    wait_until(lambda: proc.poll() is not None or moment(*_events(out)), "the moment or the run's end",
               limit_s=600, every_s=0.005)
    return proc.poll() is None


MOMENTS = {  # (name, the condition the folder shows)
    "first file being written": lambda partial, done: "p0.parquet" in {p.split(".partial-")[0][1:] for p in partial},
    "first file finished": lambda partial, done: "p0.parquet" in done,
    "second file being written": lambda partial, done: "p1.parquet" in {p.split(".partial-")[0][1:]
                                                                        for p in partial},
}


@pytest.mark.slow  # a fresh interpreter and a model sandbox per run: `make test`, not `make test-fast`
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("moment", list(MOMENTS))
def test_a_killed_explain_leaves_only_complete_files(inputs, tmp_path, sig, moment):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "tcrex", "explain", "--rules", str(inputs / "rules.json"),
                             "--data", str(inputs / "in"), "--model", str(inputs / "m.json"), "--out", str(out),
                             "--batch-size", "50"], env=env, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        seen = _wait(proc, out, MOMENTS[moment])
        assert seen, f"the run ended before '{moment}': {proc.stderr.read()}"
        os.kill(proc.pid, sig)
        err = proc.communicate()[1]
    finally:
        try:  # the model's sandbox worker too (started by this test, in the run's own session)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    partial, done = _events(out)
    for name in done:  # every visible file is a whole output: all the rows of its input
        assert pq.read_metadata(out / name).num_rows == ROWS, name
    assert "p2.parquet" not in done  # stopped before the last file
    if sig == signal.SIGTERM:
        assert proc.returncode == 143, err
        assert "stopped by SIGTERM" in err and "Traceback" not in err, err
        assert not partial, partial  # the unfinished file removed
    else:
        assert proc.returncode == -signal.SIGKILL
        assert all(name.startswith(".") for name in partial)
