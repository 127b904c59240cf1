"""``--value-labels FILE``: the codebook reaches every text the CLI writes and survives its round trips
(fit -> rules JSON -> explain / audit), and a bad codebook is an ``error:`` line, never a traceback."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.cli import main
from tcrex.datasets import LOANS_CODEBOOK, LOANS_VALUE_LABELS, SAMPLE_DATA_DIR, make_loans

CODEBOOK = SAMPLE_DATA_DIR / LOANS_CODEBOOK


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("labels_cli")
    X = make_loans(1500, random_state=3)
    X.pop("approved")  # outputs that depend on the labelled categories, so the rules name them
    X["score"] = (((X.employment == "Salaried") & (X.home_ownership != "Rent")) | (X.income > 90)).astype(int)
    X.to_parquet(d / "loans.parquet", index=False)
    return d, X


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _labelled_values(text: str) -> list[str]:
    """The labelled values a text names as "label (value)"."""
    found = []
    for labels in LOANS_VALUE_LABELS.values():
        for value, label in labels.items():
            if f"{label} ({value})" in text:
                found.append(str(value))
    return found


def _no_bare_value(text: str) -> None:
    for feature, labels in LOANS_VALUE_LABELS.items():
        if feature == "n_late_payments":
            continue  # "0" is also a plain number in other conditions
        for value, label in labels.items():
            assert str(value) not in text.replace(f"{label} ({value})", ""), (value, text)


def test_fit_writes_the_codebook_and_explain_says_the_labels(data, tmp_path):
    d, X = data
    rules = tmp_path / "rules.json"
    res = _run("fit", "--data", d / "loans.parquet", "--y-pred-column", "score", "--rho", "0.05",
               "--value-labels", CODEBOOK, "--out", rules)
    assert res.exit_code == 0, res.output
    assert "13 label(s) for 4 feature(s)" in res.output
    ex = TCREx.from_json(rules.read_text())
    assert ex.value_labels["employment"] == LOANS_VALUE_LABELS["employment"]
    assert ex.value_labels["n_late_payments"] == {0.0: "no late payments on record"}
    summary = ex.summary_text()
    assert _labelled_values(summary)
    _no_bare_value(summary)
    out = tmp_path / "explained"
    res = _run("explain", "--rules", rules, "--data", d / "loans.parquet", "--y-pred-column", "score",
               "--out", out)
    assert res.exit_code == 0, res.output
    texts = pd.read_parquet(next(out.glob("*.parquet"))).text.astype(str)
    assert any(_labelled_values(t) for t in texts)
    for t in texts.unique():
        _no_bare_value(t)


def test_explain_takes_a_codebook_for_rules_fitted_without_one(data, tmp_path):
    d, X = data
    rules = tmp_path / "plain.json"
    assert _run("fit", "--data", d / "loans.parquet", "--y-pred-column", "score", "--rho", "0.05",
                "--out", rules).exit_code == 0
    assert TCREx.from_json(rules.read_text()).value_labels is None
    book = tmp_path / "book.json"
    book.write_text(json.dumps({"employment": {"Unemployed": "out of work"}, "ghost": {"a": "b"},
                                "purpose": {"Yacht": "a yacht"}}))
    out = tmp_path / "explained"
    res = _run("explain", "--rules", rules, "--data", d / "loans.parquet", "--y-pred-column", "score",
               "--value-labels", book, "--out", out)
    assert res.exit_code == 0, res.output
    assert "'ghost'" in res.output and "not in the data" in res.output  # unknown feature said, not fatal
    assert "'Yacht'" in res.output
    texts = pd.read_parquet(next(out.glob("*.parquet"))).text.astype(str)
    said = " ".join(texts.unique())
    if "Unemployed" in said:
        assert "Unemployed" not in said.replace("out of work (Unemployed)", "")


def test_audit_takes_the_option(data, tmp_path):
    d, X = data
    rules = tmp_path / "rules.json"
    assert _run("fit", "--data", d / "loans.parquet", "--y-pred-column", "score", "--rho", "0.05",
                "--out", rules).exit_code == 0
    res = _run("audit", "--rules", rules, "--data", d / "loans.parquet", "--y-pred-column", "score",
               "--group-column", "employment", "--target", "1", "--n-boot", "50", "--value-labels", CODEBOOK,
               "--out", tmp_path / "audit.json")
    assert res.exit_code == 0, res.output
    assert "13 label(s)" in res.output


def _group_names(labels: dict) -> list[str]:
    return [f"{label} ({value})" for value, label in labels.items()]


def test_audit_names_groups_by_label_and_code(data, tmp_path):
    """A grouping column the codebook labels names its groups "label (code)" in the JSON and the findings, as the
    dashboard's audit does (tcrex.audit.labelled_groups), whether the labels come with the rules (fit
    --value-labels) or with the audit's own --value-labels."""
    d, X = data
    rules = tmp_path / "rules.json"
    assert _run("fit", "--data", d / "loans.parquet", "--y-pred-column", "score", "--rho", "0.05",
                "--value-labels", CODEBOOK, "--out", rules).exit_code == 0
    want = _group_names(LOANS_VALUE_LABELS["employment"])
    for extra in ([], ["--value-labels", CODEBOOK]):
        out = tmp_path / "audit.json"
        res = _run("audit", "--rules", rules, "--data", d / "loans.parquet", "--y-pred-column", "score",
                   "--group-column", "employment", "--target", "1", "--n-boot", "50", *extra, "--out", out)
        assert res.exit_code == 0, res.output
        doc = json.loads(out.read_text())
        assert sorted(doc["group_labels"]) == sorted(w for w in want if w.rsplit("(", 1)[1][:-1]
                                                     in set(X.employment))
        assert {g["group"] for g in doc["groups"]} == set(doc["group_labels"])
        assert doc["reference"] in doc["group_labels"]
        said = " ".join(doc["findings"]) if isinstance(doc["findings"], list) else json.dumps(doc["findings"])
        assert any(w in said for w in want), said


def test_audit_names_groups_of_a_column_that_is_not_a_feature(data, tmp_path):
    """The codebook may label a grouping column the model does not use: fit_codebook leaves it out of the
    explainer, the audit still names its groups by label."""
    d, X = data
    frame = X.assign(branch=[["B1", "B2"][i % 2] for i in range(len(X))])
    frame.to_parquet(tmp_path / "branches.parquet", index=False)
    rules = tmp_path / "rules.json"
    assert _run("fit", "--data", tmp_path / "branches.parquet", "--y-pred-column", "score", "--drop-column",
                "branch", "--rho", "0.05", "--out", rules).exit_code == 0
    book = tmp_path / "book.csv"
    book.write_text("feature,value,label\nbranch,B1,north office\nbranch,B2,south office\n"
                    "employment,Retired,retired\n")
    out = tmp_path / "audit.json"
    res = _run("audit", "--rules", rules, "--data", tmp_path / "branches.parquet", "--y-pred-column", "score",
               "--group-column", "branch", "--target", "1", "--n-boot", "50", "--value-labels", book, "--out", out)
    assert res.exit_code == 0, res.output
    assert "'branch'" in res.output  # not a feature of the rules: said, and still used to name the groups
    doc = json.loads(out.read_text())
    assert doc["group_labels"] == ["north office (B1)", "south office (B2)"]


@pytest.mark.slow  # sandboxed model intake of two models
def test_compare_names_groups_by_label_and_code(tmp_path):
    from tcrex.datasets import LOANS_MODEL, LOANS_MODEL_B, load_bundled_loans
    frame = load_bundled_loans().iloc[:500].drop(columns=["approved"])
    frame.to_parquet(tmp_path / "rows.parquet", index=False)
    model, model_b = SAMPLE_DATA_DIR / LOANS_MODEL, SAMPLE_DATA_DIR / LOANS_MODEL_B
    rules = tmp_path / "rules.json"
    assert _run("fit", "--data", tmp_path / "rows.parquet", "--model", model, "--rho", "0.05", "--target", "1",
                "--out", rules).exit_code == 0
    out = tmp_path / "c.json"
    res = _run("compare", "--rules", rules, "--model", model, "--model-b", model_b, "--data", tmp_path / "rows.parquet",
               "--reference-rows", tmp_path / "rows.parquet", "--group-column", "home_ownership", "--n-boot", "50",
               "--value-labels", CODEBOOK, "--out", out)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    groups = {g["group"] for g in doc["groups"]}
    assert groups == set(_group_names(LOANS_VALUE_LABELS["home_ownership"])), groups


@pytest.mark.parametrize("content, message", [
    (b"feature,value\nemployment,Unemployed\n", "exactly the columns feature,value,label"),
    (b"feature,value,label\nemployment,Unemployed,\n", "the label is empty"),
    (b"feature,value,label\nemployment,Unemployed,a\nemployment,Unemployed,b\n", "has two labels"),
    (b'{"employment": ["Unemployed"]}', "a JSON codebook is an object"),
    (b"\xff\xfe\x00garbage", "not UTF-8"),
    (b"feature,value,label\n" + b"employment,Unemployed," + b"x" * 300 + b"\n", "at most 200"),
])
def test_a_bad_codebook_is_an_error_line(data, tmp_path, content, message):
    d, X = data
    book = tmp_path / "book.csv"
    book.write_bytes(content)
    res = _run("fit", "--data", d / "loans.parquet", "--y-pred-column", "score", "--rho", "0.05",
               "--value-labels", book, "--out", tmp_path / "r.json")
    assert res.exit_code == 2
    assert res.output.startswith("error:") and message in res.output, res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("given", ['{"0": "declined", "1": "approved"}', "0=declined,1=approved"])
def test_class_names_reach_the_rules_json_and_the_texts(data, tmp_path, given):
    """``--class-names`` beside ``--value-labels``: fit keeps the names in the rules JSON, and the texts
    say the class by name; explain takes them for rules fitted without."""
    d, X = data
    rules = tmp_path / "rules.json"
    res = _run("fit", "--data", d / "loans.parquet", "--y-pred-column", "score", "--rho", "0.05",
               "--class-names", given, "--out", rules)
    assert res.exit_code == 0, res.output
    ex = TCREx.from_json(rules.read_text())
    assert ex.class_names == {0: "declined", 1: "approved"}
    assert "approved" in ex.summary_text() and "output = 1" not in ex.summary_text()
    plain = tmp_path / "plain.json"
    assert _run("fit", "--data", d / "loans.parquet", "--y-pred-column", "score", "--rho", "0.05",
                "--out", plain).exit_code == 0
    audit = tmp_path / "audit.json"
    res = _run("audit", "--rules", plain, "--data", d / "loans.parquet", "--y-pred-column", "score",
               "--group-column", "employment", "--target", "1", "--n-boot", "20", "--class-names", given,
               "--out", audit)
    assert res.exit_code == 0, res.output
    said = audit.read_text()
    assert "approved" in said and "output = 1" not in said, said[:600]


@pytest.mark.parametrize("given, message", [("approved", "class=name pairs"), ("0=,1=yes", "no name for class")])
def test_a_bad_class_names_value_is_an_error_line(data, tmp_path, given, message):
    d, _ = data
    res = _run("fit", "--data", d / "loans.parquet", "--y-pred-column", "score", "--class-names", given,
               "--out", tmp_path / "r.json")
    assert res.exit_code != 0 and "error:" in res.output and message in res.output, res.output
    assert "Traceback" not in res.output


def test_the_codebooks_label_entry_names_the_classes_as_the_dashboard_reads_it(data, tmp_path):
    """A codebook with an entry for the label column (here the dropped ``--y-pred-column``) names the classes, as
    the dashboard reads it, instead of being called "not in the data"; ``--class-names`` still wins."""
    d, X = data
    book = tmp_path / "book.csv"
    book.write_text(CODEBOOK.read_text() + "score,0,declined\nscore,1,approved\nscore,7,never output\n")
    rules = tmp_path / "rules.json"
    res = _run("fit", "--data", d / "loans.parquet", "--y-pred-column", "score", "--rho", "0.05",
               "--value-labels", book, "--out", rules)
    assert res.exit_code == 0, res.output
    assert "not in the data" not in res.output, res.output
    assert "class names: 2 from the codebook's 'score' entry" in res.output, res.output
    assert "1 value(s) the model never outputs" in res.output, res.output
    ex = TCREx.from_json(rules.read_text())
    assert ex.class_names == {0: "declined", 1: "approved"}
    assert ex.value_labels["employment"] == LOANS_VALUE_LABELS["employment"]
    res = _run("fit", "--data", d / "loans.parquet", "--y-pred-column", "score", "--rho", "0.05",
               "--value-labels", book, "--class-names", "0=no,1=yes", "--out", rules)
    assert res.exit_code == 0, res.output
    assert TCREx.from_json(rules.read_text()).class_names == {0: "no", 1: "yes"}
