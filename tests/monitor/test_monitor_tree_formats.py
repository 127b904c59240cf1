"""A monitor whose versions change model library: the first version XGBoost, the next a LightGBM text model and
then a CatBoost ``.cbm`` model trained on the same people. Each run goes through the intake's checks and the model
sandbox like an XGBoost version, and its statuses equal the brute-force recomputation with that library's own
model (the one the intake loads in this process)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tcrex.monitor import STATUSES

from tests.support.monitor_case import CATEGORICAL, GROUPS, ID, POLICY, brute_force, loaded

pytest.importorskip("lightgbm")
pytest.importorskip("catboost")

pytestmark = pytest.mark.slow


def _training_rows(case) -> tuple[pd.DataFrame, pd.Series]:
    """The fit rows and the labels the case's first model was trained towards (its own predictions: a retrain in
    another library that learns the same decision, as a team replacing the library would)."""
    X = case.fit_rows.reset_index(drop=True)
    y = pd.Series(np.asarray(loaded(case.models["v1"]).predict(X)), name="default")
    return X, y


@pytest.fixture(scope="module")
def format_versions(case, tmp_path_factory):
    import catboost as cb
    import lightgbm as lgb

    folder = tmp_path_factory.mktemp("monitor-formats")
    X, y = _training_rows(case)
    Xc = X.astype({c: "category" for c in CATEGORICAL})
    booster = lgb.LGBMClassifier(n_estimators=40, num_leaves=15, min_child_samples=10, verbose=-1,
                                 n_jobs=1).fit(Xc, y).booster_
    (folder / "v2-lightgbm.txt").write_text(booster.model_to_string(), encoding="utf-8")
    model = cb.CatBoostClassifier(iterations=40, depth=4, verbose=0, allow_writing_files=False, thread_count=1,
                                  cat_features=CATEGORICAL, random_seed=0).fit(X, y)
    model.save_model(str(folder / "v3-catboost.cbm"))
    return {"v2-lgb": folder / "v2-lightgbm.txt", "v3-cb": folder / "v3-catboost.cbm"}


@pytest.fixture(scope="module")
def monitored_formats(case, format_versions, tmp_path_factory):
    from tcrex.monitor import Monitor

    mon = Monitor(tmp_path_factory.mktemp("monitor-formats-store"))
    mon.init("formats", rules=case.rules, people=case.people, id_column=ID, model=case.models["v1"], version="v1",
             groups=GROUPS, reference_rows=case.fit_rows, policy=POLICY, n_boot=200)
    results = {label: mon.run("formats", model=path, version=label) for label, path in format_versions.items()}
    frames = {label: mon.people("formats", label) for label in ("v1", *format_versions)}
    return mon, results, frames


@pytest.mark.parametrize("before, after", [("v1", "v2-lgb"), ("v2-lgb", "v3-cb")])
def test_runs_under_lightgbm_and_catboost_equal_a_brute_force_recomputation(case, format_versions,
                                                                             monitored_formats, before, after):
    from tcrex import TCREx

    mon, results, frames = monitored_formats
    got = frames[after]
    assert list(got[ID]) == list(case.people[ID])
    want = brute_force(TCREx.from_json(case.rules), case.people, frames[before].drop(columns=[ID]),
                       loaded(format_versions[after]), case.fit_rows)
    pd.testing.assert_series_equal(got["status"].astype(str).reset_index(drop=True), want["status"],
                                   check_names=False)
    np.testing.assert_array_equal(got["verified"].to_numpy(), want["verified"].to_numpy())
    counts = results[after].counts
    assert {s: counts[s] for s in STATUSES} == want["status"].value_counts().reindex(list(STATUSES),
                                                                                     fill_value=0).to_dict()
    assert sum(counts[s] for s in STATUSES) == len(case.people)


def test_each_run_names_its_library_file_by_hash(format_versions, monitored_formats):
    import hashlib

    mon, results, _ = monitored_formats
    history = mon.history("formats")
    assert [r.version.label for r in history.runs] == ["v1", "v2-lgb", "v3-cb"]
    for label, path in format_versions.items():
        run = results[label]
        assert run.version.model_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
        assert run.version.origin == {"kind": "file", "path": str(path)}
