"""Model files (XGBoost JSON, skops, ONNX) in every kind of worker: the CLI's fit takes its features from
the model, and explain/audit with --model on a nanny-based LocalCluster(processes=True) and on `dask scheduler` +
`dask worker` processes give exactly the in-memory result; hostile files and crashing models on a Dask worker end
in one message naming the file, never a traceback."""
import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

distributed = pytest.importorskip("distributed")
xgboost = pytest.importorskip("xgboost")

from tcrex import TCREx  # noqa: E402
from tcrex import distributed as tdist  # noqa: E402
from tcrex.cli import main  # noqa: E402
from tcrex.datasets import make_loans  # noqa: E402
from tcrex.intake import load_model  # noqa: E402
from tests.support import builders as b  # noqa: E402

NUMERIC = ["age", "income", "loan_amount", "credit_history_years", "debt_to_income", "n_late_payments"]


def _xgb(X, y) -> bytes:
    Xc = X.astype({c: "category" for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])})
    m = xgboost.XGBClassifier(n_estimators=15, max_depth=3, enable_categorical=True, tree_method="hist").fit(Xc, y)
    return bytes(m.get_booster().save_raw("json"))


def _skops_forest(X, y) -> bytes:
    from sklearn.ensemble import RandomForestClassifier
    return b.skops_bytes(RandomForestClassifier(n_estimators=8, max_depth=5, random_state=0).fit(X[NUMERIC], y))


def _onnx(X, y, names=True) -> bytes:
    from sklearn.linear_model import LogisticRegression
    cols = NUMERIC[:3]
    lr = LogisticRegression(max_iter=1000).fit(X[cols].to_numpy(), y)
    W = np.zeros((3, 2), dtype=np.float32)
    W[:, 1] = lr.coef_[0]
    bias = np.array([0.0, lr.intercept_[0]], dtype=np.float32)
    return b.onnx_bytes(b.onnx_linear_classifier(W, bias, names=cols if names else None))


MODELS = {"model.json": _xgb, "model.skops": _skops_forest, "model.onnx": _onnx}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Three Parquet files holding the features plus a label and an id (columns the models do not take), and the
    three model files; rules fitted by `tcrex fit --model` for each."""
    d = tmp_path_factory.mktemp("models")
    X = make_loans(2400, random_state=5)
    y = X.pop("approved").to_numpy()
    frame = X.assign(label=y, id=np.arange(len(X)))
    parts = [frame.iloc[:800], frame.iloc[800:1500], frame.iloc[1500:]]
    for i, p in enumerate(parts):
        p.to_parquet(d / f"part{i}.parquet", index=False)
    rules = {}
    for name, make in MODELS.items():
        (d / name).write_bytes(make(X, y))
        res = CliRunner().invoke(main, ["fit", "--data", str(d / "*.parquet"), "--model", str(d / name), "--rho",
                                        "0.05", "--out", str(d / f"{name}.rules.json")], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        rules[name] = (d / f"{name}.rules.json").read_text()
    return d, parts, rules


def _expected(d, parts, rules, name):
    ex = TCREx.from_json(rules[name])
    model = load_model((d / name).read_bytes(), name, sandbox=False)
    return [ex.explain(p.reset_index(drop=True), model=model) for p in parts]


@pytest.mark.parametrize("name", list(MODELS))
def test_fit_takes_the_features_from_the_model_file(files, name):
    d, parts, rules = files
    ex = TCREx.from_json(rules[name])
    model = load_model((d / name).read_bytes(), name, sandbox=False)
    assert ex.schema_.names == model.feature_names  # never label or id
    res = CliRunner().invoke(main, ["fit", "--data", str(d / "part0.parquet"), "--model", str(d / name), "--rho",
                                    "0.05", "--out", str(d / "again.json")], catch_exceptions=False)
    assert "left out:" in res.output and "label" in res.output and "id" in res.output


def test_fit_with_a_sample_and_a_model_recounts_on_the_models_features(files, tmp_path):
    d, parts, rules = files
    res = CliRunner().invoke(main, ["fit", "--data", str(d / "*.parquet"), "--model", str(d / "model.json"),
                                    "--rho", "0.05", "--sample", "1000", "--batch-size", "500",
                                    "--out", str(tmp_path / "r.json")], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert TCREx.from_json((tmp_path / "r.json").read_text()).schema_.names == \
        TCREx.from_json(rules["model.json"]).schema_.names


def test_fit_refuses_extra_columns_for_a_model_without_feature_names(files, tmp_path):
    d, parts, _ = files
    X = parts[0][NUMERIC[:3]].assign(label=parts[0]["label"].to_numpy())
    X.to_parquet(tmp_path / "x.parquet", index=False)
    (tmp_path / "m.onnx").write_bytes(_onnx(parts[0], parts[0]["label"].to_numpy(), names=False))
    res = CliRunner().invoke(main, ["fit", "--data", str(tmp_path / "x.parquet"), "--model", str(tmp_path / "m.onnx"),
                                    "--out", str(tmp_path / "r.json")], catch_exceptions=False)
    assert res.exit_code == 2
    assert "stores no feature names" in res.output and "label" in res.output and "--drop-column" in res.output
    ok = CliRunner().invoke(main, ["fit", "--data", str(tmp_path / "x.parquet"), "--model", str(tmp_path / "m.onnx"),
                                   "--drop-column", "label", "--rho", "0.05", "--out", str(tmp_path / "r.json")],
                            catch_exceptions=False)
    assert ok.exit_code == 0, ok.output


def test_text_where_the_rules_expect_numbers_is_refused_naming_file_and_column(files, tmp_path):
    d, parts, rules = files
    (tmp_path / "rules.json").write_text(rules["model.json"])
    bad = parts[1].astype({"income": str})
    bad.to_parquet(tmp_path / "b.parquet", index=False)
    parts[0].to_parquet(tmp_path / "a.parquet", index=False)
    res = CliRunner().invoke(main, ["explain", "--rules", str(tmp_path / "rules.json"), "--data",
                                    str(tmp_path / "*.parquet"), "--model", str(d / "model.json"),
                                    "--out", str(tmp_path / "out"), "--batch-size", "300"], catch_exceptions=False)
    assert res.exit_code == 2
    assert "b.parquet, rows 1-300" in res.output and "'income'" in res.output and "numbers" in res.output
    assert "Traceback" not in res.output


def _check_outputs(d, parts, rules, name, out):
    for i, want in enumerate(_expected(d, parts, rules, name)):
        got = pd.read_parquet(out / f"part{i}.parquet")
        pd.testing.assert_frame_equal(got, want, check_categorical=False, check_dtype=False)


@pytest.fixture(scope="module")
def nanny_cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert all(isinstance(w, distributed.Nanny) for w in cluster.workers.values())
        yield cluster, client


@pytest.mark.parametrize("name", list(MODELS))
def test_explain_with_a_model_on_a_nanny_cluster_equals_in_memory(files, nanny_cluster, name, tmp_path):
    d, parts, rules = files
    cluster, client = nanny_cluster
    assert all(client.run(lambda: __import__("multiprocessing").current_process().daemon).values())
    res = CliRunner().invoke(main, ["explain", "--rules", str(d / f"{name}.rules.json"), "--data",
                                    str(d / "*.parquet"), "--model", str(d / name), "--out", str(tmp_path),
                                    "--scheduler", cluster.scheduler_address, "--batch-size", "500"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    _check_outputs(d, parts, rules, name, tmp_path)


def test_audit_with_a_model_on_a_nanny_cluster_equals_in_memory(files, nanny_cluster, tmp_path):
    from tcrex.audit import audit
    d, parts, rules = files
    cluster, _ = nanny_cluster
    res = CliRunner().invoke(main, ["audit", "--rules", str(d / "model.json.rules.json"), "--data",
                                    str(d / "*.parquet"), "--model", str(d / "model.json"), "--group-column",
                                    "home_ownership", "--target", "1", "--n-boot", "50", "--out",
                                    str(tmp_path / "a.json"), "--scheduler", cluster.scheduler_address],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    X = pd.concat(parts, ignore_index=True)
    model = load_model((d / "model.json").read_bytes(), "model.json", sandbox=False)
    want = audit(TCREx.from_json(rules["model.json"]), X, "home_ownership", model=model, target=1, n_boot=50)
    got = json.loads((tmp_path / "a.json").read_text())
    assert got["findings"] == want.findings()
    assert [g["n"] for g in got["groups"]] == want.table()["n_total"].tolist()


QUICK_HOSTILE = ["model/xgboost/mutation-child-out-of-range", "model/skops/schema-object-os-system",
                 "model/onnx/external-data", "model/pickle/pickle-as-m.json"]


@pytest.mark.parametrize("case_name", QUICK_HOSTILE)
def test_hostile_model_files_on_a_dask_worker_give_a_clear_message(files, nanny_cluster, case_name, tmp_path):
    """The worker loads the file itself (as when the driver cannot read the storage the workers read): a refusal
    or a fault comes back as one FileError naming the file, and nothing in the file ran."""
    from tests.support.hostile_corpus import case, model_table
    cluster, client = nanny_cluster
    c = case(case_name)
    marker = tmp_path / "pwned"
    (tmp_path / c.filename).write_bytes(c.make(str(marker)))
    X = model_table(c.table)
    X.to_parquet(tmp_path / "in.parquet", index=False)
    first = X[X.columns[0]]
    rules = TCREx(rho=0.1).fit(X, y_pred=(first > first.median()).astype(int).to_numpy()).to_json()
    fut = client.submit(tdist.explain_parquet_file, rules, str(tmp_path / "in.parquet"), str(tmp_path / "o.parquet"),
                        model_path=str(tmp_path / c.filename), pure=False)
    with pytest.raises(tdist.FileError) as err:
        fut.result()
    text = str(err.value)
    assert text.startswith(str(tmp_path / "in.parquet")) and "Traceback" not in text and len(text) < 1500
    assert not marker.exists() and not (tmp_path / "o.parquet").exists()


def _set_env(name, value):
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def test_a_model_crashing_on_a_nanny_worker_is_one_line_naming_file_and_rows(files, nanny_cluster, tmp_path):
    d, parts, rules = files
    cluster, client = nanny_cluster
    shutil.copy(d / "model.json", tmp_path / "crashing.json")  # a new path: a new sandbox, started with the fault
    client.run(_set_env, "TCREX_SANDBOX_FAULT", "segv")  # the workers' model sandboxes inherit it
    try:
        res = CliRunner().invoke(main, ["explain", "--rules", str(d / "model.json.rules.json"), "--data",
                                        str(d / "part1.parquet"), "--model", str(tmp_path / "crashing.json"),
                                        "--out", str(tmp_path / "out"), "--scheduler", cluster.scheduler_address],
                                 catch_exceptions=False)
    finally:
        client.run(_set_env, "TCREX_SANDBOX_FAULT", None)
    assert res.exit_code == 2
    line = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert line and "part1.parquet, rows 1-700" in line[0] and "crashed" in line[0], res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "out" / "part1.parquet").exists()


@pytest.fixture(scope="module")
def dask_cli_cluster(tmp_path_factory, dask_programs):
    """`dask scheduler` and `dask worker` (a nanny and its worker, 2 threads) started as programs on loopback."""
    with dask_programs(tmp_path_factory.mktemp("w"), nthreads=2) as address:
        yield address


@pytest.mark.parametrize("name", list(MODELS))
def test_explain_with_a_model_on_dask_scheduler_and_worker_programs(files, dask_cli_cluster, name, tmp_path):
    d, parts, rules = files
    res = CliRunner().invoke(main, ["explain", "--rules", str(d / f"{name}.rules.json"), "--data",
                                    str(d / "*.parquet"), "--model", str(d / name), "--out", str(tmp_path),
                                    "--scheduler", dask_cli_cluster, "--keep-columns", "id"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    for i, want in enumerate(_expected(d, parts, rules, name)):
        got = pd.read_parquet(tmp_path / f"part{i}.parquet")
        want["id"] = parts[i]["id"].to_numpy()
        pd.testing.assert_frame_equal(got, want, check_categorical=False, check_dtype=False)


def test_verified_counterfactuals_on_dask_programs_equal_in_memory(files, dask_cli_cluster, tmp_path):
    d, parts, rules = files
    res = CliRunner().invoke(main, ["explain", "--verified", "--rules", str(d / "model.json.rules.json"), "--data",
                                    str(d / "*.parquet"), "--model", str(d / "model.json"), "--out", str(tmp_path),
                                    "--scheduler", dask_cli_cluster, "--keep-columns", "id", "--batch-size", "400"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    _check_verified(d, parts, rules, tmp_path)


def _check_verified(d, parts, rules, out):
    ex = TCREx.from_json(rules["model.json"])
    model = load_model((d / "model.json").read_bytes(), "model.json", sandbox=False)
    for i, p in enumerate(parts):
        want = ex.counterfactuals(p.reset_index(drop=True), model=model, verify=True)
        got = pd.read_parquet(out / f"part{i}.parquet")
        assert list(got.columns) == list(want.columns) + ["id"]
        assert got["id"].tolist() == p["id"].tolist()
        assert [tuple(v) if v is not None else None for v in got["changed"]] == list(want["changed"])
        assert got["recourse"].astype(object).where(got["recourse"].notna(), None).tolist() == \
            want["recourse"].astype(object).where(want["recourse"].notna(), None).tolist()
        # the model's output at each point: none where there is no point (Parquet reads that null back as NaN)
        assert [None if pd.isna(v) else v for v in got["output"]] == [None if v is None else v for v in want["output"]]
        for c in want.columns:
            if c not in ("changed", "recourse", "source", "output"):
                pd.testing.assert_series_equal(got[c], want[c], check_dtype=False, check_categorical=False,
                                               check_names=True)
        assert got["source"].astype(object).tolist() == want["source"].astype(object).tolist()


def test_verified_counterfactuals_in_one_process_and_a_pool(files, tmp_path):
    d, parts, rules = files
    for workers in ("1", "2"):
        out = tmp_path / workers
        res = CliRunner().invoke(main, ["explain", "--verified", "--rules", str(d / "model.json.rules.json"),
                                        "--data", str(d / "*.parquet"), "--model", str(d / "model.json"), "--out",
                                        str(out), "--keep-columns", "id", "--workers", workers,
                                        "--batch-size", "333"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        _check_verified(d, parts, rules, out)
    refused = CliRunner().invoke(main, ["explain", "--verified", "--rules", str(d / "model.json.rules.json"),
                                        "--data", str(d / "*.parquet"), "--y-pred-column", "label", "--out",
                                        str(tmp_path / "x")], catch_exceptions=False)
    assert refused.exit_code == 2 and "--verified" in refused.output and "--model" in refused.output


@pytest.mark.parametrize("workers", ["1", "2"])
def test_explain_with_a_model_batch_by_batch_equals_in_memory(files, workers, tmp_path):
    """Several batches per file: each batch is explained while the model predicts the next one."""
    d, parts, rules = files
    res = CliRunner().invoke(main, ["explain", "--rules", str(d / "model.json.rules.json"), "--data",
                                    str(d / "*.parquet"), "--model", str(d / "model.json"), "--out", str(tmp_path),
                                    "--batch-size", "300", "--workers", workers], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    _check_outputs(d, parts, rules, "model.json", tmp_path)
