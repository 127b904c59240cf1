"""Every test here starts a real cluster (Dask scheduler and nanny workers on loopback, or Spark): marked ``cluster``
so the fast tier (``make test-fast``) leaves them out.

``dask_programs`` starts the cluster as it is deployed: ``dask scheduler`` and ``dask worker`` programs."""
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.servers import serve_on_free_port

ROOT = Path(__file__).resolve().parents[2]
DASK = shutil.which("dask", path=os.path.dirname(sys.executable)) or shutil.which("dask")


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.cluster)


@contextlib.contextmanager
def _start_dask_programs(workdir, nthreads: int = 1):
    """`dask scheduler` and `dask worker` (a nanny and one worker of ``nthreads`` threads) as programs on loopback;
    yields the scheduler's address. As deployed: the nanny's worker process is daemonic (no
    ``DASK_DISTRIBUTED__WORKER__DAEMON`` setting), so a model sandbox started there must cope with it."""
    import distributed
    if DASK is None:
        pytest.skip("the `dask` command is not installed")
    os.makedirs(workdir, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("DASK_DISTRIBUTED__WORKER__DAEMON", None)
    # the programs run in their own folder, as deployed: never the client's (a relative path means nothing there)
    log = Path(tempfile.mkdtemp(prefix="dask-scheduler-")) / "scheduler.log"
    sched, port = serve_on_free_port(lambda port: [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                                   "--dashboard-address", ":0", "--no-show"], log, env=env,
                                     cwd=str(workdir))
    address = f"tcp://127.0.0.1:{port}"
    worker = subprocess.Popen([DASK, "worker", address, "--nworkers", "1", "--nthreads", str(nthreads),
                               "--no-dashboard", "--local-directory", str(workdir)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(workdir))
    try:
        with distributed.Client(address, timeout=30) as c:
            c.wait_for_workers(1, timeout=60)
        yield address
    finally:
        for p in (worker, sched):
            p.terminate()
        for p in (worker, sched):
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture(scope="session")
def dask_programs():
    """``with dask_programs(workdir, nthreads=1) as address:`` a scheduler and a worker started as programs."""
    return _start_dask_programs
