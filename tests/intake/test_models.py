"""Model intake, positive cases: real models of every accepted format load, predict like the original, and
can be explained with TCREx."""
import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.errors import ModelError
from tcrex.intake import LoadedModel, check_compatibility, detect_format, load_model

from tests.support import builders as b


def _object_frame(Xc):
    X = Xc.copy()
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            X[c] = X[c].astype(str).astype(object)
    return X


# ---------------------------------------------------------------------------------------------- XGBoost
@pytest.mark.slow  # trains and reloads XGBoost models: `make test`, not `make test-fast`
@pytest.mark.parametrize("fmt,name", [("json", "model.json"), ("ubj", "model.ubj")])
def test_xgboost_categorical_classifier(fmt, name):
    data, m, Xc = b.xgb_classifier(fmt=fmt)
    model = load_model(data, name)
    assert isinstance(model, LoadedModel) and model.kind == "xgboost"
    assert model.task == "classification" and model.classes == [0, 1]
    assert model.feature_names == ["age", "income", "job"] and model.n_features == 3
    assert model.categories == {"job": ["clerk", "manager", "nurse"]}
    assert model.categorical_features == ["job"]
    assert "XGBoost binary classifier" in model.description and fmt.upper() in model.description
    expected = m.predict(Xc)
    # pandas categories, plain strings, a different category order, shuffled columns: all re-coded the same
    assert np.array_equal(model.predict(Xc), expected)
    X_obj = _object_frame(Xc)
    assert np.array_equal(model.predict(X_obj), expected)
    reordered = Xc.assign(job=Xc.job.cat.reorder_categories(["nurse", "clerk", "manager"]))
    assert np.array_equal(model.predict(reordered), expected)
    assert np.array_equal(model.predict(X_obj[["job", "income", "age"]]), expected)
    # a category no row holds (a Parquet dictionary of the whole file) is not an unknown value; one a row holds is
    wider = Xc.assign(job=Xc.job.cat.add_categories(["pilot"]))
    assert np.array_equal(model.predict(wider), expected)
    with_nan = wider.assign(job=wider.job.where(np.arange(len(wider)) % 7 != 0))
    assert np.array_equal(model.predict(with_nan), model.predict(_object_frame(with_nan).assign(
        job=with_nan.job.astype(object))))
    with pytest.raises(ModelError, match=r"holds value\(s\) \['pilot'\]"):
        model.predict(wider.assign(job=wider.job.where(np.arange(len(wider)) != 3, "pilot")))
    assert check_compatibility(model, X_obj).ok
    ex = TCREx(rho=0.05).fit(X_obj, model)
    assert len(ex.rules_frame()) >= 1


@pytest.mark.parametrize("fmt", ["json", "ubj"])
def test_xgboost_regressor(fmt):
    data, m = b.xgb_regressor(fmt=fmt)
    model = load_model(data, f"reg.{fmt}")
    X = b.numeric()
    assert model.task == "regression" and model.classes is None and not hasattr(model, "classes_")
    np.testing.assert_allclose(model.predict(X), m.predict(X), rtol=1e-6)
    assert model.predict(X).dtype == np.float64
    ex = TCREx(rho=0.05).fit(X, model)
    assert ex.task_ == "regression"


def test_xgboost_without_feature_names_matches_by_position():
    import xgboost as xgb

    X = b.numeric()
    m = xgb.XGBRegressor(n_estimators=5).fit(X.to_numpy(), X.a * 2)
    model = load_model(bytes(m.get_booster().save_raw("json")), "m.json")
    assert model.feature_names is None and model.n_features == 3
    np.testing.assert_allclose(model.predict(X), m.predict(X.to_numpy()), rtol=1e-6)
    rep = check_compatibility(model, X)
    assert rep.ok and any("position" in w for w in rep.warnings)


def test_xgboost_multiclass_and_numeric_categories():
    import xgboost as xgb

    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=500), "grade": pd.Categorical(rng.choice([10, 20, 30], 500))})
    y = np.where(X.a > 0.5, 2, np.where(X.grade == 20, 1, 0))
    m = xgb.XGBClassifier(n_estimators=10, enable_categorical=True).fit(X, y)
    model = load_model(bytes(m.get_booster().save_raw("ubj")), "multi.ubj")
    assert model.classes == [0, 1, 2] and model.categories == {"grade": [10, 20, 30]}
    plain = X.assign(grade=X.grade.astype(int))  # integers, as read from a CSV
    assert np.array_equal(model.predict(plain), m.predict(X))
    rep = check_compatibility(model, plain)
    assert rep.ok and rep.categorical_features == ["grade"]
    ex = TCREx(rho=0.05, categorical_features=rep.categorical_features).fit(plain, model)
    assert ex.schema_.features[1].is_categorical


def test_xgboost_early_stopping_uses_best_iteration():
    import xgboost as xgb

    X = b.numeric(n=600)
    y = (X.a + 0.3 * np.random.default_rng(1).normal(size=600) > 0).astype(int)
    m = xgb.XGBClassifier(n_estimators=200, early_stopping_rounds=3, learning_rate=0.5)
    m.fit(X[:400], y[:400], eval_set=[(X[400:], y[400:])], verbose=False)
    model = load_model(bytes(m.get_booster().save_raw("json")), "es.json")
    assert np.array_equal(model.predict(X), m.predict(X))


def test_xgboost_non_ascii_categories_are_reported():
    """XGBoost 3.1-3.2 store non-ASCII category names damaged: recovered where possible, the rest reported."""
    X, y = b.loans()
    X = X.assign(job=X.job.map({"clerk": "employé", "manager": "manager", "nurse": "infirmière"}))
    data, m, Xc = b.xgb_classifier(X, y)
    model = load_model(data, "m.json")
    if not model.warnings:  # a fixed XGBoost stores the names correctly
        assert np.array_equal(model.predict(_object_frame(Xc)), m.predict(Xc))
        return
    assert "dmlc/xgboost#12371" in model.warnings[0]
    rep = check_compatibility(model, _object_frame(Xc))
    assert any("damaged" in w for w in rep.warnings)


# ---------------------------------------------------------------------------------------------- scikit-learn
def test_sklearn_pipeline_via_skops():
    X, y = b.loans()
    pipe = b.sklearn_pipeline(X, y)
    model = load_model(b.skops_bytes(pipe), "pipe.skops")
    assert model.kind == "sklearn" and model.task == "classification" and model.classes == [0, 1]
    assert model.feature_names == ["age", "income", "job"]
    assert model.categories == {"job": ["clerk", "manager", "nurse"]}
    assert model.feature_kinds == {"age": "numeric", "income": "numeric", "job": "categorical"}
    assert "ColumnTransformer → LogisticRegression" in model.description
    assert np.array_equal(model.predict(X), pipe.predict(X))
    assert np.array_equal(model.predict(X[["job", "age", "income"]]), pipe.predict(X))
    ex = TCREx(rho=0.05).fit(X, model)
    assert ex.task_ == "classification"


def _estimators():
    from sklearn.ensemble import (ExtraTreesRegressor, GradientBoostingClassifier, HistGradientBoostingRegressor,
                                  RandomForestClassifier)
    from sklearn.linear_model import Ridge
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPRegressor
    from sklearn.svm import SVC
    from sklearn.tree import DecisionTreeClassifier

    return [RandomForestClassifier(n_estimators=5, random_state=0), GradientBoostingClassifier(n_estimators=5),
            HistGradientBoostingRegressor(max_iter=5), ExtraTreesRegressor(n_estimators=5), Ridge(),
            KNeighborsClassifier(), MLPRegressor(max_iter=50, random_state=0), SVC(), DecisionTreeClassifier()]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
def test_sklearn_estimators_on_the_allow_list(est):
    X = b.numeric()
    y = (X.a > 0).astype(int) if "Classifier" in type(est).__name__ or type(est).__name__ == "SVC" else X.a * 2
    est.fit(X, y)
    model = load_model(b.skops_bytes(est), "m.skops")
    assert model.feature_kinds == {"a": "numeric", "b": "numeric", "c": "numeric"}
    np.testing.assert_allclose(np.asarray(model.predict(X), dtype=float), est.predict(X))


def test_sklearn_internal_function_transformers_are_accepted():
    """HistGradientBoosting's native categorical preprocessing and ColumnTransformer's passthrough build
    FunctionTransformers internally (identity / check_array); they are allowed, user functions are not."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    X, y = b.loans()
    hgb = HistGradientBoostingClassifier(max_iter=10).fit(X.assign(job=X.job.astype("category")), y)
    model = load_model(b.skops_bytes(hgb), "hgb.skops")
    assert model.categories == {"job": ["clerk", "manager", "nurse"]}
    assert np.array_equal(model.predict(X), hgb.predict(X.assign(job=X.job.astype("category"))))
    passthrough = make_pipeline(ColumnTransformer([("c", OneHotEncoder(), ["job"])], remainder="passthrough"),
                                LogisticRegression(max_iter=500)).fit(X, y)
    assert np.array_equal(load_model(b.skops_bytes(passthrough), "p.skops").predict(X), passthrough.predict(X))


def test_sklearn_string_labels_and_numpy_fitted():
    from sklearn.tree import DecisionTreeClassifier

    X = b.numeric()
    clf = DecisionTreeClassifier(max_depth=3).fit(X.to_numpy(), np.where(X.a > 0, "yes", "no"))
    model = load_model(b.skops_bytes(clf), "tree.skops")
    assert model.classes == ["no", "yes"] and model.feature_names is None and model.n_features == 3
    assert list(model.predict(X)) == list(clf.predict(X.to_numpy()))
    ex = TCREx(rho=0.05).fit(X, model)
    assert set(ex.classes_) == {"no", "yes"}


# ---------------------------------------------------------------------------------------------- ONNX
def test_onnx_linear_classifier_argmax_and_tcrex():
    X = b.numeric()
    model = load_model(b.onnx_bytes(b.onnx_linear_classifier()), "lin.onnx")
    assert model.kind == "onnx" and model.task == "classification"
    assert model.feature_names == ["a", "b", "c"] and model.n_features == 3
    W = np.array([[1.0, -1.0], [0.5, -0.5], [-0.2, 0.2]])
    expected = (X.to_numpy() @ W + [0.1, -0.1]).argmax(axis=1)
    pred = model.predict(X[["c", "a", "b"]])  # matched by name through the metadata
    assert np.array_equal(pred, expected)
    ex = TCREx(rho=0.05).fit(X, model)
    assert ex.task_ == "classification" and len(ex.rules_frame()) >= 1


def test_onnx_greater_bool_labels():
    X = b.numeric()
    model = load_model(b.onnx_bytes(b.onnx_linear_classifier(argmax=False, names=None)), "g.onnx")
    assert model.classes == [False, True] and model.feature_names is None
    expected = X.to_numpy() @ np.array([1.0, 0.5, -0.2]) > 0
    assert np.array_equal(model.predict(X), expected)
    TCREx(rho=0.05).fit(X, model)


def test_onnx_regressor():
    X = b.numeric()
    model = load_model(b.onnx_bytes(b.onnx_regressor()), "r.onnx")
    assert model.task == "regression"
    np.testing.assert_allclose(model.predict(X), X.to_numpy() @ [2.0, -1.0, 0.1], rtol=1e-4, atol=1e-5)


def test_onnx_one_input_per_column_with_string_labels():
    X, _ = b.loans()
    model = load_model(b.onnx_bytes(b.onnx_per_column_classifier()), "pc.onnx")
    assert model.feature_names == ["age", "job"] and model.classes == ["no", "yes"]
    assert model.feature_kinds == {"age": "numeric", "job": "categorical"}
    Xm = X[["age", "job"]]
    pred = model.predict(Xm)
    code = Xm.job.map({"clerk": 0.0, "manager": 1.0, "nurse": 2.0})
    expected = np.where(0.1 * Xm.age + code - 4 > -0.1 * Xm.age - code + 4, "yes", "no")
    assert list(pred) == list(expected)
    TCREx(rho=0.05).fit(Xm, model)


# ---------------------------------------------------------------------------------------------- pickle (opt-in)
def test_pickle_loads_when_the_operator_allows_it(tmp_path, monkeypatch):
    import pickle

    X, y = b.loans()
    pipe = b.sklearn_pipeline(X, y)
    data = pickle.dumps(pipe)
    model = load_model(data, "m.pkl", allow_pickle=True)
    assert model.kind == "pickle" and np.array_equal(model.predict(X), pipe.predict(X))
    assert "trust" in model.warnings[0]
    monkeypatch.setenv("TCREX_ALLOW_PICKLE", "1")
    assert load_model(data, "m.pkl").kind == "pickle"
    from tcrex.intake import UnsafeModelError
    with pytest.raises(UnsafeModelError):  # an explicit False beats the environment
        load_model(data, "m.pkl", allow_pickle=False)


def test_detect_format_by_content_and_extension():
    data, _, _ = b.xgb_classifier(fmt="json")
    assert detect_format(data, "anything.bin") == "xgboost-json"
    assert detect_format(b.xgb_classifier(fmt="ubj")[0], "x") == "xgboost-ubj"
    assert detect_format(b.skops_bytes(b.sklearn_pipeline()), "model") == "sklearn"
    assert detect_format(b.onnx_bytes(b.onnx_regressor()), "model") == "onnx"
    assert detect_format(b"\x80\x04K\x01.", "model.json") == "pickle"


@pytest.mark.parametrize("objective", ["binary:logistic", "binary:logitraw", "multi:softprob", "binary:hinge",
                                       "multi:softmax"])
def test_xgboost_class_scores_where_the_objective_gives_them(objective):
    """ROC/PR curves need scores: a binary:logistic or multi:softprob file gives xgboost's own probabilities
    (logitraw through the logistic function); hinge and softmax give only a class, so there is no
    predict_proba at all (in or out of the sandbox)."""
    import xgboost as xgb

    X = b.numeric()
    multi = objective.startswith("multi:")
    y = (np.digitize(X["a"], [-0.5, 0.5]) if multi else (X["a"] + X["b"] > 0)).astype(int)
    m = xgb.XGBClassifier(n_estimators=10, max_depth=3, objective=objective).fit(X, y)
    data = bytes(m.get_booster().save_raw("json"))
    for sandbox in (False, None):
        model = load_model(data, "m.json", sandbox=sandbox)
        if objective in ("binary:hinge", "multi:softmax"):
            assert not callable(getattr(model, "predict_proba", None))
            continue
        proba = model.predict_proba(X)
        assert proba.shape == (len(X), 3 if multi else 2)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
        if objective == "binary:logitraw":
            margin = m.get_booster().predict(xgb.DMatrix(X), output_margin=True)
            np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-margin)), rtol=1e-5)
        else:
            np.testing.assert_allclose(proba, m.predict_proba(X), rtol=1e-5, atol=1e-6)
        if multi:  # the class predicted is the most probable one
            assert np.array_equal(np.asarray(model.classes)[proba.argmax(axis=1)], model.predict(X))


def test_a_skops_models_n_jobs_is_the_share_of_cores_the_sandbox_gives(monkeypatch):
    """A forest saved with n_jobs=-1 would take every core in each pool or Dask worker; the loader sets
    every n_jobs to TCREX_MODEL_THREADS (what the sandbox gives its worker) and leaves it alone otherwise."""
    import skops.io as sio
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = b.numeric()
    pipe = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=3, n_jobs=-1)).fit(X, X.a > 0)
    data = sio.dumps(pipe)
    monkeypatch.delenv("TCREX_MODEL_THREADS", raising=False)
    assert load_model(data, "m.skops", sandbox=False)._est.get_params()["randomforestclassifier__n_jobs"] == -1
    monkeypatch.setenv("TCREX_MODEL_THREADS", "1")
    model = load_model(data, "m.skops", sandbox=False)
    assert model._est.get_params()["randomforestclassifier__n_jobs"] == 1
    assert np.array_equal(model.predict(X), pipe.predict(X))
