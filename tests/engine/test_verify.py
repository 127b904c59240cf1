"""Model-verified counterfactual points: counterfactuals(verify=...), explain_one's verdict fields."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcrex import BOUNDARY, EXAMPLE, SEARCHED, SOURCES, ModelError, ParameterError, SchemaError, TCREx, needs_recourse

from .helpers import mixed

JOBS = ["clerk", "driver", "manager", "nurse", "teacher"]


def diagonal_model(Z):
    """A smooth diagonal boundary: axis-aligned rules fit it only on average, so boundary points often fail."""
    score = Z["income"].astype(float) + 0.8 * Z["age"].astype(float) + np.where(Z["job"].isin(["manager", "teacher"]), 15, 0)
    return (score > 85).astype(int).to_numpy()


@pytest.fixture(scope="module")
def data():
    X, _ = mixed(500, seed=1)
    return X


def _check_points(ex, X, cf, model):
    """Every checked point: inside its rule box with (low, high] and integer semantics, within the constraints,
    and valid on the model whenever `valid` says so."""
    expl = ex.explain(X, y_pred=model(X))
    has = cf["valid"].notna().to_numpy()
    assert (has == expl["rule"].notna().to_numpy()).all()
    cons = ex.constraints or {}
    pts = cf[X.columns]
    for i in np.flatnonzero(has):
        t, r = int(expl["target"].iloc[i]), int(expl["rule"].iloc[i])
        p, x = pts.iloc[i], X.iloc[i]
        for f, c in ex.rule_conditions(t, r).items():
            if "in" in c:
                assert p[f] in c["in"], (f, p[f], c)
            else:
                assert c["low"] is None or p[f] > c["low"], (f, p[f], c)
                assert c["high"] is None or p[f] <= c["high"], (f, p[f], c)
        assert float(p["age"]) == round(float(p["age"]))  # integer feature stays whole
        for f, kind in cons.items():
            kind = kind if isinstance(kind, str) else kind.get("kind")
            if kind == "immutable":
                assert p[f] == x[f], (f, p[f], x[f])
            elif kind == "increase_only":
                assert p[f] >= x[f], (f, p[f], x[f])
            elif kind == "decrease_only":
                assert p[f] <= x[f], (f, p[f], x[f])
        if cf["source"].iloc[i] == BOUNDARY:  # the boundary point leaves the rule's free features alone
            free = [f for f in X.columns if f not in ex.rule_conditions(t, r)]
            assert (p[free] == x[free]).all()
    ok = cf["valid"].fillna(False).to_numpy(bool)
    targets = expl["target"].to_numpy()
    out = model(pts[ok])
    for t in np.unique(targets[ok]):
        sel = targets[ok] == t
        assert ex.solution(int(t)).target.contains(out[sel]).all()
    assert ((cf["source"] == SEARCHED) | (cf["source"] == EXAMPLE))[cf["valid"].isna()].sum() == 0


numeric_kinds = st.sampled_from(["free", "immutable", "increase_only", "decrease_only"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(age=numeric_kinds, income=numeric_kinds, job=st.sampled_from(["free", "immutable", "transitions"]),
       tau=st.sampled_from([0.8, 0.9, 0.95]))
def test_verified_points_inside_rule_within_constraints_and_valid(data, age, income, job, tau):
    cons = {}
    if age != "free":
        cons["age"] = age
    if income != "free":
        cons["income"] = income
    if job == "immutable":
        cons["job"] = "immutable"
    elif job == "transitions":
        cons["job"] = {"transitions": {"clerk": ["driver"], "nurse": ["teacher"]}}
    ex = TCREx(rho=0.03, tau=tau, constraints=cons or None).fit(data, diagonal_model)
    cf = ex.counterfactuals(data)
    _check_points(ex, data, cf, diagonal_model)
    if job != "free":
        moved = cf["valid"].notna() & (cf["job"] != data["job"])
        allowed = {"clerk": {"driver"}, "nurse": {"teacher"}}
        for a, b in zip(data["job"][moved], cf["job"][moved]):
            assert job == "transitions" and (a not in allowed or b in allowed[a])


def test_search_repairs_failing_boundary_points(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    cf = ex.counterfactuals(data)
    assert set(cf["source"].cat.categories) == set(SOURCES)
    boundary = ex.counterfactuals(data, verify=False)
    y = diagonal_model(data)
    b_flip = diagonal_model(boundary) != y
    assert b_flip.mean() < 0.95  # the boundary point fails somewhere: the search has work to do
    assert cf["valid"].mean() > b_flip.mean()
    assert (cf["source"] == SEARCHED).any()
    # where the boundary point works, it is kept
    kept = cf["source"] == BOUNDARY
    assert (cf.loc[kept, data.columns] == boundary.loc[kept, data.columns]).all().all()
    # the searched point is never nearer than the boundary point (the boundary point is the nearest in the box)
    d_cf = ex.percentile_distance(data, cf[data.columns])
    d_b = ex.percentile_distance(data, boundary)
    assert (d_cf >= d_b - 1e-12).all()
    # ... and changes every feature the boundary point changes (a row outside the box on a feature must move on
    # it to be inside), so verified points are never sparser either: issue #11's distance and sparsity targets
    # against DiCE are bounded below by the boundary point's figures
    has = cf["valid"].notna().to_numpy()
    moved_b = (boundary[data.columns] != data).to_numpy()[has]
    moved_cf = (cf[data.columns] != data).to_numpy()[has]
    assert not (moved_b & ~moved_cf).any()


def test_verify_false_keeps_todays_boundary_points(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    b = ex.counterfactuals(data, verify=False)
    assert list(b.columns) == list(data.columns)
    expl = ex.explain(data)
    for (t, r), rows in expl.groupby(["target", "rule"]).groups.items():
        pd.testing.assert_frame_equal(b.loc[rows], ex.nearest_points(data.loc[rows], int(t), int(r)))


def test_without_a_model_nothing_is_verified(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, y_pred=diagonal_model(data))
    cf = ex.counterfactuals(data, y_pred=diagonal_model(data))
    assert list(cf.columns) == list(data.columns)  # verify defaults to False without a model
    with pytest.raises(ModelError, match="verify=True needs the model"):
        ex.counterfactuals(data, y_pred=diagonal_model(data), verify=True)
    verified = ex.counterfactuals(data, y_pred=diagonal_model(data), model=diagonal_model)
    assert "valid" in verified and "source" in verified  # a model passed now turns verification on


def test_rows_without_rule_have_missing_valid_and_source(data):
    cons = {"age": "immutable", "income": "immutable", "job": "immutable", "owner": "immutable"}
    ex = TCREx(rho=0.03, tau=0.9, constraints=cons).fit(data, diagonal_model)
    cf = ex.counterfactuals(data)
    no_rule = ex.explain(data)["rule"].isna().to_numpy()
    assert no_rule.any()
    assert cf["valid"][no_rule].isna().all() and cf["source"][no_rule].isna().all()
    assert cf.loc[no_rule, list(data.columns)].isna().all().all()


def test_already_in_target_rows_keep_their_values(data):
    ex = TCREx(rho=0.03, tau=0.9, target=1).fit(data, diagonal_model)
    cf = ex.counterfactuals(data)
    done = ~needs_recourse(ex.explain(data)["status"])
    assert done.any()
    assert cf["valid"][done].isna().all()
    assert (cf.loc[done, data.columns] == data.loc[done]).all().all()


def test_explain_one_carries_the_verdict(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    cf = ex.counterfactuals(data)
    i = int(np.flatnonzero((cf["source"] != BOUNDARY).to_numpy())[0])
    e = ex.explain_one(data.iloc[[i]])
    assert e.counterfactual_source == cf["source"].iloc[i]
    assert e.counterfactual == {k: (v.item() if hasattr(v, "item") else v) for k, v in cf[data.columns].iloc[i].items()}
    assert e.boundary_valid is False and e.boundary_point != e.counterfactual
    assert e.counterfactual_output == int(diagonal_model(pd.DataFrame([e.counterfactual]))[0])
    assert e.counterfactual_valid == bool(ex.solution(e.target).target.contains([e.counterfactual_output])[0])
    if e.example is not None:
        assert e.example_output == int(diagonal_model(pd.DataFrame([e.example]))[0])
    plain = ex.explain_one(data.iloc[[i]], verify=False)
    assert plain.counterfactual == e.boundary_point and plain.counterfactual_valid is None


# ---------------------------------------------------------------------------------------------- effectiveness
def test_effectiveness_counts_match_the_points(data):
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    eff = ex.effectiveness()
    assert eff.population == "fit rows" and eff.n == len(data)
    cf = ex.counterfactuals(data)
    boundary = ex.counterfactuals(data, verify=False)
    expl = ex.explain(data)
    has = expl["rule"].notna().to_numpy()
    flips = np.zeros(len(data), dtype=bool)
    for t in np.unique(expl["target"][has]):
        sel = has & (expl["target"] == t).to_numpy()
        flips[sel] = ex.solution(int(t)).target.contains(diagonal_model(boundary[sel]))
    verified = cf["valid"].fillna(False).to_numpy(bool) & (cf["source"] != EXAMPLE).to_numpy()
    assert eff.n_with_rule == has.sum() and eff.n_boundary_valid == flips.sum() and eff.n_verified == verified.sum()
    rules = ex.rules_frame(effectiveness=eff)
    assert rules["n_served"].sum() == has.sum()
    for row in rules[rules["n_served"] > 0].itertuples():
        sel = ((expl["target"] == row.target) & (expl["rule"] == row.rule)).fillna(False).to_numpy()
        assert row.boundary_effectiveness == pytest.approx(flips[sel].mean())
        assert row.effectiveness == pytest.approx(verified[sel].mean())
    metas = ex.metarules_frame(model=diagonal_model)  # a model alone: the fit rows as population
    assert metas["n_served"].sum() == has.sum()
    assert list(ex.rules_frame().columns) == list(rules.columns[:-3])  # nothing asked: today's columns
    # another population
    other = ex.effectiveness(data.iloc[:100], model=diagonal_model)
    assert other.population == "given rows" and other.n == 100


def test_effectiveness_json_round_trip_and_old_files(data):
    import json
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    eff = ex.effectiveness()
    plain = json.loads(ex.to_json())
    assert plain["version"] == 2 and "effectiveness" not in plain  # the version bumps only when included
    doc = json.loads(ex.to_json(effectiveness=eff))
    assert doc["version"] == 3 and doc["effectiveness"]["n_verified"] == eff.n_verified
    back = TCREx.from_json(json.dumps(doc))
    pd.testing.assert_frame_equal(back.effectiveness_.rules, eff.rules)
    pd.testing.assert_frame_equal(back.effectiveness_.metarules, eff.metarules)
    pd.testing.assert_frame_equal(back.rules_frame(effectiveness=True), ex.rules_frame(effectiveness=eff))
    old = TCREx.from_json(json.dumps(plain))  # an older file (version 2, no effectiveness) still loads
    assert getattr(old, "effectiveness_", None) is None
    v1 = dict(plain, version=1)
    v1["params"] = {k: v for k, v in plain["params"].items() if k != "constraints"}
    TCREx.from_json(json.dumps(v1))
    doc["effectiveness"]["rules"][0]["effectiveness"] = 2.0
    from tcrex import SchemaError
    with pytest.raises(SchemaError, match="effectiveness"):
        TCREx.from_json(json.dumps(doc))


def test_one_call_for_small_batches_chooses_the_same_points(data, monkeypatch):
    import tcrex._verify as verify
    ex = TCREx(rho=0.03, tau=0.9, constraints={"age": "increase_only"}).fit(data, diagonal_model)
    monkeypatch.setattr(verify, "SMALL_ROWS", 0)
    staged = ex.counterfactuals(data)
    monkeypatch.setattr(verify, "SMALL_ROWS", 10 ** 9)
    at_once = ex.counterfactuals(data)
    pd.testing.assert_frame_equal(staged, at_once)


def test_one_call_for_a_test_fold_checks_boundaries_and_candidates_together(data, monkeypatch):
    """Up to ONE_CALL_ROWS rows, boundary points and every candidate go to the model in one call: the same points,
    verdicts and sources as checking the boundary points first and searching for the failing rows."""
    import tcrex._verify as verify
    ex = TCREx(rho=0.03, tau=0.9, constraints={"age": "increase_only", "job": "immutable"}).fit(data, diagonal_model)
    fold = data.iloc[:150]
    calls = []

    def counted(Z):
        calls.append(len(Z))
        return diagonal_model(Z)

    frames = {}
    for name, one_call, small in (("one", 10 ** 9, 10 ** 9), ("two", 0, 10 ** 9), ("staged", 0, 0)):
        monkeypatch.setattr(verify, "ONE_CALL_ROWS", one_call)
        monkeypatch.setattr(verify, "SMALL_ROWS", small)
        calls.clear()
        frames[name] = ex.counterfactuals(fold, y_pred=diagonal_model(fold), model=counted)
        frames[name + " calls"] = list(calls)
    assert len(frames["one calls"]) == 1 and len(frames["two calls"]) == 2 and len(frames["staged calls"]) > 2
    assert (frames["one"]["source"] == SEARCHED).any() and (frames["one"]["source"] == BOUNDARY).any()
    pd.testing.assert_frame_equal(frames["one"], frames["two"])
    pd.testing.assert_frame_equal(frames["one"], frames["staged"])
    _check_points(ex, fold, frames["one"], diagonal_model)


def test_points_reach_a_categorical_model_as_the_cast_of_their_values(data, monkeypatch):
    """Data held as pandas categories (other order, an unused category): the points built from codes directly are
    the frames that decoding to values and casting gives."""
    import tcrex._verify as verify
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)  # job as text: the schema's categories are sorted
    X = data.iloc[:150].astype({"job": pd.CategoricalDtype(["pilot"] + list(reversed(JOBS)))})
    seen = {}

    def recorded(key):
        def model(Z):
            seen.setdefault(key, []).append(Z)
            return diagonal_model(Z)
        return model

    fast = ex.counterfactuals(X, y_pred=diagonal_model(X), model=recorded("fast"))
    init = verify._Model.__init__

    def without_codes(self, *a):
        init(self, *a)
        assert set(self.as_categorical) == {"job"}
        self.as_categorical = {}
    monkeypatch.setattr(verify._Model, "__init__", without_codes)
    cast = ex.counterfactuals(X, y_pred=diagonal_model(X), model=recorded("cast"))
    pd.testing.assert_frame_equal(fast, cast)
    assert len(seen["fast"]) == len(seen["cast"]) == 1
    for a, b in zip(seen["fast"], seen["cast"]):
        assert a["job"].dtype == X["job"].dtype
        pd.testing.assert_frame_equal(a, b)


def test_effectiveness_from_rows_verified_once_equals_a_fresh_check(data):
    """The dashboard verifies every row once and summarises subsets: same figures as checking those rows again."""
    ex = TCREx(rho=0.03, tau=0.9).fit(data, diagonal_model)
    expl, cf = ex.explain(data), ex.counterfactuals(data)
    for rows in (data.index, data.index[::3], data.index[:0]):
        fresh = ex.effectiveness(data.loc[rows], model=diagonal_model) if len(rows) else None
        summed = ex.effectiveness(explanations=expl.loc[rows], counterfactuals=cf.loc[rows])
        if fresh is None:
            assert summed.n == 0 and summed.n_needing == 0
            continue
        for k in ("n", "n_needing", "n_with_rule", "n_boundary_valid", "n_verified", "n_valid"):
            assert getattr(summed, k) == getattr(fresh, k), k
        pd.testing.assert_frame_equal(summed.rules, fresh.rules)
        pd.testing.assert_frame_equal(summed.metarules, fresh.metarules)
    with pytest.raises(ParameterError, match="both"):
        ex.effectiveness(explanations=expl)
    with pytest.raises(SchemaError, match="verify=True"):
        ex.effectiveness(explanations=expl, counterfactuals=ex.counterfactuals(data, verify=False))


def test_favourable_class_is_named_or_read_never_guessed():
    from tcrex import favourable_class
    assert favourable_class([0, 1]) == 1
    assert favourable_class(["no", "yes"]) == "yes"
    assert favourable_class(["<=50K", ">50K"]) == ">50K"
    assert favourable_class(["approved", "rejected"]) == "approved"
    assert favourable_class(["rejected", "approved"], named="rejected") == "rejected"  # metadata wins
    assert favourable_class([0, 1], named=1.0) == 1
    assert favourable_class(["A", "B"]) is None  # nothing says: the dashboard asks
    assert favourable_class(["yes", "true"]) is None  # two readings: ask
    assert favourable_class([0, 1, 2]) is None  # multi-class has no default


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 3000), d=st.integers(1, 8), levels=st.integers(1, 5), seed=st.integers(0, 2**32 - 1),
       signed_zeros=st.booleans())
def test_pool_deduplication_keeps_the_first_of_each_distinct_row_as_numpy_unique_does(n, d, levels, seed,
                                                                                       signed_zeros, monkeypatch):
    """The real-example pool is de-duplicated by sorting (small pools) or hashing (large ones); either way the kept
    rows are exactly np.unique(axis=0)'s first occurrences, so the chosen examples cannot change."""
    from tcrex import _verify

    rng = np.random.default_rng(seed)
    m = rng.integers(0, levels, (n, d)).astype(np.float64)
    if signed_zeros and n:
        m[rng.random(m.shape) < 0.2] = -0.0
    expected = np.sort(np.unique(m, axis=0, return_index=True)[1]) if n else np.zeros(0, dtype=np.int64)
    for threshold in (0, 10**9):  # hashing and sorting (the fixture is only patched, never stateful between runs)
        monkeypatch.setattr(_verify, "HASH_DEDUP_ROWS", threshold)
        assert np.array_equal(_verify.first_of_each_distinct_row(m), expected)
