"""Fixtures of the monitor's tests: one monitored case (a generated credit table, rules, four model files) per
session, and a monitor of its people run through every version once, shared by the tests that read it."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def case(tmp_path_factory):
    from tests.support.monitor_case import build
    return build(tmp_path_factory.mktemp("monitor-case"))


@pytest.fixture(scope="session")
def monitored(case, tmp_path_factory):
    """``(monitor, results)``: the case's people monitored from v1 through the retrain (v2), the degraded version
    (v3), v3 registered again (v3-again) and the first model registered again (v1-again); ``results`` maps each
    label to its RunResult and ``frames`` to the per-person frame each run stored."""
    from tcrex.monitor import Monitor

    from tests.support.monitor_case import GROUPS, ID, POLICY
    mon = Monitor(tmp_path_factory.mktemp("monitor-store"))
    results = {"v1": mon.init("credit", rules=case.rules, people=case.people, id_column=ID, model=case.models["v1"],
                              version="v1", groups=GROUPS, reference_rows=case.fit_rows, policy=POLICY, n_boot=400)}
    for label, model in (("v2", "v2"), ("v3", "v3"), ("v3-again", "v3"), ("v1-again", "v1")):
        results[label] = mon.run("credit", model=case.models[model], version=label)
    frames = {label: mon.people("credit", label) for label in results}
    return mon, results, frames
