"""Content and paths in one process (the pool and Dask versions: tests/distributed/test_content_and_paths.py): path options
resolved in the user's folder, models cached by content, runs pinned to the contents they started with."""
import json
import shutil

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

xgboost = pytest.importorskip("xgboost")

from tcrex import TCREx  # noqa: E402
from tcrex.cli import PATH_PARAMETERS, main  # noqa: E402
from tcrex.cli._common import _absolute  # noqa: E402
from tcrex.datasets import make_loans  # noqa: E402
from tcrex.distributed import explain_parquet_file, file_digest, load_model_file  # noqa: E402
from tcrex.errors import TCRExError  # noqa: E402
from tcrex.intake import load_model  # noqa: E402

from tests.support.builders import xgb_classifier  # noqa: E402


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("user")
    X = make_loans(400, random_state=3)
    y = X.pop("approved").to_numpy()
    (d / "a.json").write_bytes(xgb_classifier(X, y, n_estimators=5)[0])
    (d / "b.json").write_bytes(xgb_classifier(X, 1 - y, n_estimators=5)[0])
    ex = TCREx(rho=0.05).fit(X, load_model((d / "a.json").read_bytes(), "a.json", sandbox=False))
    (d / "rules.json").write_text(ex.to_json())
    X.to_parquet(d / "x.parquet", index=False)
    return d, X


def test_paths_are_absolute_and_urls_stay_urls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _absolute("out/") == str(tmp_path / "out")
    assert _absolute("data/*.parquet") == str(tmp_path / "data" / "*.parquet")
    for url in ("s3://bucket/x", "memory://x", "simplecache::s3://bucket/x", None, ""):
        assert _absolute(url) == url
    assert {"data", "out", "people_out", "model_path", "model_b_path", "rules_path", "rules_b_path",
            "reference_rows", "constraints_path"} <= set(PATH_PARAMETERS)


def test_a_replaced_model_is_read_again_in_the_same_process(folder, tmp_path, monkeypatch):
    d, X = folder
    shutil.copy(d / "rules.json", tmp_path / "rules.json")
    shutil.copy(d / "x.parquet", tmp_path / "x.parquet")
    monkeypatch.chdir(tmp_path)
    ex = TCREx.from_json((d / "rules.json").read_text())
    for model in ("a.json", "b.json", "a.json"):
        shutil.copy(d / model, tmp_path / "m.json")
        out = f"out_{model}"
        res = CliRunner().invoke(main, ["explain", "--rules", "rules.json", "--data", "x.parquet", "--model",
                                        "m.json", "--out", out], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        assert res.output.strip().splitlines()[-1].endswith(f"-> {tmp_path / out}/")
        want = ex.explain(X, model=load_model((d / model).read_bytes(), model, sandbox=False))
        got = pd.read_parquet(tmp_path / out / "x.parquet")
        assert got["status"].astype(str).tolist() == want["status"].astype(str).tolist()
        used = json.loads(pq.read_schema(tmp_path / out / "x.parquet").metadata[b"tcrex"])
        assert used["model"] == {"path": str(tmp_path / "m.json"), **file_digest((d / model).read_bytes())}


def test_the_same_content_is_one_model_and_another_is_another(folder, tmp_path):
    d, _ = folder
    shutil.copy(d / "a.json", tmp_path / "m.json")
    first = load_model_file(str(tmp_path / "m.json"))
    assert load_model_file(str(tmp_path / "m.json")) is first  # same bytes: the loaded model (its sandbox) reused
    shutil.copy(d / "b.json", tmp_path / "m.json")
    assert load_model_file(str(tmp_path / "m.json")) is not first


def test_a_model_replaced_during_a_run_is_refused(folder, tmp_path):
    d, _ = folder
    shutil.copy(d / "b.json", tmp_path / "m.json")
    started_with = file_digest((d / "a.json").read_bytes())  # what the run's check saw
    with pytest.raises(TCRExError, match="m.json was replaced while the run was going on"):
        explain_parquet_file((d / "rules.json").read_text(), str(d / "x.parquet"), str(tmp_path / "o.parquet"),
                             model_path=str(tmp_path / "m.json"), model_digest=started_with)
    assert not (tmp_path / "o.parquet").exists()


def test_an_output_folder_that_cannot_be_written_is_refused_naming_it(folder, tmp_path):
    d, _ = folder
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    res = CliRunner().invoke(main, ["explain", "--rules", str(d / "rules.json"), "--data", str(d / "x.parquet"),
                                    "--model", str(d / "a.json"), "--out", str(blocker / "out")])
    assert res.exit_code == 2, res.output
    assert str(blocker / "out") in res.output and "Traceback" not in res.output
