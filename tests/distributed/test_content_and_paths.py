"""Models and reference rows are cached by content, never by path, and paths mean what the user typed.

A model file replaced under the same name between two runs: the second run's statuses are the new model's, on a
Dask worker (programs started in their own folder) as on a pool and in one process, and every output names the
digest of the file it used. A relative ``--out`` (and ``--model``, ``--rules``, ``--data``) is the user's folder,
not the worker's; an output folder the workers cannot share with the client is refused, naming it."""
import hashlib
import json
import shutil

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

pytest.importorskip("distributed")
xgboost = pytest.importorskip("xgboost")

from tcrex import TCREx  # noqa: E402
from tcrex.cli import main  # noqa: E402
from tcrex.datasets import make_loans  # noqa: E402
from tcrex.intake import load_model  # noqa: E402

from tests.support.builders import xgb_classifier  # noqa: E402


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Two models of the same features that disagree on every row (B learnt the opposite labels), the rules of
    model A, two data files and two sets of reference rows."""
    d = tmp_path_factory.mktemp("made")
    X = make_loans(1200, random_state=11)
    y = X.pop("approved").to_numpy()
    (d / "a.json").write_bytes(xgb_classifier(X, y, n_estimators=10)[0])
    (d / "b.json").write_bytes(xgb_classifier(X, 1 - y, n_estimators=10)[0])
    model_a = load_model((d / "a.json").read_bytes(), "a.json", sandbox=False)
    ex = TCREx(rho=0.05).fit(X, model_a)
    (d / "rules.json").write_text(ex.to_json())
    parts = [X.iloc[:500].reset_index(drop=True), X.iloc[500:].reset_index(drop=True)]
    X.iloc[:40].to_parquet(d / "ref_small.parquet", index=False)
    X.to_parquet(d / "ref_all.parquet", index=False)
    return d, parts


def _user_folder(made, root):
    """The user's folder: data, rules and the model file ``m.json`` (model A for now), all named relatively."""
    d, parts = made
    user = root / "user"
    (user / "data").mkdir(parents=True)
    for i, p in enumerate(parts):
        p.to_parquet(user / "data" / f"part{i}.parquet", index=False)
    shutil.copy(d / "rules.json", user / "rules.json")
    shutil.copy(d / "a.json", user / "m.json")
    shutil.copy(d / "ref_small.parquet", user / "ref.parquet")
    return user


def _expected_statuses(made, model_name):
    d, parts = made
    ex = TCREx.from_json((d / "rules.json").read_text())
    model = load_model((d / model_name).read_bytes(), model_name, sandbox=False)
    return [ex.explain(p, model=model)["status"].astype(str).tolist() for p in parts]


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _explain(*args, where=None):
    """``tcrex explain`` of the user's data with the model file ``m.json``; ``where``: the user's folder, to name
    every input by its absolute path (else relative to the current folder)."""
    def named(name):
        return str(where / name) if where is not None else name
    res = CliRunner().invoke(main, ["explain", "--rules", named("rules.json"), "--data", named("data"), "--model",
                                    named("m.json"), *args], catch_exceptions=False)
    return res


def _statuses(res, user, out):
    assert res.exit_code == 0, res.output
    return [pd.read_parquet(user / out / f"part{i}.parquet")["status"].astype(str).tolist() for i in range(2)]


def _check_run(res, made, user, out, model_name):
    """The run wrote into the user's folder ``out`` the statuses of ``model_name`` and names that file's digest;
    its last line says where the files are."""
    assert _statuses(res, user, out) == _expected_statuses(made, model_name)
    assert res.output.strip().splitlines()[-1].endswith(f"-> {user / out}/"), res.output
    for i in range(2):
        used = json.loads(pq.read_schema(user / out / f"part{i}.parquet").metadata[b"tcrex"])
        assert used["model"]["sha256"] == _sha256(made[0] / model_name)
        assert used["model"]["bytes"] == (made[0] / model_name).stat().st_size
        assert used["model"]["path"] == str(user / "m.json")
        assert used["rules"]["sha256"] == _sha256(user / "rules.json")
    assert sorted(p.name for p in (user / out).iterdir()) == ["_tcrex_run.json", "part0.parquet",
                                                              "part1.parquet"]  # the run's record; no marker left


def test_models_disagree(made):
    a, b = _expected_statuses(made, "a.json"), _expected_statuses(made, "b.json")
    assert a != b  # otherwise the tests below could not tell a stale model from a fresh one


def test_a_dask_worker_follows_a_replaced_model_and_writes_into_the_users_folder(made, tmp_path, dask_programs,
                                                                                   monkeypatch):
    user = _user_folder(made, tmp_path)
    monkeypatch.chdir(user)
    want_a, want_b = _expected_statuses(made, "a.json"), _expected_statuses(made, "b.json")
    with dask_programs(tmp_path / "worker") as address:  # the worker runs in its own folder
        on_dask = ("--scheduler", address)
        # absolute paths: the worker that loaded model A reads the replaced file again
        assert _statuses(_explain("--out", str(user / "abs_a"), *on_dask, where=user), user, "abs_a") == want_a
        shutil.copy(made[0] / "b.json", user / "m.json")  # the same path, another model
        assert _statuses(_explain("--out", str(user / "abs_b"), *on_dask, where=user), user, "abs_b") == want_b
        # relative paths: the user's folder, not the worker's
        _check_run(_explain("--out", "explained", *on_dask), made, user, "explained", "b.json")
        shutil.copy(made[0] / "a.json", user / "m.json")
        _check_run(_explain("--out", "explained_a", *on_dask), made, user, "explained_a", "a.json")
        assert not any((tmp_path / "worker" / name).exists() for name in ("explained", "explained_a", "m.json"))

        # a folder the worker cannot share with this client (its memory:// is its own): refused, naming it
        res = _explain("--out", "memory://tcrex-explained", *on_dask)
        assert res.exit_code == 2, res.output
        assert "memory://tcrex-explained" in res.output and "Traceback" not in res.output
        assert "error: " in res.output and "not the same folder on the worker" in res.output


def test_a_pool_and_one_process_follow_a_replaced_model_and_relative_paths(made, tmp_path, monkeypatch):
    user = _user_folder(made, tmp_path)
    monkeypatch.chdir(user)
    want_a, want_b = _expected_statuses(made, "a.json"), _expected_statuses(made, "b.json")
    assert _statuses(_explain("--out", "one_a"), user, "one_a") == want_a  # this process keeps model A loaded
    assert _statuses(_explain("--out", "pool_a", "--workers", "2"), user, "pool_a") == want_a
    shutil.copy(made[0] / "b.json", user / "m.json")
    assert _statuses(_explain("--out", "one_b"), user, "one_b") == want_b
    _check_run(_explain("--out", "pool_b", "--workers", "2"), made, user, "pool_b", "b.json")
    _check_run(_explain("--out", "one_b2"), made, user, "one_b2", "b.json")

    # a pool's workers write into their own copies of memory://: the client sees nothing there, and says so
    res = _explain("--out", "memory://tcrex-pool-out", "--workers", "2")
    assert res.exit_code == 2 and "memory://tcrex-pool-out" in res.output, res.output


def test_reference_rows_are_cached_by_content_in_a_pool(made, tmp_path, monkeypatch):
    """Reference rows replaced under the same path: the second run verifies against the new rows (the pool's
    forked workers do not reuse rows this process read from the old file) and names their digest."""
    d, parts = made
    user = _user_folder(made, tmp_path)
    monkeypatch.chdir(user)
    ex = TCREx.from_json((d / "rules.json").read_text())
    model = load_model((d / "a.json").read_bytes(), "a.json", sandbox=False)
    for out, workers, ref in (("v_small", "1", "ref_small.parquet"), ("v_all", "2", "ref_all.parquet")):
        shutil.copy(d / ref, user / "ref.parquet")
        res = _explain("--verified", "--reference-rows", "ref.parquet", "--out", out, "--workers", workers)
        assert res.exit_code == 0, res.output
        reference = pd.read_parquet(d / ref)
        for i, p in enumerate(parts):
            got = pd.read_parquet(user / out / f"part{i}.parquet")
            want = ex.counterfactuals(p, model=model, verify=True, reference=reference)
            assert got["recourse"].astype(object).where(got["recourse"].notna(), None).tolist() == \
                want["recourse"].astype(object).where(want["recourse"].notna(), None).tolist()
            used = json.loads(pq.read_schema(user / out / f"part{i}.parquet").metadata[b"tcrex"])
            assert [(r["path"], r["sha256"]) for r in used["reference_rows"]] == \
                [(str(user / "ref.parquet"), _sha256(d / ref))]


def test_audit_and_compare_name_the_files_they_used(made, tmp_path, monkeypatch):
    d, parts = made
    user = _user_folder(made, tmp_path)
    frame = pd.concat(parts, ignore_index=True).assign(group=lambda f: np.where(f.index % 2, "x", "y"))
    shutil.rmtree(user / "data")
    (user / "data").mkdir()
    frame.to_parquet(user / "data" / "all.parquet", index=False)
    shutil.copy(d / "b.json", user / "b.json")
    monkeypatch.chdir(user)
    res = CliRunner().invoke(main, ["audit", "--rules", "rules.json", "--data", "data", "--model", "m.json",
                                    "--group-column", "group", "--target", "1", "--n-boot", "20", "--out", "audit.json",
                                    "--workers", "2"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    used = json.loads((user / "audit.json").read_text())["used"]
    assert used["model"] == {"path": str(user / "m.json"), "bytes": (d / "a.json").stat().st_size,
                             "sha256": _sha256(d / "a.json")}
    res = CliRunner().invoke(main, ["compare", "--rules", "rules.json", "--model", "m.json", "--model-b", "b.json",
                                    "--data", "data", "--target", "1", "--n-boot", "20", "--out", "cmp.json", "--people-out",
                                    "people"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert res.output.strip().splitlines()[-1].endswith(f"(people: {user / 'people'}/)")
    used = json.loads((user / "cmp.json").read_text())["used"]
    assert used["a"]["model"]["sha256"] == _sha256(d / "a.json")
    assert used["b"]["model"]["sha256"] == _sha256(d / "b.json")
    people = user / "people" / "all.parquet"
    assert json.loads(pq.read_schema(people).metadata[b"tcrex"])["b"]["model"]["sha256"] == _sha256(d / "b.json")
