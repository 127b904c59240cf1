"""tcrex fit says a degenerate explanation on stderr and stores the findings in the rules JSON."""
import json

import pytest

from click.testing import CliRunner

from tcrex import TCREx
from tcrex.cli import main

from tests.support.voice_cases import credit_card_case, loans_case

pytestmark = pytest.mark.slow  # a fit with its findings' search per test


def _fit(tmp_path, X, y, *args):
    frame = X.assign(y_model=y)
    frame.to_csv(tmp_path / "x.csv", index=False)
    res = CliRunner().invoke(main, ["fit", "--data", str(tmp_path / "x.csv"), "--y-pred-column", "y_model",
                                    "--out", str(tmp_path / "r.json"), *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res, json.loads((tmp_path / "r.json").read_text())


def test_fit_prints_the_findings_and_writes_them_in_the_rules_json(tmp_path):
    X, model = credit_card_case()
    res, doc = _fit(tmp_path, X, model.predict(X), "--target", "0")
    assert [f["kind"] for f in doc["findings"]][:2] == ["one_rule", "one_metarule"]
    first = doc["findings"][0]
    assert f"finding: {first['text']} {first['suggestion_text']}" in res.output
    ex = TCREx(target=0, **first["suggestion"]).fit(X, y_pred=model.predict(X))
    assert ex.targets_[0].n_rules == first["suggested_rules"] > 1
    assert TCREx.from_json(json.dumps(doc)).targets_[0].n_rules == 1


def test_fit_without_a_finding_writes_none(tmp_path):
    X, model = loans_case(600)
    res, doc = _fit(tmp_path, X, model.predict(X), "--target", "1")
    assert "findings" not in doc and "finding:" not in res.output
