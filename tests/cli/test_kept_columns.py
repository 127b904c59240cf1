"""``explain --keep-columns`` never writes two columns of one name: a kept column that clashes with an output
column is refused before anything is read or written, naming both; other kept columns are copied."""
import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

xgboost = pytest.importorskip("xgboost")

from tcrex import TCREx  # noqa: E402
from tcrex.cli import main  # noqa: E402
from tcrex.distributed import EXPLAIN_COLUMNS, VERIFIED_COLUMNS, output_columns  # noqa: E402
from tcrex.intake import load_model  # noqa: E402

from tests.support.builders import xgb_classifier  # noqa: E402
from tests.support.credit_like import credit_like, german_like  # noqa: E402


@pytest.fixture(scope="module")
def bureau(tmp_path_factory):
    """A bureau-like table whose label column is ``target`` (as the explanation's first column), with an id."""
    d = tmp_path_factory.mktemp("kept")
    frame = credit_like(600, seed=2)
    frame.insert(0, "id", range(len(frame)))
    X = frame.drop(columns=["id", "target"])
    (d / "m.json").write_bytes(xgb_classifier(X, frame["target"].to_numpy(), n_estimators=5)[0])
    ex = TCREx(rho=0.05).fit(X, y_pred=frame["target"].to_numpy())
    (d / "rules.json").write_text(ex.to_json())
    frame.to_parquet(d / "people.parquet", index=False)
    return d


def _explain(d, out, *more):
    return CliRunner().invoke(main, ["explain", "--rules", str(d / "rules.json"), "--data", str(d / "people.parquet"),
                                     "--out", str(out), *more])


@pytest.mark.parametrize("outputs", [["--y-pred-column", "target"], ["--model", "m.json"]], ids=["column", "model"])
def test_a_kept_label_named_like_an_output_column_is_refused_before_any_file(bureau, tmp_path, outputs):
    if outputs[0] == "--model":
        outputs = ["--model", str(bureau / "m.json")]
    res = _explain(bureau, tmp_path / "out", "--keep-columns", "id,target", *outputs)
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert lines[-1].startswith("error: --keep-columns 'target' would be written beside the explanation "
                                "column(s) of the same name (target, rule"), res.output
    assert "Traceback" not in res.output
    assert not (tmp_path / "out").exists()  # refused before the output folder was made


def test_a_kept_feature_of_a_verified_run_is_refused_naming_it(bureau, tmp_path):
    res = _explain(bureau, tmp_path / "out", "--keep-columns", "id,ExternalRiskEstimate,valid", "--model",
                   str(bureau / "m.json"), "--verified")
    assert res.exit_code == 2, res.output
    assert "--keep-columns 'ExternalRiskEstimate', 'valid' would be written beside the verified counterfactual" in res.output
    assert not (tmp_path / "out").exists()


def test_other_kept_columns_are_copied_and_the_file_reads_back(bureau, tmp_path):
    res = _explain(bureau, tmp_path / "out", "--keep-columns", "id", "--y-pred-column", "target")
    assert res.exit_code == 0, res.output
    names = pq.read_schema(tmp_path / "out" / "people.parquet").names
    assert names == [*EXPLAIN_COLUMNS, "id"]
    got = pd.read_parquet(tmp_path / "out" / "people.parquet")
    assert got["id"].tolist() == list(range(600))


def test_the_columns_said_are_the_columns_written(tmp_path):
    """The output columns the check refuses against are the engine's own, on a table with categorical codes."""
    frame = german_like(300, seed=4)
    X = frame.drop(columns=["target", "sex"])
    model = load_model(xgb_classifier(X, frame["target"].to_numpy(), n_estimators=5)[0], "m.json", sandbox=False)
    ex = TCREx(rho=0.05).fit(X, model)
    assert list(ex.explain(X, model=model).columns) == output_columns(ex)
    cf = ex.counterfactuals(X, model=model, verify=True)
    assert list(cf.columns) == output_columns(ex, verified=True)
    assert list(cf.columns)[len(X.columns):] == list(VERIFIED_COLUMNS)
