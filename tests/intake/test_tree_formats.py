"""LightGBM and CatBoost model files: a model trained here, saved, loaded through the intake, predicts exactly what
the in-process model predicts on every row (binary, multi-class, regression; numeric and categorical features),
its categorical features reach TCREx, and its parsed trees score every row as the library does."""
import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.errors import ModelError
from tcrex.intake import check_compatibility, detect_format, load_model

from tests.support import builders as b

pytest.importorskip("lightgbm")
pytest.importorskip("catboost")

CASES = [(lib, fmt, task, cat) for lib, fmts in (("lightgbm", ("text", "json")), ("catboost", ("cbm", "json")))
         for fmt in fmts for task in b.TASKS for cat in (True, False)]
FILENAME = {("lightgbm", "text"): "model.txt", ("lightgbm", "json"): "dump.json", ("catboost", "cbm"): "model.cbm",
            ("catboost", "json"): "model.json"}


def _build(lib, fmt, task, cat):
    if lib == "lightgbm":
        data, m, X = b.lgb_model(task, categorical=cat, fmt=fmt)
        return data, m, X, m
    data, m, X = b.cb_model(task, categorical=cat, fmt=fmt)
    return data, m, X, (m if fmt == "cbm" else b.cb_reference(data, fmt, task))


def _as_text(X: pd.DataFrame) -> pd.DataFrame:
    """The table as read from a CSV: categories as plain text columns."""
    return X.astype({c: object for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)})


@pytest.mark.slow  # trains 24 models: `make test`, not `make test-fast`
@pytest.mark.parametrize("lib,fmt,task,cat", CASES, ids=lambda v: str(v))
def test_round_trip_predicts_exactly(lib, fmt, task, cat):
    data, trained, X, reference = _build(lib, fmt, task, cat)
    name = FILENAME[lib, fmt]
    assert detect_format(data, name) == f"{lib}-{fmt}" and detect_format(data, "upload") == f"{lib}-{fmt}"
    model = load_model(data, name)
    assert model.kind == lib and model.n_features == X.shape[1] and model.feature_names == list(X.columns)
    expected = np.asarray(reference.predict(X)).reshape(-1)
    got = model.predict(X)
    assert np.array_equal(got, expected), f"{int((got != expected).sum())} of {len(X)} rows differ"
    assert np.array_equal(model.predict(_as_text(X)), expected)  # plain text categories, as from a CSV
    assert np.array_equal(model.predict(X[X.columns[::-1]]), expected)  # columns matched by name
    cats = list(b.TREE_TABLE_CATEGORIES) if cat else []
    assert model.categorical_features == cats
    if task == "regression":
        assert model.task == "regression" and not hasattr(model, "predict_proba")
    else:
        assert model.task == "classification"
        assert model.classes == ([0, 1] if task == "binary" else [0, 1, 2])
        assert np.array_equal(model.predict_proba(X), reference.predict_proba(X))
    rep = check_compatibility(model, _as_text(X))
    assert rep.ok, rep.problems
    # the parsed trees: the library's own raw scores on every row (where they can be scored outside it)
    trees = model.trees
    if trees.complete:
        raw = np.asarray(reference.predict(X, raw_score=True) if lib == "lightgbm" else
                         reference.predict(X, prediction_type="RawFormulaVal"))
        ours = trees.raw_scores(_codes(model, X)).reshape(raw.shape)
        if (lib, fmt) == ("catboost", "json"):
            # CatBoost's JSON reader does not round decimal text to the nearest double as Python does: its leaf
            # values differ from the parsed ones in the last bits
            np.testing.assert_allclose(ours, raw, rtol=1e-12, atol=1e-12)
        else:
            assert np.array_equal(ours, raw)
    else:
        assert lib == "catboost" and cat and "only CatBoost" in trees.why_incomplete


def _codes(model, X) -> np.ndarray:
    """X as the model's numeric matrix (LightGBM: categories as its codes; CatBoost: numbers only)."""
    if model.kind == "lightgbm":
        return model._matrix(model.select(X))
    return np.column_stack([np.full(len(X), np.nan) if X[c].dtype == object else X[c].to_numpy(float)
                            for c in model.feature_names])


@pytest.mark.slow
@pytest.mark.parametrize("lib", ["lightgbm", "catboost"])
def test_categorical_features_reach_the_explainer(lib):
    data, _, X, _ = _build(lib, "text" if lib == "lightgbm" else "cbm", "binary", True)
    model = load_model(data, "m.txt" if lib == "lightgbm" else "m.cbm")
    X = _as_text(X).assign(bill_2=X.bill_2.fillna(0))  # the engine needs a value in every cell
    ex = TCREx(rho=0.05, categorical_features=model.categorical_features).fit(X, model)
    kinds = {f.name: f.is_categorical for f in ex.schema_.features}
    assert all(kinds[c] for c in b.TREE_TABLE_CATEGORIES) and not kinds["age"]
    assert len(ex.rules_frame()) >= 1


def test_lightgbm_unseen_category_is_named():
    data, m, X = b.lgb_model("binary", n_estimators=5)
    model = load_model(data, "m.txt")
    assert model.categories["education"] == list(X.education.cat.categories)
    odd = _as_text(X).assign(education=lambda d: d.education.where(d.index != 3, "phd"))
    with pytest.raises(ModelError, match=r"column 'education' holds value\(s\) \['phd'\]"):
        model.predict(odd)
    rep = check_compatibility(model, odd)
    assert not rep.ok and "'phd'" in rep.problems[0] and "(1 rows)" in rep.problems[0]
    # a category column in another order, or with a level no row holds, is coded by value
    reordered = X.assign(education=X.education.cat.reorder_categories(X.education.cat.categories[::-1]))
    assert np.array_equal(model.predict(reordered), m.predict(X))
    assert np.array_equal(model.predict(X.assign(education=X.education.cat.add_categories(["phd"]))), m.predict(X))


def test_lightgbm_integer_coded_categories_and_positional_columns():
    import lightgbm as lgb

    X, ys = b.tree_table()
    codes = X.assign(**{c: X[c].map({v: i for i, v in enumerate(sorted(X[c].unique()))})
                        for c in b.TREE_TABLE_CATEGORIES})
    m = lgb.LGBMClassifier(n_estimators=10, verbose=-1).fit(codes, ys["binary"],
                                                            categorical_feature=b.TREE_TABLE_CATEGORIES)
    model = load_model(m.booster_.model_to_string().encode(), "m.txt")
    assert model.categorical_features == b.TREE_TABLE_CATEGORIES and model.categories == {}
    assert any("no stored category names" in w for w in model.warnings)
    assert np.array_equal(model.predict(codes), m.predict(codes))
    rep = check_compatibility(model, codes)
    assert rep.ok and rep.categorical_features == b.TREE_TABLE_CATEGORIES  # numbers, categorical for the model
    # trained on an array: LightGBM names the columns Column_0..; they are matched by position
    arr = lgb.LGBMRegressor(n_estimators=5, verbose=-1).fit(codes.to_numpy(float), ys["regression"])
    positional = load_model(arr.booster_.model_to_string().encode(), "m.txt")
    assert positional.feature_names is None and positional.n_features == codes.shape[1]
    assert np.array_equal(positional.predict(codes), arr.predict(codes.to_numpy(float)))
    assert any("position" in w for w in check_compatibility(positional, codes).warnings)


def test_catboost_categories_as_text_and_numbers():
    """CatBoost hashes a category's text: an integer column read as floats (because of a missing value elsewhere)
    must still hash as '2', never '2.0'; a missing category is refused with a message."""
    X, ys = b.tree_table()
    X = X.assign(grade=(X.index % 4).astype(int))
    y = np.where(X.grade == 3, 1, ys["binary"])  # grade matters, so the model splits on it
    data, m, _ = b.cb_model(X=X, y=y, n_estimators=10, cat_features=["grade", *b.TREE_TABLE_CATEGORIES])
    model = load_model(data, "m.cbm")
    assert model.categorical_features == [c for c in X.columns if c in ("grade", *b.TREE_TABLE_CATEGORIES)]
    as_float = X.assign(grade=X.grade.astype(float))
    assert np.array_equal(model.predict(as_float), m.predict(X))
    assert not np.array_equal(m.predict_proba(X.assign(grade=X.grade.astype(str) + ".0")), m.predict_proba(X))
    with pytest.raises(ModelError, match="column 'sex' has 1 missing value"):
        model.predict(X.assign(sex=X.sex.where(X.index != 5)))


def test_catboost_non_symmetric_trees():
    for policy in ("Depthwise", "Lossguide"):
        for fmt in ("cbm", "json"):
            data, m, X = b.cb_model("regression", categorical=False, fmt=fmt, grow_policy=policy, n_estimators=15)
            model = load_model(data, f"m.{fmt}")
            ref = m if fmt == "cbm" else b.cb_reference(data, fmt, "regression")
            assert "non-symmetric" in model.description
            assert np.array_equal(model.predict(X), ref.predict(X))
            raw = ref.predict(X, prediction_type="RawFormulaVal")
            ours = model.trees.raw_scores(X.to_numpy(float))[:, 0]
            if fmt == "cbm":
                assert np.array_equal(ours, raw)
            else:  # CatBoost's JSON reader rounds decimal text differently (see test_round_trip_predicts_exactly)
                np.testing.assert_allclose(ours, raw, rtol=1e-12, atol=1e-12)


def test_formats_are_told_apart_by_content():
    lgb_text, _, _ = b.lgb_model("binary", n_estimators=2)
    lgb_json, _, _ = b.lgb_model("binary", n_estimators=2, fmt="json")
    cbm, _, _ = b.cb_model("binary", n_estimators=2)
    cb_json, _, _ = b.cb_model("binary", n_estimators=2, fmt="json")
    xgb_json, _, _ = b.xgb_classifier(n_estimators=2)
    for data, fmt in ((lgb_text, "lightgbm-text"), (lgb_json, "lightgbm-json"), (cbm, "catboost-cbm"),
                      (cb_json, "catboost-json"), (xgb_json, "xgboost-json")):
        for name in ("m.json", "m.txt", "m.cbm", "model"):
            assert detect_format(data, name) == fmt, (fmt, name)
    with pytest.raises(ModelError, match="not a LightGBM text model"):
        detect_format(b"just some notes\n", "notes.txt")
    with pytest.raises(ModelError, match="starts with 'CBM1'"):
        detect_format(b"\x00" * 64, "m.cbm")


def test_missing_library_is_said(monkeypatch):
    import sys

    from tcrex.intake import missing_libraries

    assert missing_libraries() == {}
    data, _, _ = b.lgb_model("binary", n_estimators=2)
    monkeypatch.setitem(sys.modules, "lightgbm", None)
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None if name == "lightgbm" else object())
    assert missing_libraries() == {"LightGBM": "tcrex[lightgbm]"}
    with pytest.raises(ModelError, match=r"LightGBM is not installed on this server.*tcrex\[lightgbm\]"):
        load_model(data, "m.txt")


def test_lightgbm_random_forest_averages_its_trees():
    """boosting='rf' writes a bare `average_output` header line: its trees are averaged, not added."""
    import lightgbm as lgb

    X, ys = b.tree_table()
    Xc = X.astype({c: "category" for c in b.TREE_TABLE_CATEGORIES})
    m = lgb.LGBMClassifier(boosting_type="rf", n_estimators=10, bagging_freq=1, bagging_fraction=0.7,
                           verbose=-1).fit(Xc, ys["binary"])
    model = load_model(m.booster_.model_to_string().encode(), "rf.txt")
    assert model.trees.average
    assert np.array_equal(model.predict(Xc), m.predict(Xc))
    assert np.array_equal(model.predict_proba(Xc), m.predict_proba(Xc))
    margin = model.trees.raw_scores(_codes(model, Xc))[:, 0]  # the average LightGBM's sigmoid is taken of
    np.testing.assert_allclose(1 / (1 + np.exp(-margin)), m.predict_proba(Xc)[:, 1], rtol=1e-12)
