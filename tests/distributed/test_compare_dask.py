"""`tcrex compare --scheduler` on a real Dask scheduler and nanny worker (loopback): the counts of every file,
added on the driver, give the in-memory compare_models result; people Parquet per input file."""
import json

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from tcrex import TCREx  # noqa: E402
from tcrex.compare import ComparisonResult, compare_models  # noqa: E402
from tcrex.cli import main  # noqa: E402
from tcrex.datasets import LOANS_MODEL, LOANS_MODEL_B, SAMPLE_DATA_DIR, load_bundled_loans  # noqa: E402


def test_cli_compare_on_a_dask_cluster_equals_in_memory(tmp_path, dask_programs):
    from click.testing import CliRunner

    from tcrex.intake import load_model
    frame = load_bundled_loans().drop(columns=["approved"]).iloc[:700]
    frame.iloc[:300].to_parquet(tmp_path / "p0.parquet", index=False)
    frame.iloc[300:].to_csv(tmp_path / "p1.csv", index=False)
    model_a, model_b = SAMPLE_DATA_DIR / LOANS_MODEL, SAMPLE_DATA_DIR / LOANS_MODEL_B
    ex = TCREx(rho=0.05, target=1).fit(frame, load_model(model_a.read_bytes(), LOANS_MODEL))
    (tmp_path / "rules.json").write_text(ex.to_json())
    with dask_programs(tmp_path / "w") as address:
        res = CliRunner().invoke(main, ["compare", "--rules", str(tmp_path / "rules.json"), "--model", str(model_a),
                                        "--model-b", str(model_b), "--data", str(tmp_path / "p*"),
                                        "--group-column", "employment", "--n-boot", "60", "--out",
                                        str(tmp_path / "cmp.json"), "--people-out", str(tmp_path / "people"),
                                        "--scheduler", address], catch_exceptions=False)
        assert res.exit_code == 0, res.output
    got = ComparisonResult.from_json((tmp_path / "cmp.json").read_text())
    want = compare_models(TCREx.from_json(ex.to_json()), frame, load_model(model_b.read_bytes(), LOANS_MODEL_B),
                          model_a=load_model(model_a.read_bytes(), LOANS_MODEL), groups="employment", n_boot=60)
    assert got.findings() == want.findings()
    assert json.loads(got.to_json(people=False))["summary"] == json.loads(want.to_json(people=False))["summary"]
    pd.testing.assert_frame_equal(got.gaps, want.gaps)
    people = pd.concat([pd.read_parquet(tmp_path / "people" / f) for f in ("p0.parquet", "p1.parquet")],
                       ignore_index=True)
    assert people["change"].tolist() == want.people["change"].astype(str).tolist()
