"""Recourse across models (tcrex.compare.compare_models, rule_stability, `tcrex compare`) against a brute-force
recomputation with the public API: two explainers, their verified points, model B asked about A's points one by one.
"""
import json

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.compare import rule_stability
from tcrex.compare import (CHANGES, ComparisonResult, compare_counts, compare_from_counts, compare_models,
                           fit_explainer_b)
from tcrex.errors import CellLimitError, DataError, ModelError, ParameterError, SchemaError
from tcrex.vocabulary import is_verified, needs_recourse
from tcrex.datasets import make_loans

N = 700
FEATS = None


def _frame(n, seed):
    df = make_loans(n, random_state=seed)
    y = df.pop("approved").to_numpy()
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]):
            df[c] = df[c].astype("category")
    return df, y


def _xgb(X, y, seed, **kw):
    return xgb.XGBClassifier(n_estimators=25, max_depth=3, enable_categorical=True, tree_method="hist",
                             random_state=seed, **kw).fit(X, y)


@pytest.fixture(scope="module")
def setup():
    X, y = _frame(N, 3)
    model_a = _xgb(X, y, 0)
    pick = np.random.default_rng(5).integers(0, N, N)
    model_b = _xgb(X.iloc[pick], y[pick], 1)
    # most features immutable: verified recourse (a point that follows the advice, or a minimal change beyond the
    # rules, both within the constraints) then exists for some people under one model and not the other, so the
    # comparison has people who lose and gain it (without constraints nearly everyone keeps it)
    fixed = ["income", "age", "employment", "home_ownership", "purpose", "loan_amount"]
    ex_a = TCREx(rho=0.04, tau=0.85, target=1, constraints={f: "immutable" for f in fixed}).fit(X, model_a)
    groups = pd.Series(np.where(X["age"] > 40, "over 40", "40 or under"), index=X.index, name="age band")
    res = compare_models(ex_a, X, model_b, groups=groups, n_boot=200)
    return X, y, model_a, model_b, ex_a, groups, res


def _one(point: pd.Series, X: pd.DataFrame) -> pd.DataFrame:
    """One point as a one-row frame with X's column types (how the model was trained)."""
    row = pd.DataFrame([point.to_dict()])
    for c in X.columns:
        row[c] = row[c].astype(X[c].dtype)
    return row


def _brute(ex_a, ex_b, X, model_a, model_b):
    """Every column of .people, person by person, from the public API only."""
    names = list(X.columns)
    exp_a, exp_b = ex_a.explain(X, model=model_a, target=1), ex_b.explain(X, model=model_b, target=1)
    cf_a, cf_b = ex_a.counterfactuals(X, model=model_a, target=1), ex_b.counterfactuals(X, model=model_b, target=1)
    need_a, need_b = needs_recourse(exp_a["status"]), needs_recourse(exp_b["status"])
    ver_a, ver_b = is_verified(cf_a), is_verified(cf_b)
    rows = []
    for i, idx in enumerate(X.index):
        holds = None
        if ver_a[i]:
            holds = bool(model_b.predict(_one(cf_a.loc[idx, names], X))[0] == 1)
        if need_a[i] and need_b[i]:
            change = {(True, True): "kept", (True, False): "lost", (False, True): "gained",
                      (False, False): "still none"}[(bool(ver_a[i]), bool(ver_b[i]))]
        elif need_b[i]:
            change = "newly needed"
        elif need_a[i]:
            change = "no longer needed"
        else:
            change = "not needed"

        def rid(ex, exp, col, cf=None):
            src = exp if cf is None else cf
            r, t = src.loc[idx, col], exp.loc[idx, "target"]
            return None if pd.isna(r) or pd.isna(t) else ex.rule_id(int(t), int(r))

        def cost(cf, ver):
            if not (ver and ex_a.has_fit_data):  # percentiles of A's fit rows: none after from_json
                return np.nan
            return float(ex_a.percentile_distance(X.loc[[idx]], cf.loc[[idx], names])[0])

        rows.append({"needs_recourse_a": bool(need_a[i]), "needs_recourse_b": bool(need_b[i]),
                     "verified_a": bool(ver_a[i]), "verified_b": bool(ver_b[i]), "advice_a_holds_under_b": holds,
                     "change": change,
                     "n_changes_a": len(cf_a.loc[idx, "changed"]) if ver_a[i] else None,
                     "n_changes_b": len(cf_b.loc[idx, "changed"]) if ver_b[i] else None,
                     "cost_a": cost(cf_a, ver_a[i]), "cost_b": cost(cf_b, ver_b[i]),
                     "rule_a": rid(ex_a, exp_a, "rule"), "rule_b": rid(ex_b, exp_b, "rule"),
                     "recommended_rule_a": rid(ex_a, exp_a, "recommended_rule", cf_a),
                     "recommended_rule_b": rid(ex_b, exp_b, "recommended_rule", cf_b),
                     "status_a": str(exp_a.loc[idx, "status"]), "status_b": str(exp_b.loc[idx, "status"])})
    return pd.DataFrame(rows, index=X.index), cf_a, exp_a


def test_people_equal_brute_force(setup):
    X, y, model_a, model_b, ex_a, groups, res = setup
    ex_b = TCREx(**ex_a.get_params()).fit(X, model_b)  # A's parameters, model B, A's fit rows
    want, _, _ = _brute(ex_a, ex_b, X, model_a, model_b)
    got = res.people
    assert got.index.equals(X.index) and len(got) == N
    for col in want.columns:
        g, w = got[col].astype(object).tolist(), want[col].tolist()
        if col.startswith("cost"):
            np.testing.assert_allclose(np.asarray(g, float), np.asarray(w, float), rtol=1e-12, equal_nan=True)
        else:
            assert [None if pd.isna(v) else v for v in g] == [None if (v is None or v != v) else v for v in w], col
    assert (got["output_a"].to_numpy() == model_a.predict(X)).all()
    assert (got["output_b"].to_numpy() == model_b.predict(X)).all()
    assert set(got["change"]) <= set(CHANGES)
    # the data must exercise the comparison: people lose, keep and gain recourse and some advice breaks
    counts = got["change"].value_counts()
    assert counts.get("kept", 0) > 50 and (counts.get("lost", 0) + counts.get("gained", 0)) > 0
    assert (got["advice_a_holds_under_b"] == False).sum() > 0  # noqa: E712
    assert res.explainer_b_fit_on == "the fit rows of explainer A"


def test_summary_and_groups_equal_brute_force(setup):
    X, y, model_a, model_b, ex_a, groups, res = setup
    p = res.people
    s = res.summary
    assert s["n"] == N
    for ch in CHANGES:
        assert s["changes"][ch] == int((p["change"] == ch).sum())
    ver = p["verified_a"].to_numpy(bool)
    holds = p["advice_a_holds_under_b"].to_numpy(dtype=bool, na_value=False)
    assert s["n_verified_a"] == ver.sum() and s["n_holds"] == holds.sum()
    assert s["invalidation_rate"] == pytest.approx(1 - holds.sum() / ver.sum())
    kept = p["change"] == "kept"
    assert s["mean_changes_change"] == pytest.approx(
        (p.loc[kept, "n_changes_b"].astype(float) - p.loc[kept, "n_changes_a"].astype(float)).mean())
    assert s["mean_cost_change"] == pytest.approx((p.loc[kept, "cost_b"] - p.loc[kept, "cost_a"]).mean())
    assert s["lost_share"] == pytest.approx((p["change"] == "lost").sum() / p["needs_recourse_a"].sum())
    n_lost = s["changes"]["lost"]
    assert res.headline().startswith(f"{n_lost} {'person' if n_lost == 1 else 'people'} lose")
    assert f"{1 - s['invalidation_rate']:.0%}" in res.headline()
    table = res.groups.set_index("group")
    for g in ("40 or under", "over 40"):
        sel = (groups == g).to_numpy()
        q = p[sel]
        assert table.loc[g, "n"] == sel.sum()
        assert table.loc[g, "n_need_a"] == q["needs_recourse_a"].sum()
        assert table.loc[g, "n_verified_b"] == q["verified_b"].sum()
        assert table.loc[g, "n_lost"] == (q["change"] == "lost").sum()
        assert table.loc[g, "n_invalidated"] == (q["advice_a_holds_under_b"] == False).sum()  # noqa: E712
        assert table.loc[g, "invalidation_rate"] == pytest.approx(
            (q["advice_a_holds_under_b"] == False).sum() / q["verified_a"].sum())  # noqa: E712
    gaps = res.gaps
    assert set(gaps["metric"]) == {"lost_share", "gained_share", "invalidation_rate", "verified_share_a",
                                   "verified_share_b"}
    assert (gaps["ci_low"] <= gaps["difference"] + 1e-9).all() and (gaps["difference"] <= gaps["ci_high"] + 1e-9).all()
    assert any("compared with" in f for f in res.findings())
    other = res.regroup(reference="over 40")
    assert set(other.gaps["group"]) == {"40 or under"} and other.reference == "over 40"
    with pytest.raises(ParameterError, match="not a group"):
        res.regroup(reference="nobody")


def _inside(conditions: dict, X: pd.DataFrame) -> np.ndarray:
    """Rows of X satisfying a rule's printed conditions: (low, high] bounds, or a set of categories."""
    ok = np.ones(len(X), dtype=bool)
    for f, c in conditions.items():
        if "in" in c:
            ok &= X[f].astype(object).isin(c["in"]).to_numpy()
        else:
            v = X[f].to_numpy(dtype=float)
            if c.get("low") is not None:
                ok &= v > c["low"]
            if c.get("high") is not None:
                ok &= v <= c["high"]
    return ok


def test_rules_rechecked_under_b_equal_brute_force(setup):
    X, y, model_a, model_b, ex_a, groups, res = setup
    rules = res.rules
    assert len(rules) == ex_a.solution(0).n_rules
    y_b = model_b.predict(X)
    p = res.people
    for r in rules.itertuples():
        inside = _inside(ex_a.rule_conditions(int(r.target), int(r.rule)), X)
        assert r.n_rows == inside.sum()
        assert r.accuracy_b == pytest.approx((y_b[inside] == 1).mean())
        assert bool(r.holds_tau_b) == ((y_b[inside] == 1).mean() >= ex_a.tau)
        mine = p["recommended_rule_a"] == r.rule_id
        assert r.n_points == mine.sum()
        assert r.n_points_hold == (p.loc[mine, "advice_a_holds_under_b"] == True).sum()  # noqa: E712


def test_merged_counts_from_parts_equal_in_memory(setup):
    X, y, model_a, model_b, ex_a, groups, res = setup
    ex_b = TCREx(**ex_a.get_params()).fit(X, model_b)
    whole = compare_models(ex_a, X, model_b, groups=groups, explainer_b=ex_b, n_boot=200)
    cuts = [0, 150, 151, 400, N]
    parts = [compare_counts(ex_a, X.iloc[a:b], model_b, explainer_b=ex_b, groups=groups.iloc[a:b])
             for a, b in zip(cuts[:-1], cuts[1:])]
    merged = compare_from_counts(sum(parts), n_boot=200)
    pd.testing.assert_frame_equal(merged.counts.cells, whole.counts.cells, check_exact=False, rtol=1e-12)
    assert json.dumps(merged.to_dict(people=False), allow_nan=False) == \
        json.dumps(whole.to_dict(people=False), allow_nan=False) or _close(merged, whole)


def _close(a, b):
    pd.testing.assert_frame_equal(a.groups, b.groups)
    pd.testing.assert_frame_equal(a.gaps, b.gaps)
    pd.testing.assert_frame_equal(a.rules, b.rules)
    for k, v in a.summary.items():
        assert v == pytest.approx(b.summary[k], nan_ok=True) if not isinstance(v, dict) else v == b.summary[k]
    return True


def test_json_round_trip(setup):
    res = setup[-1]
    back = ComparisonResult.from_json(res.to_json())
    pd.testing.assert_frame_equal(back.people, res.people)
    pd.testing.assert_frame_equal(back.groups, res.groups)
    pd.testing.assert_frame_equal(back.gaps, res.gaps)
    pd.testing.assert_frame_equal(back.rules, res.rules, check_dtype=False)
    assert back.findings() == res.findings() and back.headline() == res.headline()
    assert json.loads(back.to_json()) == json.loads(res.to_json())
    assert back.regroup(reference="rest").gaps.equals(res.regroup(reference="rest").gaps)
    with pytest.raises(SchemaError, match="version"):
        ComparisonResult.from_json(json.dumps({**json.loads(res.to_json()), "version": 99}))
    with pytest.raises(SchemaError, match="not a comparison"):
        ComparisonResult.from_json("{}")


def test_bad_inputs_get_clear_messages(setup):
    X, y, model_a, model_b, ex_a, groups, res = setup
    fewer = _xgb(X.drop(columns=["age"]), y, 0)
    with pytest.raises(DataError, match=r"model B does not take \['age'\]"):
        compare_models(ex_a, X, fewer, n_boot=10)
    # the engine's rule of which columns a model declares (tcrex.model_feature_names): a loaded model file's list
    class Declared:  # a model that names its inputs like tcrex.intake.LoadedModel, one the data lacks
        feature_names = [*X.columns, "zip_code"]

        def predict(self, rows):
            return model_b.predict(rows[list(X.columns)])
    with pytest.raises(DataError, match=r"model B needs \['zip_code'\], which explainer A does not explain"):
        compare_models(ex_a, X, Declared(), n_boot=10)
    from sklearn.tree import DecisionTreeRegressor
    reg = DecisionTreeRegressor(max_depth=3).fit(X.select_dtypes("number"), X["income"] * 1.5)
    num = X.select_dtypes("number")
    ex_num = TCREx(rho=0.05, target=1).fit(num, _xgb(num, y, 0))
    with pytest.raises(ModelError, match="regression task"):
        compare_models(ex_num, num, reg, n_boot=10)
    default = TCREx(rho=0.05).fit(num, _xgb(num, y, 0))
    with pytest.raises(ParameterError, match="favourable"):
        compare_models(default, num, _xgb(num, y, 1), n_boot=10)
    with pytest.raises(DataError, match="lacks column"):
        compare_models(ex_a, X.drop(columns=["income"]), model_b, n_boot=10)
    restored = TCREx.from_json(ex_a.to_json())
    with pytest.raises(ModelError, match="model_a="):
        compare_models(restored, X, model_b, n_boot=10)
    three = _xgb(X, np.where(X["income"] > 80, 2, y), 0)
    with pytest.raises(ModelError, match="never predicted"):
        compare_models(ex_a, X, three, n_boot=10)


def test_restored_explainer_fits_b_on_x_and_verifies_both_alike(setup):
    X, y, model_a, model_b, ex_a, groups, res = setup
    restored = TCREx.from_json(ex_a.to_json())
    got = compare_models(restored, X, model_b, model_a=model_a, n_boot=10)
    assert got.explainer_b_fit_on == "the compared rows X" and got.rules_measured_on == "the compared rows X"
    assert not got.distance_available and got.people["cost_a"].isna().all()
    ex_b = TCREx.from_json(TCREx(**restored.get_params()).fit(X, model_b).to_json())
    want, _, _ = _brute(restored, ex_b, X, model_a, model_b)
    for col in ("verified_a", "verified_b", "advice_a_holds_under_b", "change"):
        assert [None if pd.isna(v) else v for v in got.people[col].astype(object)] == \
            [None if v is None else v for v in want[col]], col
    # the one way explainer B is fitted (compare_models and `tcrex compare` call it): A's parameters on B's outputs,
    # through JSON like the restored A; B's parameters of its own via params_b
    own = fit_explainer_b(restored, X, model_b.predict(X), fit_on="the compared rows X")
    assert own.to_json() == got.explainer_b.to_json() == ex_b.to_json() and not own.has_fit_data
    finer = fit_explainer_b(restored, X, model_b.predict(X), fit_on="X", params_b={"tau": 0.95})
    assert finer.tau == 0.95 and finer.rho == restored.rho
    with pytest.raises(ParameterError, match="params_b may set"):
        fit_explainer_b(restored, X, model_b.predict(X), fit_on="X", params_b={"target": 0})


def test_rule_stability_equals_brute_force(setup):
    X, y, model_a, model_b, ex_a, groups, res = setup
    made = []

    def fit_model(Xt, yt, seed):
        m = _xgb(Xt, yt, seed)
        made.append(m)
        return m

    st = rule_stability(ex_a, X, y, fit_model, n_models=4, kind="bootstrap", random_state=3)
    assert len(made) == 4 and st.n_models == 4
    cf = ex_a.counterfactuals(X, model=model_a, target=1)
    ver = is_verified(cf)
    want = np.full(N, np.nan)
    points = pd.concat([_one(cf.loc[i, list(X.columns)], X) for i in X.index[ver]], ignore_index=True)
    oks = []
    for m in made:  # each retrained model asked about every verified point (one call per model)
        ok = np.zeros(N, dtype=bool)
        ok[ver] = m.predict(points) == 1
        oks.append(ok)
    want[ver] = np.mean(oks, axis=0)[ver]
    np.testing.assert_allclose(st.people["advice_holds_share"].to_numpy(), want, equal_nan=True)
    for r in st.rules.itertuples():
        inside = _inside(ex_a.rule_conditions(0, int(r.rule)), X)
        holds = [(m.predict(X[inside]) == 1).mean() >= ex_a.tau for m in made]
        assert r.holds_tau_share == pytest.approx(np.mean(holds))
    seeds = rule_stability(ex_a, X, y, lambda a, b, s: _xgb(a, b, s), n_models=2, kind="seed")
    assert seeds.kind == "seed" and len(seeds.metarules) == len(ex_a.metarules_frame())
    json.loads(st.to_json())
    with pytest.raises(ParameterError, match="kind"):
        rule_stability(ex_a, X, y, fit_model, kind="jackknife")


# ---------------------------------------------------------------------------------------------------- command line
def test_cli_compare_on_parquet_equals_in_memory(setup, tmp_path):
    """`tcrex compare` over several files (counts merged, B's rules fitted by the command) equals compare_models of
    all rows with the same restored explainer A; the people Parquet equals .people."""
    from tcrex.cli import main
    from tcrex.datasets import LOANS_MODEL, SAMPLE_DATA_DIR, load_bundled_loans
    from tcrex.intake import load_model
    model_path = SAMPLE_DATA_DIR / LOANS_MODEL
    frame = load_bundled_loans().drop(columns=["approved"]).head(600)
    frame.iloc[:250].to_parquet(tmp_path / "a.parquet", index=False)
    frame.iloc[250:].to_parquet(tmp_path / "b.parquet", index=False)
    ex = TCREx(rho=0.05, target=1).fit(frame, load_model(model_path.read_bytes(), LOANS_MODEL))
    (tmp_path / "rules.json").write_text(ex.to_json())
    b_path = _second_model(frame, tmp_path)
    out = tmp_path / "cmp.json"
    res = CliRunner().invoke(main, ["compare", "--rules", str(tmp_path / "rules.json"), "--model", str(model_path),
                                    "--model-b", str(b_path), "--data", str(tmp_path / "*.parquet"),
                                    "--group-column", "home_ownership", "--n-boot", "50", "--batch-size", "100",
                                    "--workers", "2", "--out", str(out), "--people-out", str(tmp_path / "people")],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    got = ComparisonResult.from_json(out.read_text())
    model_a = load_model(model_path.read_bytes(), LOANS_MODEL)
    model_b = load_model(b_path.read_bytes(), b_path.name)
    want = compare_models(TCREx.from_json(ex.to_json()), frame, model_b, model_a=model_a, groups="home_ownership",
                          n_boot=50)
    assert got.explainer_b_fit_on == want.explainer_b_fit_on == "the compared rows X"
    assert got.findings() == want.findings()
    pd.testing.assert_frame_equal(got.groups, want.groups, check_dtype=False)
    pd.testing.assert_frame_equal(got.gaps, want.gaps)
    people = pd.concat([pd.read_parquet(tmp_path / "people" / f) for f in ("a.parquet", "b.parquet")],
                       ignore_index=True)
    assert people["row"].tolist() == list(range(250)) + list(range(350))
    w = want.people.reset_index(drop=True)
    for col in ("change", "verified_a", "verified_b", "advice_a_holds_under_b", "rule_a", "n_changes_b", "group"):
        assert [None if pd.isna(v) else v for v in people[col].astype(object)] == \
            [None if pd.isna(v) else v for v in w[col].astype(object)], col
    assert "lose recourse" in res.output or "loses recourse" in res.output


def _second_model(frame, tmp_path):
    from tcrex.datasets import LOANS_CATEGORIES, load_bundled_loans
    data = load_bundled_loans()
    X = data.drop(columns=["approved"])
    for col, levels in LOANS_CATEGORIES.items():
        X[col] = pd.Categorical(X[col].astype(object), categories=levels)
    pick = np.random.default_rng(11).integers(0, len(X), len(X))
    m = _xgb(X.iloc[pick], data["approved"].to_numpy()[pick], 2)
    path = tmp_path / "b_model.json"
    m.save_model(str(path))
    return path


def test_cli_compare_bad_inputs_are_messages(setup, tmp_path):
    from tcrex.cli import main
    from tcrex.datasets import LOANS_MODEL, SAMPLE_DATA_DIR, load_bundled_loans
    from tcrex.intake import load_model
    model_path = SAMPLE_DATA_DIR / LOANS_MODEL
    frame = load_bundled_loans().drop(columns=["approved"]).head(300)
    frame.to_parquet(tmp_path / "a.parquet", index=False)
    ex = TCREx(rho=0.05).fit(frame, load_model(model_path.read_bytes(), LOANS_MODEL))
    (tmp_path / "rules.json").write_text(ex.to_json())
    args = ["compare", "--rules", str(tmp_path / "rules.json"), "--model", str(model_path), "--data",
            str(tmp_path / "a.parquet"), "--out", str(tmp_path / "o.json")]
    res = CliRunner().invoke(main, args + ["--model-b", str(model_path)])
    assert res.exit_code == 2 and "error: " in res.output and "--target" in res.output and "target=" not in res.output and "Traceback" not in res.output
    X = frame.drop(columns=["age"]).copy()
    for c in X.columns:
        if not pd.api.types.is_numeric_dtype(X[c]):
            X[c] = X[c].astype("category")
    other = _xgb(X, np.arange(len(X)) % 2, 0)
    other.save_model(str(tmp_path / "other.json"))
    res = CliRunner().invoke(main, args + ["--model-b", str(tmp_path / "other.json"), "--target", "1"])
    assert res.exit_code == 2 and "does not take ['age']" in res.output, res.output


def test_report_section_and_figures(setup):
    from tcrex.figures import comparison_gap_plot, recourse_flow, rule_accuracy_shift
    from tcrex.report import ReportOptions, build_report
    X, y, model_a, model_b, ex_a, groups, res = setup
    html = build_report(ex_a, ReportOptions(title="t", data_description="d", data_fingerprint="x",
                                            model_description="m", model_fingerprint="y", params={}, comparison=res,
                                            comparison_title="A against B"))
    assert 'id="comparison"' in html and res.headline() in html.replace("&#x27;", "'")
    assert "<script" not in html
    flow = recourse_flow(res).data[0]
    assert sum(flow.link.value) == N  # every person in exactly one flow
    kept = [v for v, lab in zip(flow.link.value, flow.link.label) if lab == "kept"]
    assert sum(kept) == res.summary["changes"]["kept"]
    assert len(comparison_gap_plot(res).data) == len(res.gaps)
    assert len(rule_accuracy_shift(res).data) == 2


def test_bundled_retrained_model_differs_but_agrees_mostly():
    from tcrex.datasets import LOANS_MODEL_B, SAMPLE_DATA_DIR, load_bundled_loans, load_bundled_model
    data = load_bundled_loans()
    a, b = load_bundled_model(), load_bundled_model(SAMPLE_DATA_DIR / LOANS_MODEL_B)
    agree = np.mean(a.predict(data) == b.predict(data))
    assert 0.9 < agree < 1.0
    assert b.meta["agreement_with_model_a"] == pytest.approx(agree, abs=1e-4)


def test_target_derived_on_demand_has_its_rules_rechecked():
    """An explainer fitted with the default targets (every other class) compared towards one class: that target is
    derived on demand by explain(), and its rules are re-checked like fitted ones."""
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier
    X, y = load_wine(return_X_y=True, as_frame=True)
    a = RandomForestClassifier(30, random_state=0).fit(X, y)
    b = RandomForestClassifier(30, random_state=1, max_depth=2).fit(X, y)
    ex = TCREx(rho=0.05, tau=0.8).fit(X, a)
    res = compare_models(ex, X, b, target=2, n_boot=20)
    assert len(res.rules) and res.rules["rule_id"].notna().all() and res.rules["n_rows"].sum() > 0
    exp = ex.explain(X, model=a, target=2)
    t = int(exp["target"].dropna().iloc[0])
    assert t >= len(ex.targets_)  # derived on demand, not fitted
    assert res.rules["rule_id"].tolist() == [ex.rule_id(t, r) for r in range(ex.solution(t).n_rules)]
    st = rule_stability(ex, X, y, lambda Xt, yt, s: RandomForestClassifier(10, random_state=s).fit(Xt, yt),
                        n_models=2, target=2)
    assert len(st.rules) == ex.solution(t).n_rules and len(st.metarules) == len(ex.solution(t).metarules)


def test_cli_compare_with_given_rules_b_and_a_fit_sample(tmp_path):
    """--rules-b: B's explainer as given (no fit on the driver); --fit-b-sample: B's rules fitted on a sample."""
    from tcrex.cli import main
    from tcrex.datasets import LOANS_MODEL, LOANS_MODEL_B, SAMPLE_DATA_DIR, load_bundled_loans
    from tcrex.intake import load_model
    model_a, model_b = SAMPLE_DATA_DIR / LOANS_MODEL, SAMPLE_DATA_DIR / LOANS_MODEL_B
    frame = load_bundled_loans().drop(columns=["approved"]).head(400)
    frame.to_csv(tmp_path / "people.csv", index=False)
    ex_a = TCREx(rho=0.05, target=1).fit(frame, load_model(model_a.read_bytes(), LOANS_MODEL))
    ex_b = TCREx(rho=0.05, target=1).fit(frame, load_model(model_b.read_bytes(), LOANS_MODEL_B))
    (tmp_path / "a.json").write_text(ex_a.to_json())
    (tmp_path / "b.json").write_text(ex_b.to_json())
    base = ["compare", "--rules", str(tmp_path / "a.json"), "--model", str(model_a), "--model-b", str(model_b),
            "--data", str(tmp_path / "people.csv"), "--n-boot", "20"]
    res = CliRunner().invoke(main, base + ["--rules-b", str(tmp_path / "b.json"), "--out", str(tmp_path / "g.json")],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    got = ComparisonResult.from_json((tmp_path / "g.json").read_text())
    want = compare_models(TCREx.from_json(ex_a.to_json()), frame, load_model(model_b.read_bytes(), LOANS_MODEL_B),
                          model_a=load_model(model_a.read_bytes(), LOANS_MODEL),
                          explainer_b=TCREx.from_json(ex_b.to_json()), n_boot=20)
    assert got.explainer_b_fit_on == f"given (--rules-b {tmp_path / 'b.json'})"
    assert got.summary["changes"] == want.summary["changes"] and got.groups is None
    res = CliRunner().invoke(main, base + ["--fit-b-sample", "300", "--out", str(tmp_path / "s.json")],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    got = ComparisonResult.from_json((tmp_path / "s.json").read_text())
    assert got.explainer_b_fit_on == "a uniform sample of 300 of the 400 compared rows"
    assert got.summary["n"] == 400


def test_explainer_b_takes_its_own_parameters_and_says_which_limit_stopped_it(setup):
    X, y, model_a, model_b, ex_a, groups, res = setup
    own = compare_models(ex_a, X, model_b, n_boot=10, params_b={"rho": 0.08, "n_trees": 2})
    b = own.explainer_b
    assert (b.rho, b.n_trees, b.tau, b.constraints) == (0.08, 2, ex_a.tau, ex_a.constraints)
    want = TCREx(**{**ex_a.get_params(), "rho": 0.08, "n_trees": 2, "task": ex_a.task_, "class_names": None}).fit(
        ex_a.fit_rows(), model_b)
    assert [t.n_cells for t in b.targets_] == [t.n_cells for t in want.targets_]
    with pytest.raises(CellLimitError, match=r"could not fit explainer B \(its own parameters .*max_cells=2\b.*"
                                             r"above max_cells=2\b.*params_b="):
        compare_models(ex_a, X, model_b, n_boot=10, params_b={"rho": 0.01, "n_trees": 3, "max_cells": 2})
    with pytest.raises(ParameterError, match="params_b may set"):
        compare_models(ex_a, X, model_b, n_boot=10, params_b={"target": 0})
    with pytest.raises(ParameterError, match="explainer_b= given"):
        compare_models(ex_a, X, model_b, n_boot=10, explainer_b=b, params_b={"rho": 0.08})


@pytest.mark.parametrize("points", [2.3, 6.0])
def test_a_gap_gets_the_audits_verdict_in_the_comparison(setup, points):
    """One owner of "a clear gap" (tcrex.population.clear_gaps: interval excludes zero and at least the practical
    threshold): a significant 2.3-point gap is below it in the audit and in the comparison alike (findings, JSON,
    report), a 6-point one is clear in both."""
    import copy

    from tcrex.audit import clear_gaps
    from tcrex.population import PRACTICAL_DEFAULT
    from tcrex.report import comparison_html

    res = copy.deepcopy(setup[-1])
    gaps = res.gaps.copy()
    i = gaps.index[gaps["metric"] == "verified_share_a"][0]
    d = points / 100
    gaps.loc[i, ["value", "reference_value", "difference", "ci_low", "ci_high", "significant", "small_group"]] = \
        [0.5 + d, 0.5, d, d / 2, d * 1.5, True, False]
    res.gaps = gaps
    audit_says = bool(clear_gaps(gaps, PRACTICAL_DEFAULT)[gaps.index.get_loc(i)])
    assert audit_says == (points >= PRACTICAL_DEFAULT)
    said = [f for f in res.to_dict()["findings"] if "have verified recourse under model A more often" in f]
    assert bool(said) == audit_says, res.findings()
    # the finding about this gap (the data's own gaps may sit below the threshold too: "share gaining recourse")
    below = [f for f in res.findings() if f.startswith("Below the practical threshold")
             and "verified recourse under A" in f]
    assert bool(below) != audit_says and (not below or f"+{points:.1f} points" in below[0])
    gap_table = comparison_html(res).split("<h3>Gaps from")[1].split("</table>")[0]
    assert gap_table.count(">yes<") == int(clear_gaps(gaps, PRACTICAL_DEFAULT).sum())  # the report's column agrees
