"""A Dask nanny worker killed while it runs a job of ``tcrex explain``: the scheduler runs the job again, the
outputs are complete, and the run says so — a warning on stderr naming the worker and the file, and
``workers_lost`` in the run's record (``_tcrex_run.json`` in the output folder). The progress lines of the
workers' batches reach the client's stderr. Every moment is an event (a file appearing), never a time."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

distributed = pytest.importorskip("distributed")
xgboost = pytest.importorskip("xgboost")

from tcrex import TCREx  # noqa: E402
from tcrex.datasets import make_loans  # noqa: E402
from tcrex.intake import load_model  # noqa: E402
from tcrex.outputs import is_partial  # noqa: E402

from tests.support.builders import xgb_classifier  # noqa: E402
from tests.support.servers import wait_until  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ROWS = 1500


@pytest.fixture()
def nanny_cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert all(isinstance(w, distributed.Nanny) for w in cluster.workers.values())
        yield cluster, client


def test_a_worker_lost_mid_job_is_said_and_recorded_and_the_outputs_are_whole(nanny_cluster, tmp_path):
    cluster, client = nanny_cluster
    X = make_loans(2 * ROWS, random_state=8)
    y = X.pop("approved").to_numpy()
    (tmp_path / "m.json").write_bytes(xgb_classifier(X, y, n_estimators=10)[0])
    ex = TCREx(rho=0.05).fit(X, load_model((tmp_path / "m.json").read_bytes(), "m.json", sandbox=False))
    (tmp_path / "rules.json").write_text(ex.to_json())
    (tmp_path / "in").mkdir()
    for i in range(2):
        X.iloc[i * ROWS:(i + 1) * ROWS].to_parquet(tmp_path / "in" / f"p{i}.parquet", index=False)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "tcrex", "explain", "--rules", str(tmp_path / "rules.json"),
                             "--data", str(tmp_path / "in"), "--model", str(tmp_path / "m.json"), "--verified",
                             "--out", str(out), "--batch-size", "100", "--scheduler", cluster.scheduler_address],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True)
    try:
        def running():  # a job is writing its file: the worker running it (or the run's end)
            if out.exists() and any(is_partial(n) for n in os.listdir(out)):
                return next((w for w, keys in client.processing().items() if keys), None)
            return "ended" if proc.poll() is not None else None

        busy = wait_until(running, "a job writing its file", limit_s=600, every_s=0.01)
        busy = None if busy == "ended" else busy
        assert busy is not None, f"the run ended before a job was seen running: {proc.stderr.read()}"
        pid = client.run(os.getpid, workers=[busy])[busy]
        os.kill(pid, signal.SIGKILL)  # the worker process, not its nanny (which starts a new one)
        err = proc.communicate()[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert f"warning: Dask worker {busy} was lost while running 1 job(s)" in err, err
    assert "the scheduler runs them again on the other workers" in err
    record = json.loads((out / "_tcrex_run.json").read_text())
    assert [w["worker"] for w in record["workers_lost"]] == [busy]
    assert len(record["workers_lost"][0]["jobs_rerun"]) == 1
    assert record["rows"] == 2 * ROWS
    for i in range(2):  # each output whole, nothing unfinished left under any name
        assert pq.read_metadata(out / f"p{i}.parquet").num_rows == ROWS
    assert sorted(os.listdir(out)) == ["_tcrex_run.json", "p0.parquet", "p1.parquet"]
    assert f"verified {tmp_path / 'in' / 'p0.parquet'}: " in err and f"/{ROWS:,} rows (" in err  # workers' progress
