"""A monitor run on a Dask cluster started as deployed (`dask scheduler` and a nanny `dask worker` program), through
the API and `tcrex monitor run --scheduler`: the people are re-checked in partitions on the worker, whose model sandbox starts inside the nanny's daemonic worker,
and the run equals the one-process run person by person and group by group."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from tcrex.cli import main
from tcrex.monitor import Monitor

from tests.support.monitor_case import GROUPS, ID, POLICY, build


@pytest.fixture(scope="module")
def small_case(tmp_path_factory):
    return build(tmp_path_factory.mktemp("monitor-dask-case"), n_people=500)


def _monitor(store, case, scheduler):
    mon = Monitor(store)
    first = mon.init("credit", rules=case.rules, people=case.people, id_column=ID, model=case.models["v1"],
                     version="v1", groups=GROUPS, reference_rows=case.fit_rows, policy=POLICY, n_boot=200,
                     scheduler=scheduler, partition_rows=120)  # several partitions for 500 people
    second = mon.run("credit", model=case.models["v3"], version="v3", scheduler=scheduler, partition_rows=120)
    return mon, first, second


def test_a_run_on_a_dask_cluster_equals_the_one_process_run(small_case, dask_programs, tmp_path):
    with dask_programs(tmp_path / "dask", nthreads=2) as address:
        on_dask, d1, d3 = _monitor(tmp_path / "dask-store", small_case, address)
        cli = CliRunner().invoke(main, ["monitor", "run", "--store", str(tmp_path / "dask-store"), "--name", "credit",
                                        "--model", str(small_case.models["v1"]), "--version", "v1-again",
                                        "--scheduler", address, "--json", str(tmp_path / "again.json")],
                                 catch_exceptions=False)
        assert cli.exit_code == 0, cli.output
    here, h1, h3 = _monitor(tmp_path / "local-store", small_case, None)
    again = here.run("credit", model=small_case.models["v1"], version="v1-again")
    doc = json.loads((tmp_path / "again.json").read_text())
    assert doc["groups"] == again.to_dict()["groups"] and doc["n_kept"] == again.counts["kept"]
    for a, b in ((d1, h1), (d3, h3)):
        assert a.counts == b.counts
        assert a.to_dict()["groups"] == b.to_dict()["groups"]
        assert [x.message for x in a.alerts] == [x.message for x in b.alerts]
    pd.testing.assert_frame_equal(on_dask.people("credit", "v3"), here.people("credit", "v3"))
    pd.testing.assert_frame_equal(on_dask.people("credit", "v1-again"), here.people("credit", "v1-again"))
    assert d3.alerts  # the degraded version is caught on the cluster too
