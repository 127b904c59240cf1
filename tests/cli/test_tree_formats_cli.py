"""Every command that takes a model file, with LightGBM and CatBoost files, on Parquet: `check-model`, `fit --model`,
`explain --model` / `--verified`, `audit --model`, `compare --model-b`; each answer equals the engine's in memory on
the model loaded through the intake."""
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.cli import main
from tcrex.intake import load_model

from tests.support import builders as b

pytest.importorskip("lightgbm")
pytest.importorskip("catboost")
pytestmark = pytest.mark.slow  # sandboxed models in CLI runs: `make test`, not `make test-fast`


def _run(*args):
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return res


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A credit-card table in two Parquet files (fit rows, rows to explain), and a LightGBM text model and a CatBoost
    .cbm trained on it with its text columns as categories."""
    d = tmp_path_factory.mktemp("trees-cli")
    X, ys = b.tree_table(n=900)
    X = X.assign(bill_2=X.bill_2.fillna(0))  # the engine needs a value in every cell
    lgb_data, _, _ = b.lgb_model("binary", X=X, y=ys["binary"], n_estimators=25)
    cb_data, _, _ = b.cb_model("binary", X=X, y=ys["binary"], n_estimators=25)
    (d / "model.txt").write_bytes(lgb_data)
    (d / "model.cbm").write_bytes(cb_data)
    X.iloc[:600].to_parquet(d / "fit.parquet", index=False)
    X.iloc[600:].to_parquet(d / "rows.parquet", index=False)
    return d, X.iloc[:600].reset_index(drop=True), X.iloc[600:].reset_index(drop=True)


@pytest.mark.parametrize("name", ["model.txt", "model.cbm"])
def test_check_model_fit_explain_and_audit(files, name, tmp_path):
    from tcrex.audit import audit
    from tcrex.vocabulary import recourse_outcome

    d, fit, rows = files
    model_path = d / name
    res = _run("check-model", model_path, "--data", d / "rows.parquet")
    assert res.exit_code == 0 and "accepted" in res.output, res.output
    assert ("LightGBM" if name.endswith(".txt") else "CatBoost") in res.output
    res = _run("fit", "--data", d / "fit.parquet", "--model", model_path, "--rho", "0.05", "--target", "1",
               "--out", tmp_path / "r.json")
    assert res.exit_code == 0, res.output
    model = load_model(model_path.read_bytes(), name)
    ex = TCREx.from_json((tmp_path / "r.json").read_text())
    assert {f.name for f in ex.schema_.features if f.is_categorical} >= set(b.TREE_TABLE_CATEGORIES)
    res = _run("explain", "--rules", tmp_path / "r.json", "--data", d / "rows.parquet", "--model", model_path,
               "--out", tmp_path / "ex")
    assert res.exit_code == 0, res.output
    got = pd.read_parquet(tmp_path / "ex" / "rows.parquet")
    want = ex.explain(rows, model=model)
    assert got["text"].tolist() == want["text"].tolist()
    res = _run("explain", "--verified", "--rules", tmp_path / "r.json", "--data", d / "rows.parquet", "--model",
               model_path, "--reference-rows", d / "fit.parquet", "--out", tmp_path / "cf")
    assert res.exit_code == 0, res.output
    got = pd.read_parquet(tmp_path / "cf" / "rows.parquet")
    want = ex.counterfactuals(rows, model=model, reference=fit)
    assert got["text"].tolist() == want["text"].tolist()
    assert got["recourse"].astype(object).tolist() == recourse_outcome(want).astype(object).tolist()
    assert (recourse_outcome(want) == "verified").any()
    res = _run("audit", "--rules", tmp_path / "r.json", "--data", d / "rows.parquet", "--model", model_path,
               "--group-column", "sex", "--n-boot", "30", "--reference-rows", d / "fit.parquet",
               "--out", tmp_path / "audit.json")
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "audit.json").read_text())
    mem = audit(ex, rows, "sex", model=model, n_boot=30, reference_rows=fit)
    eff = [g["effectiveness"] for g in doc["groups"]]
    assert eff == [None if v != v else float(v) for v in mem.table()["effectiveness"]]


def test_compare_lightgbm_with_catboost(files, tmp_path):
    """Model A LightGBM, model B CatBoost (and the other way round): `compare --model-b` equals compare_models."""
    from tcrex.compare import ComparisonResult, compare_models

    d, fit, rows = files
    for a, bname in (("model.txt", "model.cbm"), ("model.cbm", "model.txt")):
        res = _run("fit", "--data", d / "fit.parquet", "--model", d / a, "--rho", "0.05", "--target", "1",
                   "--out", tmp_path / f"{a}.json")
        assert res.exit_code == 0, res.output
        res = _run("compare", "--rules", tmp_path / f"{a}.json", "--model", d / a, "--model-b", d / bname,
                   "--data", d / "rows.parquet", "--reference-rows", d / "fit.parquet", "--group-column", "sex",
                   "--n-boot", "30", "--out", tmp_path / f"c-{a}.json")
        assert res.exit_code == 0, res.output
        got = ComparisonResult.from_json((tmp_path / f"c-{a}.json").read_text())
        model_a = load_model((d / a).read_bytes(), a)
        model_b = load_model((d / bname).read_bytes(), bname)
        ex = TCREx.from_json((tmp_path / f"{a}.json").read_text())
        want = compare_models(ex, rows, model_b, model_a=model_a, groups="sex", n_boot=30, reference_rows=fit)
        assert got.headline() == want.headline()
        assert got.summary["n_lost"] == want.summary["n_lost"] and got.summary["n_gained"] == want.summary["n_gained"]


def test_a_damaged_file_is_one_line(files, tmp_path):
    from tests.support import hostile_trees as ht

    d, _, _ = files
    for name, (make, _) in (("m.txt", ht.LGB_MUTATIONS["loop-two-nodes"]), ("m.cbm", ht.CBM_MUTATIONS["split-negative"])):
        (tmp_path / name).write_bytes(make())
        res = _run("check-model", tmp_path / name)
        assert res.exit_code == 1 and "refused" in res.output and "Traceback" not in res.output
        res = _run("explain", "--rules", tmp_path / "none.json", "--data", d / "rows.parquet", "--model",
                   tmp_path / name, "--out", tmp_path / "x")
        assert res.exit_code != 0 and "Traceback" not in res.output
        assert not (tmp_path / "x").exists() or not list((tmp_path / "x").iterdir())
