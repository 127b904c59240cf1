"""Candidates scored on a tree ensemble's own trees (``tcrex._engine.recourse._tree_scoring``): the scorer gives the
model's own output on every candidate of a property test (XGBoost saved as JSON and UBJ, native categorical splits,
missing values, multi-class; scikit-learn trees, forests and extra trees), the compiled walk equals the numpy
walk of the same ensemble, and the verified search gives the same frame with the trees as with the model alone,
including when the trees read disagree with the model (the confirmation catches it and the search runs again)."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tcrex._engine.recourse._tree_scoring as tree_scoring
import tcrex._engine.recourse._verify as verify
from tcrex import TCREx
from tcrex._engine.base._data import Encoded
from tcrex.datasets import make_credit_bureau

HELOC = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "heloc.csv"


def _table(n, seed, classes=2, with_nan=True):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=n).round(2), "b": rng.integers(-9, 40, n).astype(float),
                      "c": pd.Categorical(rng.choice(["x", "y", "z", "w", "v"], n), categories=["v", "w", "x", "y", "z"]),
                      "d": rng.integers(0, 5, n)})
    if with_nan:
        X.loc[rng.random(n) < 0.1, "b"] = np.nan
    score = X["a"] + 0.05 * X["b"].fillna(-5) + (X["c"].astype(str) == "y") - 0.3 * X["d"]
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def _xgb(X, y, **kw):
    from xgboost import XGBClassifier
    return XGBClassifier(n_estimators=25, max_depth=4, enable_categorical=True, tree_method="hist", n_jobs=1,
                         random_state=0, max_cat_to_onehot=kw.pop("onehot", 1), **kw).fit(X, y)


def _reloaded(model, suffix, tmp_path):
    from xgboost import XGBClassifier
    path = tmp_path / f"model.{suffix}"
    model.save_model(path)
    again = XGBClassifier()
    again.load_model(path)
    return again


def _numeric_X(X):
    return X.assign(c=X["c"].cat.codes.astype(float))


def _models(tmp_path):
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier
    X, y = _table(600, 1)
    X3, y3 = _table(600, 2, classes=3)
    out = {"xgb_binary": (X, _xgb(X, y)), "xgb_onehot_splits": (X, _xgb(X, y, onehot=8)),
           "xgb_json": (X, _reloaded(_xgb(X, y), "json", tmp_path)),
           "xgb_ubj": (X, _reloaded(_xgb(X, y), "ubj", tmp_path)),
           "xgb_softprob": (X3, _xgb(X3, y3))}
    Xn = _numeric_X(X)
    Xn3 = _numeric_X(X3)
    names = np.array(["low", "mid", "high"], dtype=object)
    out.update({
        "forest_binary_nan": (Xn, RandomForestClassifier(n_estimators=15, max_depth=6, random_state=0).fit(Xn, y)),
        "forest_3_classes_text": (Xn3, RandomForestClassifier(n_estimators=10, random_state=0).fit(Xn3, names[y3])),
        "extra_trees": (Xn3, ExtraTreesClassifier(n_estimators=10, max_depth=5, random_state=0).fit(Xn3, y3)),
        "decision_tree": (Xn, DecisionTreeClassifier(max_depth=8, random_state=0).fit(Xn, y)),
    })
    return out


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return _models(tmp_path_factory.mktemp("trees"))


def _scorer(X, model):
    """The explainer needs a value everywhere (the model was trained with missing values; candidates hold some)."""
    X = X.dropna()
    ex = TCREx(rho=0.05, target=None if len(np.unique(model.predict(X))) > 2 else 1).fit(X, model)
    state = ex.state_
    m = verify._Model(state, model, X)
    scorer = tree_scoring.tree_scorer(model, state.schema, m.X, m.as_categorical, m.outputs)
    return state, m, scorer


def _thresholds(scorer, feature):
    values = []
    for t in scorer.ensemble.trees:
        at = (t.left >= 0) & (t.feature == feature) & ~t.categorical
        values.append(t.threshold[at])
    v = np.concatenate(values) if values else np.zeros(0)
    v = v[np.isfinite(v)]  # (scikit-learn splits missing values from the rest at an infinite threshold)
    return np.concatenate([v, np.nextafter(v, np.inf), np.nextafter(v.astype(np.float32), np.float32(np.inf))
                           .astype(np.float64), np.nextafter(v.astype(np.float32), np.float32(-np.inf)).astype(np.float64)])


def _candidates(state, scorer, X, n, seed):
    """Points of every kind the search builds and more: observed values, the trees' split thresholds and their
    float32 and float64 neighbours, values between, missing values, every category."""
    rng = np.random.default_rng(seed)
    schema = state.schema
    num = np.empty((n, len(schema.numeric)))
    for j, i in enumerate(schema.numeric):
        name = schema.names[i]
        col = np.where([c[0] == "num" and c[1] == j for c in scorer.columns])[0]
        pool = [X[name].dropna().to_numpy(np.float64), rng.uniform(X[name].min() - 1, X[name].max() + 1, 50),
                np.array([np.nan])]
        if len(col):
            pool.append(_thresholds(scorer, int(col[0])))
        pool = np.concatenate(pool)
        num[:, j] = pool[rng.integers(0, len(pool), n)]
        num[rng.random(n) < 0.05, j] = np.nan
    cat = np.stack([rng.integers(0, len(schema.features[i].categories), n) for i in schema.categorical], axis=1) \
        if schema.categorical else np.zeros((n, 0), dtype=np.int64)
    return Encoded(num, cat.astype(np.int64))


@settings(max_examples=6, deadline=None, suppress_health_check=[*settings().suppress_health_check,
                                                              HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2 ** 16))
@pytest.mark.parametrize("name", ["xgb_binary", "xgb_onehot_splits", "xgb_json", "xgb_ubj", "xgb_softprob",
                                  "forest_binary_nan", "forest_3_classes_text", "extra_trees",
                                  "decision_tree"])
def test_the_tree_scorer_gives_the_models_own_output_on_every_candidate(models, name, seed):
    X, model = models[name]
    state, m, scorer = _scorer(X, model)
    assert scorer is not None, f"{name}: the trees were not read"
    enc = _candidates(state, scorer, X, 3000, seed)
    assert np.isnan(enc.num).any()
    ours = scorer(enc)
    theirs = m.outputs(enc)
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert (np.asarray(ours) == np.asarray(theirs)).all(), f"{name}: {(np.asarray(ours) != theirs).sum()} differ"
    # the trees decided (almost) every point, not the model behind them: only ties are asked (a forest of pure
    # leaves averages probabilities in tenths, so equal class probabilities are common there)
    assert scorer.asked <= (0.02 if name.startswith("xgb") else 0.15) * len(enc)
    # the compiled walk is the numpy walk of the same trees
    M, _ = scorer.matrix(enc)
    np.testing.assert_allclose(scorer.compiled.raw_scores(M), scorer.ensemble.raw_scores(M), rtol=0, atol=1e-12)


def test_xgboost_margins_with_missing_categories_are_the_boosters(models):
    """A missing category takes the split's default direction, as XGBoost routes it (the margins themselves)."""
    X, model = models["xgb_binary"]
    ens = tree_scoring._xgboost(model)[0]
    rng = np.random.default_rng(0)
    M = np.column_stack([rng.normal(size=2000), rng.integers(-9, 40, 2000), rng.integers(0, 5, 2000),
                         rng.integers(0, 5, 2000)]).astype(np.float64)
    M[rng.random(2000) < 0.3, 2] = np.nan
    M[rng.random(2000) < 0.3, 1] = np.nan
    margin = model.get_booster().inplace_predict(M.astype(np.float32), predict_type="margin",
                                                validate_features=False)
    np.testing.assert_allclose(ens.compiled().raw_scores(M)[:, 0], margin, atol=1e-5)
    np.testing.assert_allclose(ens.raw_scores(M)[:, 0], margin, atol=1e-5)


def test_models_whose_trees_are_not_read_are_asked_of_the_model():
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    X, y = _table(300, 3, with_nan=False)
    Xn = _numeric_X(X)
    X3, y3 = _table(300, 4, classes=3, with_nan=False)
    softmax = _xgb(X3, y3, objective="multi:softmax")  # its predict's dtype is its own
    ex = TCREx(rho=0.05).fit(X3, softmax)
    m = verify._Model(ex.state_, softmax, X3)
    assert tree_scoring.tree_scorer(softmax, ex.state_.schema, m.X, m.as_categorical, m.outputs) is None
    for model in (LogisticRegression(max_iter=500).fit(Xn, y), GradientBoostingClassifier(n_estimators=5).fit(Xn, y)):
        ex = TCREx(rho=0.05, target=1).fit(Xn, model)
        m = verify._Model(ex.state_, model, Xn)
        assert tree_scoring.tree_scorer(model, ex.state_.schema, m.X, m.as_categorical, m.outputs) is None


def _both(ex, X, model, reference=None, monkeypatch=None):
    frames = []
    for flag in (True, False):
        monkeypatch.setattr(verify, "tree_scoring", flag)
        frames.append(ex.counterfactuals(X, model=model, reference=reference))
    return frames


def _bureau():
    df = make_credit_bureau(1500, random_state=3)
    X = df.drop(columns="RiskPerformance")
    X = X.astype({c: "category" for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])})
    y = (df["RiskPerformance"] == "Good").astype(int).to_numpy()
    return X, y


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_search_on_the_trees_gives_the_frame_of_the_search_on_the_model(monkeypatch):
    """A bureau table with special codes and native categoricals (XGBoost), the explainer restored from JSON with
    reference rows, and a random forest on other data: every column of every row identical."""
    X, y = _bureau()
    model = _xgb(X.iloc[:800], y[:800])
    ex = TCREx(target=1).fit(X.iloc[:800], model)
    fast, slow = _both(ex, X.iloc[800:], model, monkeypatch=monkeypatch)
    pd.testing.assert_frame_equal(fast, slow)
    assert fast["valid"].sum() > 100 and fast["source"].nunique() >= 3  # the search really ran, every stage
    restored = TCREx.from_json(ex.to_json())
    fast_r, slow_r = _both(restored, X.iloc[800:], model, reference=X.iloc[:800], monkeypatch=monkeypatch)
    pd.testing.assert_frame_equal(fast_r, slow_r)
    from sklearn.ensemble import RandomForestClassifier
    Xf, yf = _table(900, 5, classes=2, with_nan=False)
    Xf = _numeric_X(Xf)
    forest = RandomForestClassifier(n_estimators=12, max_depth=6, random_state=0).fit(Xf.iloc[:500], yf[:500])
    ex_f = TCREx(target=1, max_changes=None).fit(Xf.iloc[:500], forest)
    fast_f, slow_f = _both(ex_f, Xf.iloc[500:], forest, monkeypatch=monkeypatch)
    pd.testing.assert_frame_equal(fast_f, slow_f)


@pytest.mark.skipif(not HELOC.exists(), reason="the shared HELOC file is absent")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_heloc_frames_are_identical(monkeypatch):
    df = pd.read_csv(HELOC)
    df = df.iloc[np.random.default_rng(0).permutation(len(df))].reset_index(drop=True)
    X, y = df.drop(columns="target"), df["target"].to_numpy()
    model = _xgb(X.iloc[:3000], y[:3000])
    ex = TCREx(target=1).fit(X.iloc[:3000], model)
    fast, slow = _both(ex, X.iloc[3000:3600], model, reference=X.iloc[:3000], monkeypatch=monkeypatch)
    pd.testing.assert_frame_equal(fast, slow)
    assert (fast["source"] == "minimal_change").sum() > 10  # beyond the rules too


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_trees_that_disagree_with_the_model_change_no_answer(monkeypatch):
    """Trees read wrongly (every leaf value of one tree flipped): the model's confirmation of the recorded points
    fails and the search runs again on the model alone, so the frame is the model's."""
    X, y = _bureau()
    model = _xgb(X.iloc[:800], y[:800])
    ex = TCREx(target=1).fit(X.iloc[:800], model)
    monkeypatch.setattr(verify, "tree_scoring", False)
    slow = ex.counterfactuals(X.iloc[800:1100], model=model)
    monkeypatch.setattr(verify, "tree_scoring", True)
    ens = tree_scoring._read(model)[0]
    for t in ens.trees[:3]:
        t.value[:] = -3 * t.value
    ens.__dict__.pop("_compiled", None)
    state = ex.state_
    m = verify._Model(state, model, X.iloc[800:1100])
    scorer = tree_scoring.tree_scorer(model, state.schema, m.X, m.as_categorical, m.outputs)
    enc = state.schema.encode(X.iloc[800:1100])
    assert (np.asarray(scorer(enc)) != m.outputs(enc)).any()  # the broken trees do disagree
    fast = ex.counterfactuals(X.iloc[800:1100], model=model)
    pd.testing.assert_frame_equal(fast, slow)
    tree_scoring._READ.pop(model.get_booster())
