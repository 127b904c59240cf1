"""LightGBM and CatBoost files on a Dask cluster on loopback (nanny workers, each model in a sandbox worker of its
own): `explain --model` and `--verified` give exactly the in-memory result, a worker keeps one model per content,
and a damaged file is one message naming the input file."""
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

distributed = pytest.importorskip("distributed")
pytest.importorskip("lightgbm")
pytest.importorskip("catboost")

from tcrex import TCREx  # noqa: E402
from tcrex import distributed as tdist  # noqa: E402
from tcrex.cli import main  # noqa: E402
from tcrex.intake import load_model  # noqa: E402
from tests.support import builders as b  # noqa: E402

NAMES = ["model.txt", "model.cbm", "model.json"]  # LightGBM text, CatBoost binary, CatBoost JSON


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("tree-models")
    X, ys = b.tree_table(n=1500, seed=3)
    X = X.assign(bill_2=X.bill_2.fillna(0))
    frame = X.assign(id=np.arange(len(X)))
    parts = [frame.iloc[:600], frame.iloc[600:1100], frame.iloc[1100:]]
    for i, p in enumerate(parts):
        p.to_parquet(d / f"part{i}.parquet", index=False)
    (d / "model.txt").write_bytes(b.lgb_model("binary", X=X, y=ys["binary"], n_estimators=20)[0])
    (d / "model.cbm").write_bytes(b.cb_model("binary", X=X, y=ys["binary"], n_estimators=20)[0])
    (d / "model.json").write_bytes(b.cb_model("binary", X=X, y=ys["binary"], n_estimators=20, fmt="json")[0])
    rules = {}
    for name in NAMES:
        res = CliRunner().invoke(main, ["fit", "--data", str(d / "*.parquet"), "--model", str(d / name), "--rho",
                                        "0.05", "--drop-column", "id", "--target", "1",
                                        "--out", str(d / f"{name}.rules.json")], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        rules[name] = (d / f"{name}.rules.json").read_text()
    return d, parts, rules


@pytest.fixture(scope="module")
def nanny_cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        assert all(isinstance(w, distributed.Nanny) for w in cluster.workers.values())
        yield cluster, client


@pytest.mark.parametrize("name", NAMES)
def test_explain_and_verified_on_a_nanny_cluster_equal_in_memory(files, nanny_cluster, name, tmp_path):
    d, parts, rules = files
    cluster, _ = nanny_cluster
    ex = TCREx.from_json(rules[name])
    model = load_model((d / name).read_bytes(), name, sandbox=False)
    for verified in (False, True):
        out = tmp_path / ("cf" if verified else "ex")
        res = CliRunner().invoke(main, ["explain", *(["--verified"] if verified else []), "--rules",
                                        str(d / f"{name}.rules.json"), "--data", str(d / "*.parquet"), "--model",
                                        str(d / name), "--out", str(out), "--scheduler", cluster.scheduler_address,
                                        "--batch-size", "400"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        for i, p in enumerate(parts):
            rows = p.drop(columns=["id"]).reset_index(drop=True)
            want = (ex.counterfactuals(rows, model=model, verify=True) if verified else ex.explain(rows, model=model))
            got = pd.read_parquet(out / f"part{i}.parquet")
            assert got["text"].tolist() == want["text"].tolist()


def _load_twice(path: str, other: str):
    from tcrex import distributed as tdist

    first = tdist.load_model_file(path)
    again = tdist.load_model_file(path)
    changed = tdist.load_model_file(other)
    return first is again, first is changed, first.kind


def test_a_worker_keeps_one_model_per_content(files, nanny_cluster, tmp_path):
    d, _, _ = files
    _, client = nanny_cluster
    other = tmp_path / "model.txt"
    other.write_bytes(b.lgb_model("binary", n_estimators=3)[0])  # same name, other bytes
    same, reused_for_other, kind = client.submit(_load_twice, str(d / "model.txt"), str(other), pure=False).result()
    assert same and not reused_for_other and kind == "lightgbm"


@pytest.mark.parametrize("name,case", [("m.txt", "loop-two-nodes"), ("m.cbm", "split-out-of-range")])
def test_a_damaged_file_on_a_worker_is_one_message(files, nanny_cluster, name, case, tmp_path):
    from tests.support import hostile_trees as ht

    d, parts, rules = files
    _, client = nanny_cluster
    make = (ht.LGB_MUTATIONS if name.endswith(".txt") else ht.CBM_MUTATIONS)[case][0]
    (tmp_path / name).write_bytes(make())
    fut = client.submit(tdist.explain_parquet_file, rules["model.txt"], str(d / "part0.parquet"),
                        str(tmp_path / "o.parquet"), model_path=str(tmp_path / name), pure=False)
    with pytest.raises(tdist.FileError) as err:
        fut.result()
    text = str(err.value)
    assert "part0.parquet" in text and "damaged" in text and "Traceback" not in text
    assert not (tmp_path / "o.parquet").exists()
