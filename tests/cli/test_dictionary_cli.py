"""``--dictionary FILE`` on fit (kept in the rules JSON, so explain need not repeat it) equals the API on the same
Parquet file, ``tcrex dictionary --data`` writes the dictionary a table implies, and a hostile dictionary is an
``error:`` line before any work."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.cli import main
from tcrex.dictionary import read_dictionary_file, to_csv_text
from tests.support.dictionary_case import survey_case


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("dictionary_cli")
    X, model, dictionary = survey_case(n=1200)
    score = model.predict(X)
    frame = X.assign(score=score)
    frame.to_parquet(d / "survey.parquet", index=False)
    (d / "dictionary.csv").write_text(to_csv_text(dictionary), encoding="utf-8")
    return d, X, score, dictionary


def test_fit_and_explain_with_a_dictionary_equal_the_api(data, tmp_path):
    d, X, score, dictionary = data
    rules = tmp_path / "rules.json"
    res = _run("fit", "--data", d / "survey.parquet", "--y-pred-column", "score", "--rho", "0.03",
               "--dictionary", d / "dictionary.csv", "--out", rules)
    assert res.exit_code == 0, res.output
    assert "constraint (suggested, applied): years_of_age: increase_only" in res.output
    api = TCREx(rho=0.03, dictionary=read_dictionary_file(d / "dictionary.csv"), max_changes=3).fit(
        pd.read_parquet(d / "survey.parquet").drop(columns=["score"]), y_pred=score)
    cli = TCREx.from_json(rules.read_text())
    assert cli.dictionary_ == api.dictionary_ == dictionary
    assert cli.constraints_.to_dict() == api.constraints_.to_dict()
    assert cli.rules_frame()["conditions"].tolist() == api.rules_frame()["conditions"].tolist()
    assert any("(including" in c and "refused (99)" in c for c in cli.rules_frame()["conditions"]) or \
        not any("hours_worked" in c for c in cli.rules_frame()["conditions"])
    out = tmp_path / "explained"
    res = _run("explain", "--rules", rules, "--data", d / "survey.parquet", "--y-pred-column", "score",
               "--out", out)
    assert res.exit_code == 0, res.output
    said = pd.read_parquet(next(out.glob("*.parquet")))["text"].tolist()
    assert said == api.explain(X, y_pred=score)["text"].tolist()
    assert any("monthly spending (spend)" in t or "savings balance (savings)" in t for t in said)


def test_the_dictionary_command_writes_what_the_table_implies(data, tmp_path):
    d, *_ = data
    out = tmp_path / "implied.json"
    res = _run("dictionary", "--data", d / "survey.parquet", "--drop-column", "score", "--out", out)
    assert res.exit_code == 0, res.output
    implied = read_dictionary_file(out)
    assert implied.special_codes["hours_worked"] == [97, 98, 99]
    assert implied.special_codes["standing_w1"] == [-1, 0]
    assert implied["standing_w3"].history and not implied["standing_w1"].history
    assert "hours_worked: codes [97, 98, 99]" in res.output
    csv_out = tmp_path / "implied.csv"
    assert _run("dictionary", "--data", d / "survey.parquet", "--drop-column", "score", "--out", csv_out).exit_code == 0
    assert read_dictionary_file(csv_out) == implied
    shown = _run("dictionary", "--data", d / "survey.parquet", "--drop-column", "score", "--format", "table-schema")
    assert json.loads(shown.stdout)["fields"][0]["name"] == "savings"


def test_a_hostile_dictionary_is_an_error_line_before_any_work(data, tmp_path):
    d, *_ = data
    bad = tmp_path / "bad.csv"
    bad.write_text("feature,value,label,kind\nspend,,<img src=x onerror=alert(1)>,title\n", encoding="utf-8")
    rules = tmp_path / "rules.json"
    res = _run("fit", "--data", d / "survey.parquet", "--y-pred-column", "score", "--dictionary", bad,
               "--out", rules)
    assert res.exit_code == 2 and "error:" in res.output and "HTML markup" in res.output
    assert "Traceback" not in res.output and not rules.exists()
