"""The `tcrex` command line gives exactly the in-process TCREx.from_json(...).explain result."""
import json
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.cli import main
from tcrex.datasets import make_loans


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    X = make_loans(3000, random_state=1)
    X["score"] = X.pop("approved")
    parts = [X.iloc[:1000], X.iloc[1000:1700], X.iloc[1700:]]
    for i, p in enumerate(parts):
        p.to_parquet(d / f"part{i}.parquet", index=False)
    return d, X, parts


def _run(*args):
    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return res


def _fit(d):
    res = _run("fit", "--data", str(d / "*.parquet"), "--y-pred-column", "score", "--rho", "0.05",
               "--out", str(d / "rules.json"))
    assert res.exit_code == 0, res.output
    return (d / "rules.json").read_text()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_explain_matches_in_process(data, workers, tmp_path):
    d, X, parts = data
    rules = _fit(d)
    ex = TCREx.from_json(rules)
    res = _run("explain", "--rules", str(d / "rules.json"), "--data", str(d / "*.parquet"), "--y-pred-column",
               "score", "--out", str(tmp_path / "out"), "--keep-columns", "age", "--workers", workers,
               "--batch-size", "333")
    assert res.exit_code == 0, res.output
    for i, p in enumerate(parts):
        got = pd.read_parquet(tmp_path / "out" / f"part{i}.parquet")
        want = ex.explain(p.drop(columns=["score"]).reset_index(drop=True), y_pred=p["score"].to_numpy())
        want["age"] = p["age"].to_numpy()
        pd.testing.assert_frame_equal(got, want, check_categorical=False, check_dtype=False)
        assert list(got.columns) == ["target", "rule", "metarule", "changes", "status", "text", "age"]


def test_memory_urls(data):
    import fsspec
    d, X, parts = data
    rules = _fit(d)
    fs = fsspec.filesystem("memory")
    for i, p in enumerate(parts):
        with fs.open(f"/in/part{i}.parquet", "wb") as fh:
            p.to_parquet(fh, index=False)
    res = _run("explain", "--rules", str(d / "rules.json"), "--data", "memory://in/*.parquet",
               "--y-pred-column", "score", "--out", "memory://out")
    assert res.exit_code == 0, res.output
    ex = TCREx.from_json(rules)
    with fs.open("/out/part1.parquet", "rb") as fh:
        got = pd.read_parquet(fh)
    p = parts[1]
    want = ex.explain(p.drop(columns=["score"]).reset_index(drop=True), y_pred=p["score"].to_numpy())
    pd.testing.assert_frame_equal(got, want, check_categorical=False, check_dtype=False)


def test_audit_matches_in_memory(data, tmp_path):
    from tcrex.audit import audit
    d, X, _ = data
    rules = _fit(d)
    res = _run("audit", "--rules", str(d / "rules.json"), "--data", str(d / "*.parquet"), "--y-pred-column",
               "score", "--group-column", "home_ownership", "--target", "1", "--n-boot", "50", "--out", str(tmp_path / "a.json"))
    assert res.exit_code == 0, res.output
    got = json.loads((tmp_path / "a.json").read_text())
    want = audit(TCREx.from_json(rules), X.drop(columns=["score"]), "home_ownership",
                 y_pred=X["score"].to_numpy(), n_boot=50, target=1)
    assert got["findings"] == want.findings()
    assert [g["group"] for g in got["groups"]] == want.groups
    assert sum(g["n_total"] for g in got["groups"]) == len(X)


def test_errors_are_messages_not_tracebacks(data, tmp_path):
    d, _, _ = data
    res = CliRunner().invoke(main, ["explain", "--rules", str(d / "nope.json"), "--data", str(d / "*.parquet"),
                                    "--y-pred-column", "score", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "error:" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(main, ["fit", "--data", str(d / "none*.parquet"), "--y-pred-column", "s",
                                    "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 2 and "no input files" in res.output


def test_check_model(tmp_path):
    from tcrex.datasets import LOANS_MODEL, SAMPLE_DATA_DIR
    pd.read_csv(SAMPLE_DATA_DIR / "loans.csv").drop(columns=["approved"]).head(200).to_csv(tmp_path / "x.csv",
                                                                                           index=False)
    res = _run("check-model", str(SAMPLE_DATA_DIR / LOANS_MODEL), "--data", str(tmp_path / "x.csv"))
    assert res.exit_code == 0 and "accepted" in res.output
    bad = tmp_path / "m.pkl"
    import pickle
    bad.write_bytes(pickle.dumps({"a": 1}))
    res = _run("check-model", str(bad))
    assert res.exit_code == 1 and "refused" in res.output


def test_python_m_tcrex_help():
    out = subprocess.run([sys.executable, "-m", "tcrex", "--help"], capture_output=True, text=True, check=True)
    for cmd in ("fit", "explain", "audit", "check-model"):
        assert cmd in out.stdout


def test_fit_on_sample_recounts_on_all_rows(data, tmp_path):
    d, X, _ = data
    res = CliRunner().invoke(main, ["fit", "--data", str(d / "*.parquet"), "--y-pred-column", "score", "--rho",
                                    "0.05", "--sample", "800", "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    assert "recounted every candidate rule on all 3,000 rows" in res.output
    ex = TCREx.from_json((tmp_path / "r.json").read_text())
    assert len(ex.rules_frame()) > 0
