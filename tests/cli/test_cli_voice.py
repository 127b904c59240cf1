"""The command line speaks to its users and gives the API's answers: check-model takes the columns
fit takes, id- and label-like features are named, messages name options (not keyword arguments) and blame a file
only for its own faults, no library warning reaches the terminal, and compare with --reference-rows equals
compare_models in memory; without reference rows every verifying command says what it could not do."""
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.cli import main
from tcrex.datasets import LOANS_MODEL, LOANS_MODEL_B, SAMPLE_DATA_DIR, load_bundled_loans

MODEL, MODEL_B = str(SAMPLE_DATA_DIR / LOANS_MODEL), str(SAMPLE_DATA_DIR / LOANS_MODEL_B)


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _loans(n=900):
    return load_bundled_loans().iloc[:n]


@pytest.mark.slow  # sandboxed model intake
def test_check_model_accepts_the_file_fit_accepts(tmp_path):
    frame = _loans(300).rename(columns={"approved": "target"})
    frame.insert(0, "id", range(1000, 1300))
    frame.to_csv(tmp_path / "x.csv", index=False)
    res = _run("fit", "--data", tmp_path / "x.csv", "--model", MODEL, "--rho", "0.05", "--target", "1", "--out",
               tmp_path / "r.json")
    assert res.exit_code == 0, res.output
    res = _run("check-model", MODEL, "--data", tmp_path / "x.csv")
    assert res.exit_code == 0, res.output
    assert "the model and the data are compatible" in res.output
    assert "left out: id, target" in res.output  # the columns the model does not use, in one line
    res = _run("check-model", MODEL, "--data", tmp_path / "x.csv", "--drop-column", "id")
    assert res.exit_code == 0 and "left out: target" in res.output
    res = _run("check-model", MODEL, "--data", tmp_path / "x.csv", "--drop-column", "nope")
    assert res.exit_code == 2 and "--drop-column" in res.output and "'nope'" in res.output


def test_fit_on_outputs_names_id_and_label_columns_that_become_features(tmp_path):
    frame = _loans(400).rename(columns={"approved": "label"})
    frame.insert(0, "customer_id", range(5000, 5400))
    frame["score"] = frame["label"]
    frame.to_parquet(tmp_path / "x.parquet", index=False)
    res = _run("fit", "--data", tmp_path / "x.parquet", "--y-pred-column", "score", "--rho", "0.05", "--out",
               tmp_path / "r.json")
    assert res.exit_code == 0, res.output
    warning = [line for line in res.output.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "'customer_id'" in warning[0] and "'label'" in warning[0]
    assert "--drop-column customer_id --drop-column label" in warning[0]
    res = _run("fit", "--data", tmp_path / "x.parquet", "--y-pred-column", "score", "--drop-column", "customer_id",
               "--drop-column", "label", "--rho", "0.05", "--out", tmp_path / "r2.json")
    assert res.exit_code == 0 and "warning:" not in res.output
    assert set(TCREx.from_json((tmp_path / "r2.json").read_text()).schema_.names) == set(_loans(1).columns) - {
        "approved"}


def test_a_settings_error_names_the_option_not_the_file(tmp_path):
    frame = _loans(600)
    frame.iloc[:300].to_parquet(tmp_path / "part-0.parquet", index=False)
    res = _run("fit", "--data", tmp_path / "part-0.parquet", "--y-pred-column", "approved", "--rho", "0.05",
               "--out", tmp_path / "r.json")
    assert res.exit_code == 0, res.output
    res = _run("audit", "--rules", tmp_path / "r.json", "--data", tmp_path / "part-0.parquet", "--y-pred-column",
               "approved", "--group-column", "employment", "--out", tmp_path / "a.json")
    assert res.exit_code == 2
    assert res.output.startswith("error: ") and "give --target" in res.output and "--target 1" in res.output
    assert "target=" not in res.output and "part-0.parquet" not in res.output and "rows 1" not in res.output
    frame.iloc[300:].assign(income="many").to_parquet(tmp_path / "part-1.parquet", index=False)
    res = _run("audit", "--rules", tmp_path / "r.json", "--data", tmp_path / "part-1.parquet", "--y-pred-column",
               "approved", "--group-column", "employment", "--target", "1", "--out", tmp_path / "a.json")
    assert res.exit_code == 2 and "part-1.parquet" in res.output  # the file's own fault: named


def test_our_not_fitted_error_is_scikit_learns():
    import sklearn.exceptions

    from tcrex.errors import NotFittedError, TCRExError
    assert issubclass(NotFittedError, sklearn.exceptions.NotFittedError) and issubclass(NotFittedError, TCRExError)
    with pytest.raises(sklearn.exceptions.NotFittedError, match="not fitted"):
        TCREx().explain(_loans(5))


def test_labels_passed_as_the_model_point_to_y_pred():
    from tcrex.errors import ModelError
    X = _loans(300)
    y = X.pop("approved")
    with pytest.raises(ModelError, match=r"pandas Series of 300 values, not a model.*y_pred="):
        TCREx(rho=0.05).fit(X, y)
    with pytest.raises(ModelError, match=r"NumPy array.*y_pred="):
        TCREx(rho=0.05).fit(X, y.to_numpy())


@pytest.mark.slow  # a fresh interpreter and a sandboxed scikit-learn model
def test_a_skops_pipeline_leaves_no_library_warning_on_the_terminal(tmp_path):
    """A ColumnTransformer with n_jobs runs joblib's process pool in the sandbox worker; killed at once, the worker
    left semaphores and folders that loky's resource tracker reported as leaked on stderr."""
    skops_io = pytest.importorskip("skops.io")
    from sklearn.compose import make_column_transformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    frame = _loans(600)
    y = frame.pop("approved")
    text = ["employment", "home_ownership", "purpose"]
    model = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), text),
                                                  (StandardScaler(), [c for c in frame if c not in text]), n_jobs=2),
                          LogisticRegression(max_iter=500)).fit(frame, y)
    skops_io.dump(model, tmp_path / "m.skops")
    frame.to_parquet(tmp_path / "x.parquet", index=False)
    out = subprocess.run([sys.executable, "-m", "tcrex", "fit", "--data", str(tmp_path / "x.parquet"), "--model",
                          str(tmp_path / "m.skops"), "--rho", "0.05", "--target", "1", "--out",
                          str(tmp_path / "r.json")], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr and "leaked" not in out.stderr, out.stderr


def test_a_restored_explainer_without_reference_rows_says_so():
    from tcrex.datasets import load_bundled_model
    from tcrex.vocabulary import recourse_outcome
    frame = _loans().drop(columns=["approved"])
    model = load_bundled_model()
    ex = TCREx.from_json(TCREx(rho=0.05, target=1).fit(frame.iloc[:600], model).to_json())
    cf = ex.counterfactuals(frame.iloc[600:], model=model)
    none = cf.loc[recourse_outcome(cf) == "none", "text"]
    assert len(none) and all("holds no reference rows" in t and "no reference row reaches" not in t for t in none)
    cf = ex.counterfactuals(frame.iloc[600:], model=model, reference=frame.iloc[:600])
    assert not cf["text"].str.contains("holds no reference rows").any()


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    """Rules of model A fitted in memory on 600 rows (their JSON written), the rows to compare in two files."""
    from tcrex.intake import load_model
    d = tmp_path_factory.mktemp("compare")
    frame = _loans().drop(columns=["approved"])
    fit, rows = frame.iloc[:600], frame.iloc[600:]
    fit.to_parquet(d / "fit.parquet", index=False)
    (d / "rows").mkdir()
    rows.iloc[:150].to_parquet(d / "rows" / "r0.parquet", index=False)
    rows.iloc[150:].to_csv(d / "rows" / "r1.csv", index=False)
    model_a = load_model(Path(MODEL).read_bytes(), LOANS_MODEL)
    model_b = load_model(Path(MODEL_B).read_bytes(), LOANS_MODEL_B)
    ex = TCREx(rho=0.05, target=1).fit(fit, model_a)
    (d / "rules.json").write_text(ex.to_json())
    return d, ex, fit, rows, model_a, model_b


def _comparable(doc: dict) -> dict:
    """A comparison's JSON with the names of the rows B was fitted on and A's rules measured on made equal (the
    API says "the fit rows of explainer A", the CLI "the reference rows"), and its cost sums rounded (files add
    them in another order)."""
    text = json.dumps(doc).replace("the fit rows of explainer A", "ROWS").replace(
        "the reference rows (reference_rows=)", "ROWS")

    def rounded(v):
        if isinstance(v, float):
            return round(v, 9)
        if isinstance(v, dict):
            return {k: rounded(x) for k, x in v.items()}
        if isinstance(v, list):
            return [rounded(x) for x in v]
        return v
    return rounded(json.loads(text))


def test_cli_compare_with_reference_rows_is_compare_models_in_memory(two_models, tmp_path):
    """The CLI said "645 people lose recourse, 50 gain it" where compare_models said 0 and 0; with the
    rows A was fitted on as --reference-rows it gives exactly the in-memory answer of the explainer before export."""
    from tcrex.compare import ComparisonResult, compare_models
    d, ex, fit, rows, model_a, model_b = two_models
    want = compare_models(ex, rows, model_b, model_a=model_a, groups="employment", n_boot=50)
    res = _run("compare", "--rules", d / "rules.json", "--model", MODEL, "--model-b", MODEL_B, "--data", d / "rows",
               "--reference-rows", d / "fit.parquet", "--group-column", "employment", "--n-boot", "50",
               "--batch-size", "100", "--out", tmp_path / "c.json")
    assert res.exit_code == 0, res.output
    assert "note:" not in res.output  # nothing left undone
    assert "fitted model B's rules on the reference rows" in res.output
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["verification"] == {"reference_rows": str(d / "fit.parquet"), "not_done": None, "rows_affected": None}
    got = ComparisonResult.from_json((tmp_path / "c.json").read_text())
    assert got.headline() == want.headline()
    assert got.summary["n_lost"] == want.summary["n_lost"] and got.summary["n_gained"] == want.summary["n_gained"]
    w, g = json.loads(want.to_json(people=False)), json.loads(got.to_json(people=False))
    assert w["explainer_b_fit_on"] == "the fit rows of explainer A"
    assert g["explainer_b_fit_on"] == g["rules_measured_on"] == "the reference rows (reference_rows=)"
    assert _comparable(g) == _comparable(w)
    # the API given the same restored explainer and reference rows says the same, names included
    api = compare_models(TCREx.from_json(ex.to_json()), rows, model_b, model_a=model_a, groups="employment",
                         n_boot=50, reference_rows=fit)
    assert _comparable(json.loads(api.to_json(people=False))) == _comparable(g)
    assert api.explainer_b_fit_on == got.explainer_b_fit_on


def test_verifying_commands_without_reference_rows_say_what_they_could_not_do(two_models, tmp_path):
    """One stderr line and the output's metadata: what was not done and how many people it left at 'none' — the
    figure equals the in-memory count of a restored explainer without reference rows."""
    from tcrex.compare import compare_models
    from tcrex.vocabulary import recourse_outcome
    d, ex, fit, rows, model_a, model_b = two_models
    restored = TCREx.from_json(ex.to_json())
    cf = restored.counterfactuals(rows, model=model_a)
    n_none = int((recourse_outcome(cf) == "none").sum())
    assert n_none > 0  # the case the notes are about

    res = _run("explain", "--verified", "--rules", d / "rules.json", "--data", d / "rows", "--model", MODEL,
               "--out", tmp_path / "cf")
    assert res.exit_code == 0, res.output
    notes = [line for line in res.output.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "--reference-rows" in notes[0] and f"{n_none} people needing recourse" in notes[0]
    meta = [json.loads(pq.read_metadata(tmp_path / "cf" / f).metadata[b"tcrex.verification"])
            for f in ("r0.parquet", "r1.parquet")]
    assert sum(m["rows_affected"] for m in meta) == n_none
    assert all(m["reference_rows"] is None and m["not_done"] for m in meta)

    res = _run("audit", "--rules", d / "rules.json", "--data", d / "rows", "--model", MODEL, "--group-column",
               "employment", "--n-boot", "20", "--out", tmp_path / "a.json")
    assert res.exit_code == 0, res.output
    notes = [line for line in res.output.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and f"{n_none} people needing recourse" in notes[0]
    doc = json.loads((tmp_path / "a.json").read_text())
    assert doc["verification"]["rows_affected"] == n_none and doc["verification"]["reference_rows"] is None

    res = _run("compare", "--rules", d / "rules.json", "--model", MODEL, "--model-b", MODEL_B, "--data", d / "rows",
               "--n-boot", "20", "--out", tmp_path / "c.json")
    assert res.exit_code == 0, res.output
    notes = [line for line in res.output.splitlines() if line.startswith("note:")]
    assert len(notes) == 1
    mem = compare_models(restored, rows, model_b, model_a=model_a, n_boot=20)
    people = mem.people
    affected = {"model_a": int((people["needs_recourse_a"] & ~people["verified_a"]).sum()),
                "model_b": int((people["needs_recourse_b"] & ~people["verified_b"]).sum())}
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["verification"]["rows_affected"] == affected
    assert f"{affected['model_a']} people needing recourse under model A" in notes[0]
    assert doc["explainer_b_fit_on"] == "the compared rows X"  # the API's default for a restored explainer
