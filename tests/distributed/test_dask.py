"""tcrex.distributed on Dask: every mode equals the in-process TCREx.from_json(...).explain."""

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from tcrex import TCREx  # noqa: E402
from tcrex import distributed as tdist  # noqa: E402
from tcrex.cli import main  # noqa: E402
from tcrex.datasets import make_loans  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    X = make_loans(2500, random_state=3)
    X["score"] = X.pop("approved")
    ex = TCREx(rho=0.05, tau=0.9).fit(X.drop(columns=["score"]), y_pred=X["score"].to_numpy())
    return X, ex.to_json()


def _want(X, rules):
    return TCREx.from_json(rules).explain(X.drop(columns=["score"]), y_pred=X["score"].to_numpy())


def _random_partitions(X, seed):
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, len(X)), size=5, replace=False))
    return dd.from_pandas(X, npartitions=1).repartition(divisions=[0, *cuts.tolist(), len(X) - 1])


@pytest.mark.parametrize("strings", ["plain", "dictionary"])
def test_explain_local_cluster_threads(fitted, strings):
    X, rules = fitted
    if strings == "dictionary":
        X = X.astype({c: "category" for c in ("employment", "home_ownership", "purpose")})
    ddf = _random_partitions(X, seed=len(strings))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        out = tdist.explain(ddf, rules, y_pred="score", keep=["age"])
        got = out.compute()
    want = _want(X, rules)
    want["age"] = X["age"]
    pd.testing.assert_frame_equal(got, want, check_categorical=False)
    assert list(out._meta.columns) == list(want.columns)


def test_explain_local_cluster_processes(fitted):
    X, rules = fitted
    ddf = _random_partitions(X, seed=7)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        got = tdist.explain(ddf, rules, y_pred="score").compute()
    pd.testing.assert_frame_equal(got, _want(X, rules), check_categorical=False)


def _in_memory_audit(X, rules, **kw):
    from tcrex.audit import audit
    return audit(TCREx.from_json(rules), X.drop(columns=["score"]), "home_ownership", y_pred=X["score"].to_numpy(),
                 target=1, n_boot=50, **kw)


def test_audit_on_a_local_cluster_equals_in_memory(fitted):
    """Per-partition counts added on the workers (processes) equal the in-memory audit's counts, and the audit
    built from them is the in-memory audit (table, intervals, findings)."""
    from tests.support.audit_checks import assert_counts_equal, assert_same_audit
    X, rules = fitted
    ddf = _random_partitions(X, seed=11)
    want = _in_memory_audit(X, rules)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        counts = tdist.audit_counts(ddf, rules, groups="home_ownership", y_pred="score", target=1)
        got = tdist.audit(ddf, rules, groups="home_ownership", y_pred="score", target=1, n_boot=50)
    assert_counts_equal(counts, want.counts)
    assert_same_audit(got, want)


def test_audit_single_process_dask_equals_in_memory(fitted):
    from tests.support.audit_checks import assert_same_audit
    X, rules = fitted
    got = tdist.audit(_random_partitions(X, seed=12), rules, groups="home_ownership", y_pred="score", target=1,
                      n_boot=50, reference="rest")
    assert_same_audit(got, _in_memory_audit(X, rules, reference="rest"))


def test_audit_files_in_a_process_pool_equal_in_memory(fitted, tmp_path):
    """audit_file per file (Parquet and CSV, several batches each) in a process pool, counts added."""
    from concurrent.futures import ProcessPoolExecutor

    from tcrex.audit import audit_from_counts
    from tests.support.audit_checks import assert_counts_equal, assert_same_audit
    X, rules = fitted
    bounds = [0, 700, 1500, len(X)]
    for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
        part = X.iloc[a:b]
        part.to_csv(tmp_path / f"p{i}.csv", index=False) if i == 1 else \
            part.to_parquet(tmp_path / f"p{i}.parquet", index=False)
    srcs = tdist.expand_paths(str(tmp_path))
    kw = dict(groups="home_ownership", y_pred="score", target=1, batch_size=300)
    with ProcessPoolExecutor(2) as pool:
        counts = sum(f.result() for f in [pool.submit(tdist.audit_file, rules, s, **kw) for s in srcs])
    want = _in_memory_audit(X, rules)
    assert_counts_equal(counts, want.counts)
    assert_same_audit(audit_from_counts(counts, n_boot=50), want)
    serial = sum(tdist.audit_file(rules, s, **kw) for s in srcs)
    assert_counts_equal(serial, want.counts)


def test_cli_explain_and_audit_on_separate_scheduler_and_worker(fitted, tmp_path, dask_programs):
    from click.testing import CliRunner
    X, rules = fitted
    (tmp_path / "rules.json").write_text(rules)
    parts = [X.iloc[:900], X.iloc[900:]]
    for i, p in enumerate(parts):
        p.to_parquet(tmp_path / f"p{i}.parquet", index=False)
    with dask_programs(tmp_path / "w") as address:
        res = CliRunner().invoke(main, ["explain", "--rules", str(tmp_path / "rules.json"), "--data",
                                        str(tmp_path / "p*.parquet"), "--y-pred-column", "score",
                                        "--out", str(tmp_path / "out"), "--scheduler", address],
                                 catch_exceptions=False)
        assert res.exit_code == 0, res.output
        audited = CliRunner().invoke(main, ["audit", "--rules", str(tmp_path / "rules.json"), "--data",
                                            str(tmp_path / "p*.parquet"), "--y-pred-column", "score", "--group-column",
                                            "home_ownership", "--target", "1", "--n-boot", "50", "--out",
                                            str(tmp_path / "audit.json"), "--scheduler", address],
                                     catch_exceptions=False)
        assert audited.exit_code == 0, audited.output
    import json
    got = json.loads((tmp_path / "audit.json").read_text())
    want = _in_memory_audit(X, rules)
    assert got["findings"] == want.findings()
    assert got["gaps"] == json.loads(json.dumps(want.to_dict()["gaps"]))
    assert [g["n"] for g in got["groups"]] == want.table()["n_total"].tolist()
    ex = TCREx.from_json(rules)
    for i, p in enumerate(parts):
        got = pd.read_parquet(tmp_path / "out" / f"p{i}.parquet")
        want = ex.explain(p.drop(columns=["score"]).reset_index(drop=True), y_pred=p["score"].to_numpy())
        pd.testing.assert_frame_equal(got, want, check_categorical=False, check_dtype=False)
