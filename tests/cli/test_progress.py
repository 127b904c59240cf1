"""A progress line per batch on stderr (rows done, rows/s, ETA) for explain, audit and compare when a file takes
several batches; none for a file done in one batch, none with --no-progress; the run's record beside explain's
outputs."""
import json
import re

import pytest
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.cli import main
from tests.support.credit_like import credit_like


@pytest.fixture(scope="module")
def bureau(tmp_path_factory):
    d = tmp_path_factory.mktemp("progress")
    frame = credit_like(1200, seed=6)
    frame["grade"] = (frame["ExternalRiskEstimate"] // 34).map({0: "low", 1: "mid", 2: "high"})
    ex = TCREx(rho=0.05).fit(frame.drop(columns=["target", "grade"]), y_pred=frame["target"].to_numpy())
    (d / "rules.json").write_text(ex.to_json())
    frame.to_parquet(d / "big.parquet", index=False)
    frame.iloc[:100].to_parquet(d / "small.parquet", index=False)
    frame.to_csv(d / "big.csv", index=False)
    return d


LINE = re.compile(r"^(explained|counted) (\S+): ([\d,]+)/1,200 rows \((\d+)%\), [\d,]+ rows/s, ETA \d+(s|m\d\ds)$")


def _progress(output, verb):
    return [ln for ln in output.splitlines() if ln.startswith(f"{verb} ") and "rows/s" in ln]


def test_explain_says_a_line_per_batch_with_rows_rate_and_eta(bureau, tmp_path):
    res = CliRunner().invoke(main, ["explain", "--rules", str(bureau / "rules.json"), "--data",
                                    str(bureau / "big.parquet"), "--y-pred-column", "target", "--out",
                                    str(tmp_path / "out"), "--batch-size", "500"])
    assert res.exit_code == 0, res.output
    lines = _progress(res.output, "explained")
    assert [LINE.match(ln).group(3) for ln in lines] == ["500", "1,000", "1,200"], lines
    assert [LINE.match(ln).group(4) for ln in lines] == ["42", "83", "100"]
    record = json.loads((tmp_path / "out" / "_tcrex_run.json").read_text())
    assert record["rows"] == 1200 and record["workers_lost"] == []
    assert record["files"] == [str(tmp_path / "out" / "big.parquet")]


def test_a_csv_says_rows_and_rate_without_a_total(bureau, tmp_path):
    res = CliRunner().invoke(main, ["explain", "--rules", str(bureau / "rules.json"), "--data",
                                    str(bureau / "big.csv"), "--y-pred-column", "target", "--out",
                                    str(tmp_path / "out"), "--batch-size", "500"])
    assert res.exit_code == 0, res.output
    lines = _progress(res.output, "explained")
    assert [ln.split(": ")[1].split(" rows")[0] for ln in lines] == ["1,000", "1,200"], lines


def test_one_batch_and_no_progress_say_nothing_per_batch(bureau, tmp_path):
    for data, more in (("small.parquet", []), ("big.parquet", ["--no-progress"])):
        res = CliRunner().invoke(main, ["explain", "--rules", str(bureau / "rules.json"), "--data",
                                        str(bureau / data), "--y-pred-column", "target", "--out",
                                        str(tmp_path / data), "--batch-size", "500", *more])
        assert res.exit_code == 0, res.output
        assert not _progress(res.output, "explained"), res.output


def test_audit_says_a_line_per_batch(bureau, tmp_path):
    res = CliRunner().invoke(main, ["audit", "--rules", str(bureau / "rules.json"), "--data",
                                    str(bureau / "big.parquet"), "--y-pred-column", "target", "--group-column",
                                    "grade", "--target", "0", "--n-boot", "20", "--out", str(tmp_path / "audit.json"),
                                    "--batch-size", "400"])
    assert res.exit_code == 0, res.output
    lines = _progress(res.output, "counted")
    assert [LINE.match(ln).group(3) for ln in lines] == ["400", "800", "1,200"], lines
    assert json.loads((tmp_path / "audit.json").read_text())["run"] == {"workers_lost": []}


def test_fit_on_a_sample_says_a_line_per_batch_of_its_recount(bureau, tmp_path):
    res = CliRunner().invoke(main, ["fit", "--data", str(bureau / "big.parquet"), "--y-pred-column", "target",
                                    "--drop-column", "grade", "--sample", "600", "--batch-size", "500",
                                    "--rho", "0.05", "--out", str(tmp_path / "rules.json")])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("recounted ") and "rows/s" in ln]
    assert [ln.split(": ")[1].split(" rows")[0] for ln in lines] == ["500/1,200", "1,000/1,200", "1,200/1,200"]
