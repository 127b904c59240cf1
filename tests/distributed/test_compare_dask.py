"""`tcrex compare --scheduler` on a real Dask scheduler and nanny worker (loopback): the counts of every file,
added on the driver, give the in-memory compare_models result; people Parquet per input file."""
import json
import os
import shutil
import socket
import subprocess
import sys

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from tcrex import TCREx  # noqa: E402
from tcrex.compare import ComparisonResult, compare_models  # noqa: E402
from tcrex.cli import main  # noqa: E402
from tcrex.datasets import LOANS_MODEL, LOANS_MODEL_B, SAMPLE_DATA_DIR, load_bundled_loans  # noqa: E402

DASK = shutil.which("dask", path=os.path.dirname(sys.executable)) or shutil.which("dask")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(DASK is None, reason="the `dask` command is not installed")
def test_cli_compare_on_a_dask_cluster_equals_in_memory(tmp_path):
    from click.testing import CliRunner

    from tcrex.intake import load_model
    frame = load_bundled_loans().drop(columns=["approved"]).iloc[:700]
    frame.iloc[:300].to_parquet(tmp_path / "p0.parquet", index=False)
    frame.iloc[300:].to_csv(tmp_path / "p1.csv", index=False)
    model_a, model_b = SAMPLE_DATA_DIR / LOANS_MODEL, SAMPLE_DATA_DIR / LOANS_MODEL_B
    ex = TCREx(rho=0.05, target=1).fit(frame, load_model(model_a.read_bytes(), LOANS_MODEL))
    (tmp_path / "rules.json").write_text(ex.to_json())
    port = _free_port()
    # a plain nanny worker, as deployed: its worker process is daemonic, and the model sandbox starts anyway
    env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("DASK_DISTRIBUTED__WORKER__DAEMON", None)
    sched = subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--dashboard-address",
                              ":0", "--no-show"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([DASK, "worker", f"tcp://127.0.0.1:{port}", "--nworkers", "1", "--nthreads", "1",
                               "--no-dashboard", "--local-directory", str(tmp_path / "w")], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with distributed.Client(f"tcp://127.0.0.1:{port}", timeout=30) as c:
            c.wait_for_workers(1, timeout=30)
        res = CliRunner().invoke(main, ["compare", "--rules", str(tmp_path / "rules.json"), "--model", str(model_a),
                                        "--model-b", str(model_b), "--data", str(tmp_path / "p*"),
                                        "--group-column", "employment", "--n-boot", "60", "--out",
                                        str(tmp_path / "cmp.json"), "--people-out", str(tmp_path / "people"),
                                        "--scheduler", f"tcp://127.0.0.1:{port}"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
    finally:
        for p in (worker, sched):
            p.terminate()
        for p in (worker, sched):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
    got = ComparisonResult.from_json((tmp_path / "cmp.json").read_text())
    want = compare_models(TCREx.from_json(ex.to_json()), frame, load_model(model_b.read_bytes(), LOANS_MODEL_B),
                          model_a=load_model(model_a.read_bytes(), LOANS_MODEL), groups="employment", n_boot=60)
    assert got.findings() == want.findings()
    assert json.loads(got.to_json(people=False))["summary"] == json.loads(want.to_json(people=False))["summary"]
    pd.testing.assert_frame_equal(got.gaps, want.gaps)
    people = pd.concat([pd.read_parquet(tmp_path / "people" / f) for f in ("p0.parquet", "p1.parquet")],
                       ignore_index=True)
    assert people["change"].tolist() == want.people["change"].astype(str).tolist()
