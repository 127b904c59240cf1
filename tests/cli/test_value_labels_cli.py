"""``--value-labels FILE`` (issue #35): the codebook reaches every text the CLI writes and survives its round trips
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


@pytest.mark.parametrize("content, message", [
    (b"feature,value\nemployment,Unemployed\n", "exactly the columns feature,value,label"),
    (b"feature,value,label\nemployment,Unemployed,\n", "the label is empty"),
    (b"feature,value,label\nemployment,Unemployed,a\nemployment,Unemployed,b\n", "already has the label"),
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
