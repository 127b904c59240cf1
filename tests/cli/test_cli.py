"""The `tcrex` command line gives exactly the in-process TCREx.from_json(...).explain result."""
import json
from pathlib import Path
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


@pytest.mark.slow  # process-pool workers: `make test`, not `make test-fast`
@pytest.mark.parametrize("workers", ["1", "2"])
def test_audit_matches_in_memory(data, workers, tmp_path):
    from tcrex.audit import audit
    d, X, _ = data
    rules = _fit(d)
    res = _run("audit", "--rules", str(d / "rules.json"), "--data", str(d / "*.parquet"), "--y-pred-column",
               "score", "--group-column", "home_ownership", "--target", "1", "--n-boot", "50", "--out",
               str(tmp_path / "a.json"), "--workers", workers, "--batch-size", "400")
    assert res.exit_code == 0, res.output
    got = json.loads((tmp_path / "a.json").read_text())
    want = audit(TCREx.from_json(rules), X.drop(columns=["score"]), "home_ownership",
                 y_pred=X["score"].to_numpy(), n_boot=50, target=1)
    assert got["findings"] == want.findings()
    assert got["gaps"] == json.loads(json.dumps(want.to_dict()["gaps"]))  # same bootstrap, from the counts
    assert [g["group"] for g in got["groups"]] == want.groups == got["group_labels"]
    # "n" is every row of the group (the schema); the audit table's n (needing recourse) is renamed
    assert sum(g["n"] for g in got["groups"]) == len(X)
    table = want.table().set_index("group")
    for g in got["groups"]:
        assert g["n"] == (X["home_ownership"] == g["group"]).sum() == table.loc[g["group"], "n_total"]
        assert g["n_need_recourse"] == table.loc[g["group"], "n"]
        assert g["n_recourse"] == table.loc[g["group"], "n_recourse"]
        assert "n_total" not in g


def test_explain_refuses_inputs_with_the_same_output_name(data, tmp_path):
    """a.csv and a.parquet would both write a.parquet: refused by name instead of losing half the rows."""
    d, X, parts = data
    _fit(d)
    src = tmp_path / "in"
    src.mkdir()
    parts[0].to_csv(src / "a.csv", index=False)
    parts[1].to_parquet(src / "a.parquet", index=False)
    parts[2].to_parquet(src / "b.parquet", index=False)
    res = CliRunner().invoke(main, ["explain", "--rules", str(d / "rules.json"), "--data", str(src),
                                    "--y-pred-column", "score", "--out", str(tmp_path / "out")])
    assert res.exit_code == 2, res.output
    assert "a.csv" in res.output and "a.parquet" in res.output and "same output file" in res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "out" / "a.parquet").exists() and not (tmp_path / "out" / "b.parquet").exists()


def test_explain_streams_csv_in_chunks_with_the_whole_file_result(data, tmp_path):
    d, X, parts = data
    rules = _fit(d)
    X.to_csv(tmp_path / "all.csv", index=False)
    res = _run("explain", "--rules", str(d / "rules.json"), "--data", str(tmp_path / "all.csv"), "--y-pred-column",
               "score", "--out", str(tmp_path / "out"), "--keep-columns", "purpose,age", "--batch-size", "250")
    assert res.exit_code == 0, res.output
    whole = pd.read_csv(tmp_path / "all.csv")
    want = TCREx.from_json(rules).explain(whole.drop(columns=["score"]), y_pred=whole["score"].to_numpy())
    want["purpose"], want["age"] = whole["purpose"].to_numpy(), whole["age"].to_numpy()
    got = pd.read_parquet(tmp_path / "out" / "all.parquet")
    pd.testing.assert_frame_equal(got, want, check_categorical=False, check_dtype=False)


def test_explain_csv_reads_one_chunk_at_a_time(data, tmp_path):
    """The CSV is parsed in chunks of --batch-size rows (never one whole-file read)."""
    from tcrex.distributed import iter_frames
    d, X, _ = data
    X.to_csv(tmp_path / "all.csv", index=False)
    sizes = [len(f) for f in iter_frames(str(tmp_path / "all.csv"), batch_size=700)]
    assert sizes == [700, 700, 700, 700, 200]


def _without_findings(path, ex) -> dict:
    """The rules JSON a command wrote, its findings (TCREx.fit_findings: their suggestion is searched within a time
    budget) checked by kind against the explainer's and taken out."""
    doc = json.loads(path.read_text())
    kinds = [f["kind"] for f in doc.pop("findings", [])]
    assert kinds == [f.kind for f in ex.fit_findings(budget=0)]
    return doc


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_fit_on_a_streamed_sample_equals_the_in_memory_path(data, fmt, tmp_path):
    """--sample draws the rows pandas' DataFrame.sample would draw, and the streamed recount (summed per batch)
    equals counting all rows at once."""
    d, X, parts = data
    for i, p in enumerate(parts):
        getattr(p, f"to_{fmt}")(tmp_path / f"part{i}.{fmt}", index=False)
    res = _run("fit", "--data", str(tmp_path / f"*.{fmt}"), "--y-pred-column", "score", "--rho", "0.05",
               "--sample", "900", "--seed", "3", "--grower", "exact", "--batch-size", "256",
               "--out", str(tmp_path / "r.json"))
    assert res.exit_code == 0, res.output
    full = pd.concat([pd.read_parquet(tmp_path / f"part{i}.parquet") if fmt == "parquet"
                      else pd.read_csv(tmp_path / f"part{i}.csv") for i in range(3)], ignore_index=True)
    sample = full.sample(n=900, random_state=3).reset_index(drop=True)
    ex = TCREx(rho=0.05, tau=0.9, grower="exact").fit(sample.drop(columns=["score"]),
                                                      y_pred=sample["score"].to_numpy())
    ex.recount(ex.candidate_counts(full.drop(columns=["score"]), y_pred=full["score"].to_numpy()))
    assert _without_findings(tmp_path / "r.json", ex) == json.loads(ex.to_json())
    assert f"recounted every candidate rule on all {len(full):,} rows" in res.output


@pytest.mark.parametrize("grower", ["exact", "hist"])
def test_fit_grower_option(data, grower, tmp_path):
    d, X, _ = data
    res = _run("fit", "--data", str(d / "*.parquet"), "--y-pred-column", "score", "--rho", "0.05", "--grower",
               grower, "--out", str(tmp_path / "r.json"))
    assert res.exit_code == 0, res.output
    ex = TCREx(rho=0.05, tau=0.9, grower=grower).fit(X.drop(columns=["score"]).reset_index(drop=True),
                                                     y_pred=X["score"].to_numpy())
    assert _without_findings(tmp_path / "r.json", ex) == json.loads(ex.to_json())
    bad = CliRunner().invoke(main, ["fit", "--data", str(d / "*.parquet"), "--y-pred-column", "score", "--grower",
                                    "fast", "--out", str(tmp_path / "x.json")])
    assert bad.exit_code == 2 and "fast" in bad.output


@pytest.mark.parametrize("given, expected", [(None, 3), ("2", 2), ("0", None)])
def test_fit_max_changes_option(data, given, expected, tmp_path):
    d, X, _ = data
    extra = ["--max-changes", given] if given is not None else []
    res = _run("fit", "--data", str(d / "*.parquet"), "--y-pred-column", "score", "--rho", "0.05", *extra,
               "--out", str(tmp_path / "r.json"))
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "r.json").read_text())["params"]["max_changes"] == expected
    assert TCREx.from_json((tmp_path / "r.json").read_text()).max_changes == expected
    bad = CliRunner().invoke(main, ["fit", "--data", str(d / "*.parquet"), "--y-pred-column", "score",
                                    "--max-changes", "-1", "--out", str(tmp_path / "x.json")])
    assert bad.exit_code == 2 and "max-changes" in bad.output


def test_errors_are_messages_not_tracebacks(data, tmp_path):
    d, _, _ = data
    res = CliRunner().invoke(main, ["explain", "--rules", str(d / "nope.json"), "--data", str(d / "*.parquet"),
                                    "--y-pred-column", "score", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "error:" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(main, ["fit", "--data", str(d / "none*.parquet"), "--y-pred-column", "s",
                                    "--out", str(tmp_path / "r.json")])
    assert res.exit_code == 2 and "no input files" in res.output


@pytest.mark.slow  # sandboxed model intake: `make test`, not `make test-fast`
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


@pytest.mark.slow  # a fresh interpreter: `make test`, not `make test-fast`
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


def test_parquet_output_reads_back_with_explain_dtypes(data, tmp_path):
    """The Arrow-built output restores explain_columns's columns and dtypes (Int64 ids, categorical status/text)."""
    from tcrex.distributed import explain_columns, explain_parquet_file, load_rules
    d, X, parts = data
    rules = _fit(d)
    parts[2].to_parquet(tmp_path / "in.parquet", index=False)
    n = explain_parquet_file(rules, str(tmp_path / "in.parquet"), str(tmp_path / "out.parquet"), y_pred="score",
                             keep=["age", "purpose"], batch_size=300)
    assert n == len(parts[2])
    got = pd.read_parquet(tmp_path / "out.parquet")
    want = explain_columns(load_rules(rules), parts[2].reset_index(drop=True), y_pred="score", keep=["age", "purpose"])
    assert got.dtypes.astype(str).tolist()[:4] == ["Int64", "Int64", "Int64", "int64"]
    assert isinstance(got["status"].dtype, pd.CategoricalDtype) and isinstance(got["text"].dtype, pd.CategoricalDtype)
    assert list(got["status"].cat.categories) == list(want["status"].cat.categories)
    pd.testing.assert_frame_equal(got, want, check_categorical=False, check_dtype=False)
    pd.testing.assert_frame_equal(got.astype({"text": str, "status": str, "purpose": str}),
                                  want.astype({"text": str, "status": str, "purpose": str}))


@pytest.mark.slow  # process-pool workers: `make test`, not `make test-fast`
def test_audit_with_a_model_counts_verified_recourse_on_the_workers(tmp_path):
    """--model: outputs and verification (effectiveness) computed per file in the pool, equal to in memory."""
    from tcrex.audit import audit
    from tcrex.datasets import LOANS_MODEL, SAMPLE_DATA_DIR
    from tcrex.intake import load_model
    frame = pd.read_csv(SAMPLE_DATA_DIR / "loans.csv").drop(columns=["approved"]).head(700)
    frame.iloc[:300].to_csv(tmp_path / "a.csv", index=False)
    frame.iloc[300:].to_parquet(tmp_path / "b.parquet", index=False)
    model = str(SAMPLE_DATA_DIR / LOANS_MODEL)
    res = _run("fit", "--data", str(tmp_path / "a.csv"), "--model", model, "--rho", "0.05", "--target", "1",
               "--out", str(tmp_path / "r.json"))
    assert res.exit_code == 0, res.output
    res = _run("audit", "--rules", str(tmp_path / "r.json"), "--data", str(tmp_path / "[ab].*"), "--model", model,
               "--group-column", "home_ownership", "--n-boot", "40", "--workers", "2", "--batch-size", "150",
               "--out", str(tmp_path / "audit.json"))
    assert res.exit_code == 0, res.output
    got = json.loads((tmp_path / "audit.json").read_text())
    rules = (tmp_path / "r.json").read_text()
    want = audit(TCREx.from_json(rules), frame, "home_ownership", model=load_model(Path(model).read_bytes(),
                                                                                     LOANS_MODEL), n_boot=40)
    assert got["findings"] == want.findings()
    assert got["gaps"] == json.loads(json.dumps(want.to_dict()["gaps"]))
    eff = [g["effectiveness"] for g in got["groups"]]
    assert all(e is not None for e in eff) and eff == [_none_if_nan(v) for v in want.table()["effectiveness"]]


def _none_if_nan(v):
    return None if v != v else float(v)


def test_csv_kept_column_changing_type_between_chunks_is_a_message(data, tmp_path):
    d, X, _ = data
    _fit(d)
    frame = X.iloc[:600].copy()
    frame["note"] = [str(i) for i in range(300)] + ["text"] * 300  # whole numbers in the first chunk only
    frame.to_csv(tmp_path / "in.csv", index=False)
    res = CliRunner().invoke(main, ["explain", "--rules", str(d / "rules.json"), "--data", str(tmp_path / "in.csv"),
                                    "--y-pred-column", "score", "--keep-columns", "note", "--batch-size", "250",
                                    "--out", str(tmp_path / "out")])
    assert res.exit_code == 2 and "note" in res.output and "change type between chunks" in res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "out" / "in.parquet").exists()  # no partial file that reads as a shorter result


def test_suggest_constraints_prints_json_that_fit_accepts(data, tmp_path):
    d, X, parts = data
    csv = tmp_path / "loans.csv"
    X.to_csv(csv, index=False)
    res = CliRunner().invoke(main, ["suggest-constraints", str(csv), "--drop-column", "score"])
    assert res.exit_code == 0, res.output
    text = res.stdout
    found = json.loads(text)
    assert found == {"age": "increase_only", "credit_history_years": "increase_only", "n_late_payments": "immutable"}
    assert "age: increase_only — " in res.stderr  # the reason per feature, for review
    (tmp_path / "c.json").write_text(text)
    fit = _run("fit", "--data", str(csv), "--y-pred-column", "score", "--rho", "0.05", "--constraints",
               str(tmp_path / "c.json"), "--out", str(tmp_path / "rules.json"))
    assert fit.exit_code == 0, fit.output
    doc = json.loads((tmp_path / "rules.json").read_text())
    assert doc["params"]["constraints"]["n_late_payments"] in ("immutable", {"kind": "immutable"})
    full = CliRunner().invoke(main, ["suggest-constraints", str(csv), "--drop-column", "score", "--with-reasons"])
    assert json.loads(full.stdout)["n_late_payments"]["reason"]
    bad = CliRunner().invoke(main, ["suggest-constraints", str(csv), "--drop-column", "nope"])
    assert bad.exit_code == 2 and "nope" in bad.output


def test_ui_help_says_how_to_start_the_dashboard():
    res = CliRunner().invoke(main, ["ui", "--help"], catch_exceptions=False)
    assert res.exit_code == 0
    assert "Start the dashboard on the bundled loans sample" in res.output and "tcrex[app]" in res.output


@pytest.mark.slow
def test_tcrex_ui_starts_the_dashboard_from_the_checkout(tmp_path):
    """`tcrex ui` from another folder runs the checkout's app.py (with its .streamlit settings) to the health check."""
    import os

    from tests.support.servers import answers, serve_on_free_port, stop

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = lambda port: [sys.executable, "-m", "tcrex", "ui", "--server.port", str(port),  # noqa: E731
                            "--server.address", "127.0.0.1"]
    server, _ = serve_on_free_port(command, tmp_path / "server.log", cwd=tmp_path, env=env,
                                   ready=lambda port: answers(f"http://127.0.0.1:{port}/_stcore/health", "ok"))
    stop(server)  # serving: its health check answered "ok"


def test_reference_rows_give_the_cli_the_in_memory_answer(tmp_path):
    """A rules JSON holds no rows, so the search beyond the rules needs reference rows; with
    --reference-rows (the rows the rules were fitted on) `audit` and `explain --verified` count and write exactly
    what the explainer in memory does."""
    from tcrex.vocabulary import recourse_outcome
    from tcrex.audit import audit
    from tcrex.datasets import LOANS_MODEL, SAMPLE_DATA_DIR
    from tcrex.intake import load_model
    frame = pd.read_csv(SAMPLE_DATA_DIR / "loans.csv").drop(columns=["approved"]).head(900)
    fit_rows, rows = frame.iloc[:600], frame.iloc[600:]
    fit_rows.to_csv(tmp_path / "fit.csv", index=False)
    rows.to_parquet(tmp_path / "rows.parquet", index=False)
    model_path = str(SAMPLE_DATA_DIR / LOANS_MODEL)
    model = load_model(Path(model_path).read_bytes(), LOANS_MODEL)
    res = _run("fit", "--data", str(tmp_path / "fit.csv"), "--model", model_path, "--rho", "0.05", "--target", "1",
               "--out", str(tmp_path / "r.json"))
    assert res.exit_code == 0, res.output
    ex = TCREx.from_json((tmp_path / "r.json").read_text())
    reference = pd.read_csv(tmp_path / "fit.csv")
    res = _run("explain", "--verified", "--rules", str(tmp_path / "r.json"), "--data", str(tmp_path / "rows.parquet"),
               "--model", model_path, "--reference-rows", str(tmp_path / "fit.csv"), "--out", str(tmp_path / "cf"))
    assert res.exit_code == 0, res.output
    got = pd.read_parquet(tmp_path / "cf" / "rows.parquet")
    want = ex.counterfactuals(rows.reset_index(drop=True), model=model, reference=reference)
    assert got["recourse"].astype(object).tolist() == recourse_outcome(want).astype(object).tolist()
    assert got["text"].tolist() == want["text"].tolist()
    assert (want["source"] == "minimal_change").any()  # the reference rows were needed, and used
    res = _run("audit", "--rules", str(tmp_path / "r.json"), "--data", str(tmp_path / "rows.parquet"), "--model",
               model_path, "--group-column", "home_ownership", "--n-boot", "40", "--reference-rows",
               str(tmp_path / "fit.csv"), "--out", str(tmp_path / "audit.json"))
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "audit.json").read_text())
    mem = audit(ex, rows, "home_ownership", model=model, n_boot=40, reference_rows=reference)
    assert [g["effectiveness"] for g in doc["groups"]] == [_none_if_nan(v) for v in mem.table()["effectiveness"]]
    refused = _run("explain", "--rules", str(tmp_path / "r.json"), "--data", str(tmp_path / "rows.parquet"),
                   "--model", model_path, "--reference-rows", str(tmp_path / "fit.csv"), "--out", str(tmp_path / "x"))
    assert refused.exit_code == 2 and "--verified" in refused.output


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_refused_model_stops_explain_before_any_file_in_one_process_and_a_pool(data, workers, tmp_path):
    """On a pool the model file is checked by a worker (no sandbox of the driver's own), still before any
    input is read: one line naming the model file, no output file."""
    d, X, parts = data
    _fit(d)
    bad = tmp_path / "model.json"
    bad.write_text('{"not": "a model"}')
    res = CliRunner().invoke(main, ["explain", "--rules", str(d / "rules.json"), "--data", str(d / "*.parquet"),
                                    "--model", str(bad), "--out", str(tmp_path / "out"), "--workers", workers])
    assert res.exit_code == 2
    assert res.output.startswith(f"error: {bad}: not an XGBoost model") and "Traceback" not in res.output
    assert not list((tmp_path / "out").glob("*.parquet"))
