"""Subgroup recourse audit (tcrex.audit) and its figures (tcrex.figures), on data with known answers.

The planted data set (``make_recourse_groups(disparity=True)``): the model approves ``income > 50 and
savings > 10`` for everyone, but group B never has the savings, so a rejected B applicant needs one more change
than a rejected A applicant unless their income is already high (10% of B): the mean-changes gap is ~0.9. The
null data set draws groups independently of everything, so every interval must cover zero.
"""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from tcrex import TCREx
from tcrex.errors import DataError, ParameterError, TCRExError
from tcrex.vocabulary import is_verified
from tcrex.figures import _audit as figs  # colours are module constants (tests may import private modules)
from tcrex.audit import METRICS, audit, gap_direction
from tcrex.population import MISSING_GROUP, REST, percentile_interval
from tcrex.audit._bootstrap import bootstrap_group  # the bootstrap itself (tests may import private modules)
from tcrex.datasets import make_loans, make_recourse_groups
from tests.support.audit_checks import assert_counts_equal, assert_same_audit

N = 4000


def _fit(disparity, seed, **params):
    df = make_recourse_groups(N, disparity=disparity, random_state=seed)
    X = df.drop(columns=["group", "approved"])
    y = df["approved"].to_numpy()
    # the known answers (gaps, null intervals, counts) were established with CART; grower="auto" would bin these
    # 4,000 continuous rows (same rules up to binned thresholds, e.g. a gap of 0.89 instead of 0.90)
    ex = TCREx(rho=0.02, tau=0.9, target=1, **{"grower": "exact", **params}).fit(X, y_pred=y)
    return df, X, y, ex


def _generating_rule(Z):
    """The model behind make_recourse_groups (approved when income > 50 and savings > 10)."""
    return ((Z["income"] > 50) & (Z["savings"] > 10)).astype(int).to_numpy()


@pytest.fixture(scope="module")
def planted():
    df, X, y, ex = _fit(True, 0)
    assert (_generating_rule(X) == y).all()
    return df, X, y, ex, audit(ex, X, df["group"], y_pred=y, model=_generating_rule)


@pytest.fixture(scope="module")
def null():
    df, X, y, ex = _fit(False, 1)
    return df, X, y, ex, audit(ex, X, df["group"], y_pred=y)


def _gap(res, metric, group):
    g = res.gaps()
    return g[(g.metric == metric) & (g.group == group)].iloc[0]


# ---------------------------------------------------------------------------------------------------- known answers
def test_planted_disparity_is_detected(planted):
    df, X, y, ex, res = planted
    assert res.reference == "A"  # the largest group
    assert res.groups == ["A", "B"] and res.group_column == "group"
    row = _gap(res, "mean_changes", "B")
    assert 0.8 <= row.difference <= 1.0
    assert 0 < row.ci_low <= row.difference <= row.ci_high
    assert row.significant and not row.small_group
    assert _gap(res, "mean_distance", "B").significant  # moving two features is further than moving one
    # everyone has recourse, and the only rule is the same for both groups
    for metric in ("recourse_share", "mean_feasibility", "mean_accuracy"):
        r = _gap(res, metric, "B")
        assert r.difference == 0 and r.ci_low <= 0 <= r.ci_high and not r.significant
    text = res.findings()
    hit = [f for f in text if "more changes" in f]
    assert len(hit) == 1
    assert hit[0].startswith("Individuals with group = B need on average 0.9")
    assert "than group = A to reach a point the model confirms (95% CI 0.8" in hit[0]
    assert "verified on the model" in text[0] and res.verified
    assert not any("No clear difference" in f and "mean changes" in f for f in text)
    shares = res.feature_change_shares()
    assert shares.loc["B", "savings"] == 1.0 and shares.loc["A", "savings"] == 0.0
    assert shares.loc["A", "income"] == 1.0
    assert (shares[["age", "employment"]] == 0).all().all()


def test_planted_matches_the_generating_rule(planted):
    """Per individual, the number of changes is the number of violated conditions of the true decision."""
    df, X, y, ex, res = planted
    ind = res.individuals
    need = y == 0
    assert (ind.needs_recourse.to_numpy() == need).all()
    truth = (df.income <= 50).astype(int) + (df.savings <= 10).astype(int)
    assert (ind.changes[need].to_numpy() == truth[need].to_numpy()).all()
    table = res.table().set_index("group")
    for g in ("A", "B"):
        sel = need & (df.group == g).to_numpy()
        assert table.loc[g, "n"] == sel.sum()
        assert table.loc[g, "n_total"] == (df.group == g).sum()
        assert table.loc[g, "n_already_in_target"] == ((df.group == g) & (y == 1)).sum()
        assert table.loc[g, "mean_changes"] == pytest.approx(truth[sel].mean())
    assert table.loc["A", "mean_changes"] == 1.0
    dist = res.changes_distribution()  # verified advice: nobody the model rejects is counted at 0 changes
    assert list(dist.columns) == [1, 2]
    assert dist.loc["A"].tolist() == [table.loc["A", "n"], 0]
    assert dist.loc["B", 1] + dist.loc["B", 2] == table.loc["B", "n"]
    top = res.top_rules("B")
    assert len(top) == 1 and top.share.iloc[0] == 1.0 and "savings" in top.conditions.iloc[0]


def test_no_disparity_every_interval_covers_zero(null):
    df, X, y, ex, res = null
    gaps = res.gaps()
    assert set(gaps.group) == {"B", "C"} and set(gaps.metric) == set(METRICS)
    # effectiveness needs the model; fitted from outputs alone it is unknown (NaN), never a gap
    unknown = gaps.metric == "effectiveness"
    assert gaps[unknown].value.isna().all() and not gaps[unknown].significant.any()
    gaps = gaps[~unknown]
    assert (gaps.ci_low <= 0).all() and (gaps.ci_high >= 0).all()
    assert not gaps.significant.any()
    text = res.findings()
    assert sum("No clear difference between group = " in f for f in text) == 2
    assert not any("more changes" in f or "fewer changes" in f for f in text)


@pytest.mark.slow  # hundreds of bootstrap audits: `make test`, not `make test-fast`
def test_bootstrap_intervals_are_calibrated(null):
    """Random two-way splits of the same individuals: a 95% interval excludes zero about 5% of the time."""
    df, X, y, ex, res = null
    ind = res.individuals[res.individuals.needs_recourse]
    vals = {k: ind[c].to_numpy(dtype=np.float64) for k, c in
            (("changes", "changes"), ("distance", "distance"), ("feasibility", "feasibility"),
             ("accuracy", "accuracy"))}
    vals["has"] = ind.has_recourse.to_numpy()
    rng = np.random.default_rng(7)
    reps, rejected = 100, {"mean_changes": 0, "mean_distance": 0}
    for _ in range(reps):
        split = rng.random(len(ind)) < 0.4
        a = bootstrap_group(rng, {k: v[split] for k, v in vals.items()}, 300, True)
        b = bootstrap_group(rng, {k: v[~split] for k, v in vals.items()}, 300, True)
        for m in rejected:
            lo, hi = percentile_interval(a[m] - b[m], 0.025)
            rejected[m] += lo > 0 or hi < 0
    for m, k in rejected.items():
        assert 1 <= k <= 0.12 * reps, (m, k)


def test_bootstrap_matches_plain_resampling():
    """The multinomial shortcut has the distribution of resampling individuals one by one."""
    rng = np.random.default_rng(3)
    n = 300
    has = rng.random(n) < 0.7
    vals = {"has": has, "changes": np.where(has, rng.integers(0, 4, n), np.nan),
            "distance": np.where(has, rng.gamma(2, 0.2, n), np.nan),
            "feasibility": np.where(has, rng.choice([0.1, 0.3], n), np.nan),
            "accuracy": np.where(has, rng.choice([0.9, 0.95, 1.0], n), np.nan),
            "works": (has & (rng.random(n) < 0.8)).astype(float)}
    fast = bootstrap_group(np.random.default_rng(0), vals, 8000, True)
    idx = np.random.default_rng(1).integers(0, n, size=(8000, n))
    h = has[idx]
    plain = {"recourse_share": h.mean(axis=1), "effectiveness": vals["works"][idx].mean(axis=1)}
    for m, c in (("mean_changes", "changes"), ("mean_distance", "distance"), ("mean_feasibility", "feasibility"),
                 ("mean_accuracy", "accuracy")):
        plain[m] = np.nansum(vals[c][idx], axis=1) / h.sum(axis=1)
    for m in METRICS:
        sd = plain[m].std()
        assert fast[m].mean() == pytest.approx(plain[m].mean(), abs=0.05 * sd)
        assert fast[m].std() == pytest.approx(sd, rel=0.05)
        for q in (0.025, 0.975):
            assert np.quantile(fast[m], q) == pytest.approx(np.quantile(plain[m], q), abs=0.1 * sd + 1 / n)


# ---------------------------------------------------------------------------------------------------- constraints
def test_immutable_feature_shows_in_the_recourse_share():
    df, X, y, ex = _fit(True, 0, constraints={"savings": "immutable"})
    res = audit(ex, X, df["group"], y_pred=y)
    t = res.table().set_index("group")
    assert t.loc["B", "n_no_actionable_rule"] == t.loc["B", "n"] > 0
    assert t.loc["B", "recourse_share"] == 0 and t.loc["B", "no_actionable_rule_share"] == 1
    assert t.loc["A", "recourse_share"] == 1 and t.loc["A", "n_no_actionable_rule"] == 0
    assert np.isnan(t.loc["B", "mean_changes"])
    share = _gap(res, "recourse_share", "B")
    assert share.difference == -1 and share.significant
    changes = _gap(res, "mean_changes", "B")
    assert np.isnan(changes.difference) and not changes.significant
    text = res.findings()
    assert any("have a rule less often than group = A: 0% against 100%" in f for f in text)
    assert text[0].count("Rules only — not checked on a model") == 1  # no model: the paper's rule-based audit
    assert any(f"{t.loc['B', 'n']} without an actionable one" in f for f in text)
    assert res.feature_change_shares().loc["B"].isna().all()  # nobody in B has recourse


# ---------------------------------------------------------------------------------------------------- options
def test_reference_rest_and_explicit(planted, null):
    df, X, y, ex, res = planted
    rest = res.regroup(reference=REST)
    assert rest.reference == REST and set(rest.gaps().group) == {"A", "B"}
    # with two groups, "the rest" of B is A: same difference as the group reference
    assert _gap(rest, "mean_changes", "B").difference == pytest.approx(_gap(res, "mean_changes", "B").difference)
    assert _gap(rest, "mean_changes", "A").difference == pytest.approx(-_gap(res, "mean_changes", "B").difference)
    assert any("than the rest of the population" in f for f in rest.findings())
    _, Xn, yn, exn, resn = null
    other = audit(exn, Xn, resn.individuals.group.astype(str), y_pred=yn, reference="C", n_boot=200)
    assert other.reference == "C" and set(other.gaps().group) == {"A", "B"}
    assert other.table().set_index("group").loc["C", "is_reference"]
    with pytest.raises(ParameterError, match="not a group"):
        audit(exn, Xn, resn.individuals.group.astype(str), y_pred=yn, reference="Z")


@pytest.mark.slow  # three audits: `make test`, not `make test-fast`
def test_groups_by_column_name_series_or_array(planted):
    df, X, y, ex, res = planted
    with_group = df.drop(columns=["approved"])  # the grouping column is in X but not a model feature
    by_name = audit(ex, with_group, "group", y_pred=y, model=_generating_rule)
    by_array = audit(ex, X, df["group"].to_numpy(), y_pred=y, model=_generating_rule)
    shuffled = df["group"].sample(frac=1, random_state=0)  # same index, other order: aligned by index
    by_index = audit(ex, X, shuffled, y_pred=y, model=_generating_rule)
    for other in (by_name, by_array, by_index):
        pd.testing.assert_frame_equal(other.table(), res.table())
        pd.testing.assert_frame_equal(other.gaps(), res.gaps())
    assert not by_name.group_is_feature
    with pytest.raises(DataError, match="indexed differently"):
        audit(ex, X, df["group"].reset_index(drop=True).set_axis(range(1, N + 1)), y_pred=y)
    with pytest.raises(DataError, match="one value per row"):
        audit(ex, X, df["group"].to_numpy()[:-1], y_pred=y)
    with pytest.raises(DataError, match="not in X"):
        audit(ex, X, "sex", y_pred=y)
    with pytest.raises(ParameterError, match="binned"):
        audit(ex, with_group, "income", y_pred=y)


def test_intersectional_groups_from_two_columns(planted):
    """groups=["group", "band"] (or a DataFrame of both) audits every combination present, named "group = A and
    band = low" in sentences; the small-group rule applies to each intersection; the reference is chosen freely."""
    df, X, y, ex, res = planted
    frame = df.drop(columns=["approved"]).assign(band=np.where(df["income"] > 60, "high", "low"))
    rng = np.random.default_rng(0)
    frame.loc[rng.choice(np.flatnonzero((df["group"] == "B").to_numpy()), 25, replace=False), "band"] = "rare"
    out = audit(ex, frame, ["group", "band"], y_pred=y, n_boot=200)
    assert out.group_column == "group × band"
    combos = sorted({f"{g} · {b}" for g, b in zip(frame["group"], frame["band"])})
    assert sorted(out.groups) == combos
    t = out.table().set_index("group")
    for label in combos:
        g, b = label.split(" · ")
        rows = (frame["group"] == g) & (frame["band"] == b)
        assert t.loc[label, "n_total"] == int(rows.sum())
        assert t.loc[label, "n"] == int((rows & (y == 0)).sum())
        assert t.loc[label, "small_group"] == (t.loc[label, "n"] < out.min_group_size)
    assert out.display("B · rare") == "group = B and band = rare"
    assert t.loc["B · rare", "small_group"]
    assert not out.gaps().query("group == 'B · rare'")["significant"].any()  # small: never a clear gap
    same = audit(ex, frame, frame[["group", "band"]], y_pred=y, n_boot=200)
    pd.testing.assert_frame_equal(same.table(), out.table())
    chosen = audit(ex, frame, ["group", "band"], y_pred=y, n_boot=200, reference="A · low")
    assert chosen.reference == "A · low" and "group = A and band = low" in chosen.findings()[0]
    assert set(chosen.gaps()["group"]) == set(combos) - {"A · low"}


def test_small_and_missing_groups_are_flagged(planted):
    df, X, y, ex, res = planted
    groups = df["group"].astype(object).copy()
    rejected = np.flatnonzero(y == 0)
    groups.iloc[rejected[:12]] = "C"
    groups.iloc[rejected[12:20]] = None
    out = res.regroup(groups, n_boot=300)
    assert out.groups == ["A", "B", "C", MISSING_GROUP]
    t = out.table().set_index("group")
    assert t.loc["C", "n"] == 12 and t.loc["C", "small_group"] and t.loc[MISSING_GROUP, "n"] == 8
    small = out.gaps()[out.gaps().group.isin(["C", MISSING_GROUP])]
    assert small.small_group.all() and not small.significant.any()
    text = out.findings()
    assert any(f.startswith("Small group: only 12 individuals with group = C need recourse") for f in text)
    assert not any("group = C need on average" in f for f in text)
    assert out.regroup(groups, min_group_size=5, n_boot=300).table().set_index("group").loc["C", "small_group"] \
        == False  # noqa: E712


def test_target_is_required_and_checked():
    df = make_recourse_groups(1500, disparity=True, random_state=2)
    X, y = df.drop(columns=["group", "approved"]), df["approved"].to_numpy()
    ex = TCREx(rho=0.02, tau=0.9).fit(X, y_pred=y)  # default targets: both directions
    with pytest.raises(ParameterError, match="favourable"):
        audit(ex, X, df["group"], y_pred=y)
    res = audit(ex, X, df["group"], y_pred=y, target=1, n_boot=200)
    assert res.target == "output = 1" and res.table()["n"].sum() == (y == 0).sum()
    reg = TCREx(rho=0.05, tau=0.9).fit(X, y_pred=df["income"].to_numpy())
    with pytest.raises(ParameterError, match="interval"):
        audit(reg, X, df["group"], y_pred=df["income"].to_numpy(), target=50.0)
    ok = audit(reg, X, df["group"], y_pred=df["income"].to_numpy(), target=(50.0, None), n_boot=100)
    assert ok.table()["n"].sum() == (df["income"] <= 50).sum()


@pytest.mark.parametrize("kwargs, match", [({"n_boot": 0}, "n_boot"), ({"confidence": 1.0}, "confidence"),
                                           ({"confidence": "95%"}, "confidence"),
                                           ({"min_group_size": -1}, "min_group_size")])
def test_parameter_errors(planted, kwargs, match):
    df, X, y, ex, res = planted
    with pytest.raises(TCRExError, match=match):
        audit(ex, X, df["group"], y_pred=y, **kwargs)


def test_seeded_and_reproducible(planted):
    df, X, y, ex, res = planted
    again = audit(ex, X, df["group"], y_pred=y, model=_generating_rule)
    pd.testing.assert_frame_equal(again.gaps(), res.gaps())
    other = res.regroup(random_state=1)
    assert not np.allclose(other.gaps().ci_low.fillna(0), res.gaps().ci_low.fillna(0))
    narrow = res.regroup(confidence=0.5)
    wide = _gap(res, "mean_changes", "B")
    assert wide.ci_low <= _gap(narrow, "mean_changes", "B").ci_low
    assert "50% CI" in " ".join(narrow.findings())


def test_single_group_and_nobody_needing_recourse(planted):
    df, X, y, ex, res = planted
    one = res.regroup(np.full(N, "all"))
    assert one.gaps().empty and one.reference == "all"
    assert any("only one group" in f for f in one.findings())
    approved = y == 1
    none = audit(ex, X[approved], df["group"][approved], y_pred=y[approved], n_boot=50)
    assert none.table()["n"].sum() == 0
    assert any("No individual needs recourse" in f for f in none.findings())
    json.dumps(none.to_dict(), allow_nan=False)
    for fig in (figs.gap_forest_plot(one), figs.group_comparison_bars(none, "mean_changes"),
                figs.feature_change_heatmap(none), figs.changes_distribution_by_group(none)):
        assert isinstance(fig, go.Figure)


# ---------------------------------------------------------------------------------------------------- per-individual numbers
def test_numbers_match_the_engine_on_a_multi_rule_model():
    """Loans: several rules; the grouping column (home_ownership) is also a model feature."""
    df = make_loans(2500, random_state=0)
    X, y = df.drop(columns=["approved"]), df["approved"].to_numpy()
    ex = TCREx(rho=0.02, tau=0.9, target=1).fit(X, y_pred=y)
    res = audit(ex, X, "home_ownership", y_pred=y, n_boot=200)
    exp = ex.explain(X, y_pred=y)
    has = exp.status.isin(["ok", "already_in_rule"]).to_numpy()
    rules = ex.rules_frame().set_index("rule")
    assert len(rules) > 1
    ind = res.individuals
    assert (ind.has_recourse.to_numpy() == has).all()
    r = exp.rule[has].astype(int).to_numpy()
    assert np.allclose(ind.feasibility[has], rules.loc[r, "feasibility"])
    assert np.allclose(ind.accuracy[has], rules.loc[r, "accuracy"])
    assert (ind.changes[has] == exp.changes[has]).all()
    # total percentile shift, recomputed by hand from the fit data for the rows with recourse
    cf = ex.counterfactuals(X, y_pred=y)
    manual = np.zeros(len(X))
    for col in X.columns:
        if col in ("employment", "home_ownership", "purpose"):
            manual += (X[col].to_numpy(dtype=object) != cf[col].to_numpy(dtype=object))
        else:
            fit = np.sort(X[col].to_numpy(dtype=float))
            pct = lambda v: np.searchsorted(fit, v, side="right") / len(fit)  # noqa: E731
            manual += np.abs(pct(X[col].to_numpy(dtype=float)) - pct(cf[col].to_numpy(dtype=float)))
    assert np.allclose(ind.distance[has], manual[has])
    assert ind.distance[~has].isna().all()
    t = res.table().set_index("group")
    for g in res.groups:
        sel = has & (X.home_ownership == g).to_numpy()
        assert t.loc[g, "mean_changes"] == pytest.approx(exp.changes[sel].mean())
        assert t.loc[g, "mean_distance"] == pytest.approx(manual[sel].mean())
        fa = ex.feature_actions(X[sel], y_pred=y[sel])
        assert res.feature_change_shares().loc[g].to_numpy() == pytest.approx((fa == "change").mean().to_numpy())
        assert res.feature_change_shares("keep").loc[g].to_numpy() == \
            pytest.approx((fa == "keep").mean().to_numpy())
        top = res.top_rules(g, k=100)
        assert top.n.sum() == sel.sum() and top.share.sum() == pytest.approx(1.0)
        assert top.n.is_monotonic_decreasing
    assert res.group_is_feature
    ivals = res.metric_intervals()
    assert ivals[ivals.metric == "effectiveness"].value.isna().all()  # no model given: unknown
    ivals = ivals[ivals.metric != "effectiveness"]
    assert ((ivals.ci_low <= ivals.value + 1e-12) & (ivals.value <= ivals.ci_high + 1e-12)).all()


def test_to_dict_is_json(planted):
    df, X, y, ex, res = planted
    d = res.to_dict()
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["reference"] == "A" and back["groups"] == ["A", "B"]
    assert back["findings"] == res.findings()
    assert len(back["gaps"]) == len(res.gaps()) and len(back["table"]) == 2
    assert back["feature_change_shares"]["B"]["savings"] == 1.0
    assert back["changes_distribution"]["A"]["1"] == int(res.table().n.iloc[0])
    assert set(back["metrics"]) == set(METRICS)
    assert back["top_rules"]["B"][0]["share"] == 1.0


@pytest.mark.slow  # 30k rows: `make test`, not `make test-fast`
def test_audit_on_30k_rows_counts_everyone_needing_recourse_once():
    """How fast (the audit against the explainer's own fit, in one process) is printed by
    ``benchmarks/suite_timings.py``; this test checks what the audit counts on the same data."""
    df = make_loans(30_000, random_state=0)
    X, y = df.drop(columns=["approved"]), df["approved"].to_numpy()
    ex = TCREx(rho=0.02, tau=0.9, target=1).fit(X, y_pred=y)
    groups = np.random.default_rng(0).choice(["a", "b", "c", "d"], len(X))
    res = audit(ex, X, groups, y_pred=y)
    table = res.table()
    assert sorted(table["group"]) == ["a", "b", "c", "d"]
    assert table["n"].sum() == int((y != 1).sum()) > 10_000  # each person without the favourable outcome, once


# ---------------------------------------------------------------------------------------------------- figures
def test_group_comparison_bars_spec(planted):
    df, X, y, ex, res = planted
    fig = figs.group_comparison_bars(res, "mean_changes")
    (bar,) = fig.data
    assert bar.type == "bar" and list(bar.x) == ["A", "B"]
    t = res.table().set_index("group")
    assert list(bar.y) == pytest.approx(t.loc[["A", "B"], "mean_changes"].tolist())
    iv = res.metric_intervals().query("metric == 'mean_changes'").set_index("group")
    assert list(bar.error_y.array) == pytest.approx((iv.ci_high - iv.value).tolist())
    assert list(bar.error_y.arrayminus) == pytest.approx((iv.value - iv.ci_low).tolist())
    assert bar.marker.color[0] == figs.REFERENCE_COLOR and bar.marker.color[1] == figs.GROUP_COLOR
    assert "Mean changes by group" in fig.layout.title.text
    share = figs.group_comparison_bars(res, "no_actionable_rule_share")
    assert share.data[0].error_y.array is None and share.layout.yaxis.tickformat == ".0%"
    with pytest.raises(ParameterError):
        figs.group_comparison_bars(res, "nonsense")
    with pytest.raises(ParameterError):
        figs.group_comparison_bars(res.table(), "mean_changes")


def test_gap_forest_plot_spec(planted, null):
    df, X, y, ex, res = planted
    fig = figs.gap_forest_plot(res)
    assert len(fig.data) == len(METRICS)
    zero_lines = [s for s in fig.layout.shapes if s.x0 == 0 and s.x1 == 0]
    assert len(zero_lines) == len(METRICS)
    gaps = res.gaps().set_index("metric")
    for trace, metric in zip(fig.data, METRICS):
        scale = 100 if METRICS[metric][2] == "share" else 1
        row = gaps.loc[metric]
        assert trace.x[0] == pytest.approx(row.difference * scale)
        assert trace.error_x.array[0] == pytest.approx((row.ci_high - row.difference) * scale)
        assert trace.error_x.arrayminus[0] == pytest.approx((row.difference - row.ci_low) * scale)
        worse = gap_direction(gaps.loc[[metric]].reset_index())[0] == "worse"
        clear = figs.SIGNIFICANT_COLOR if worse else figs.BETTER_COLOR  # by direction: worse / better for the group
        assert trace.marker.color[0] == (clear if row.significant else figs.UNCLEAR_COLOR)
    changes_axis = fig.layout[f"xaxis{list(METRICS).index('mean_changes') + 1}"]
    assert changes_axis.range[0] < 0 < changes_axis.range[1]  # the zero line is always in view
    nfig = figs.gap_forest_plot(null[4], metrics=["mean_changes"])
    assert len(nfig.data) == 1 and list(nfig.data[0].y) == ["B", "C"]
    assert set(nfig.data[0].marker.color) == {figs.UNCLEAR_COLOR}
    with pytest.raises(ParameterError):
        figs.gap_forest_plot(res, metrics=["bogus"])


def test_changes_distribution_and_heatmap_spec(planted):
    df, X, y, ex, res = planted
    fig = figs.changes_distribution_by_group(res)
    assert [t.name for t in fig.data] == ["A", "B"] and fig.layout.barmode == "group"
    for trace in fig.data:
        assert list(trace.x) == ["1", "2"] and sum(trace.y) == pytest.approx(1.0)  # verified: never 0 changes
    counts = figs.changes_distribution_by_group(res, normalize=False)
    assert list(counts.data[0].y) == res.changes_distribution().loc["A"].tolist()
    heat = figs.feature_change_heatmap(res)
    (h,) = heat.data
    shares = res.feature_change_shares()
    asked = shares.loc[:, (shares.fillna(0) > 0).any()]  # features no group is asked to change are left out
    assert h.type == "heatmap" and list(h.x) == list(asked.columns) and list(h.y) == ["A", "B"]
    assert np.array(h.z, dtype=float) == pytest.approx(asked.to_numpy())
    assert dict(zip(h.x, h.text[1]))["savings"] == "100%" and h.zmin == 0 and h.zmax == 1
    keep = figs.feature_change_heatmap(res, kind="keep")
    assert dict(zip(keep.data[0].x, np.array(keep.data[0].z, dtype=float)[0]))["savings"] == 1.0  # A keeps savings
    with pytest.raises(ParameterError):
        figs.feature_change_heatmap(res, kind="other")


def test_user_text_is_not_markup(planted):
    df, X, y, ex, res = planted
    odd = res.regroup(df["group"].map({"A": "<b>A</b>", "B": "%{x}"}).rename("<i>g</i>"), n_boot=50)
    fig = figs.group_comparison_bars(odd, "recourse_share")
    assert sorted(fig.data[0].x) == ["%{x}", "&lt;b&gt;A&lt;/b&gt;"]
    assert "&lt;i&gt;g&lt;/i&gt;" in fig.layout.title.text


def test_audit_modules_do_not_import_streamlit():
    root = Path(__file__).resolve().parents[2] / "tcrex"
    for path in [*(root / "audit").glob("*.py"), root / "figures" / "_audit.py"]:
        source = path.read_text()
        assert "import streamlit" not in source and "from streamlit" not in source


def test_effectiveness_per_group_counts_verified_recourse(planted):
    """With a model, "has recourse" is verified recourse: the recourse share of a group is the share of its members
    needing recourse whose counterfactual point the model confirms, with intervals (``effectiveness`` and
    ``n_verified`` are the same figures under their earlier names)."""
    df, X, y, ex, res = planted
    cf = ex.counterfactuals(X, y_pred=y, model=_generating_rule)
    works = is_verified(cf)  # the one definition of "works"
    table = res.table().set_index("group")
    need = y == 0
    for g in ("A", "B"):
        sel = need & (df.group == g).to_numpy()
        assert table.loc[g, "recourse_share"] == table.loc[g, "effectiveness"] == pytest.approx(works[sel].mean())
        assert table.loc[g, "n_recourse"] == table.loc[g, "n_verified"] == works[sel].sum()
    row = _gap(res, "recourse_share", "B")
    assert np.isfinite(row.ci_low) and row.ci_low <= row.difference <= row.ci_high
    assert row.n_group == table.loc["B", "n"]
    assert "effectiveness" not in set(res.gaps().metric)  # the same number as recourse_share: compared once
    assert res.individuals["recourse_works"][need].notna().all()
    assert res.individuals["recourse_works"][~need].isna().all()


def test_every_metric_has_its_own_gap_sentence(planted):
    """A clear gap is told in the words of its metric (the effectiveness gap once read as one of rule accuracy)."""
    from tcrex.audit._wording import _GAP_SENTENCES, _RULE_GAP_SENTENCES, gap_sentence

    df, X, y, ex, res = planted
    assert set(_GAP_SENTENCES) == set(_RULE_GAP_SENTENCES) == set(METRICS)
    rows = {r.metric: r for r in res.gaps().itertuples() if r.group == "B"}
    assert "confirms" in gap_sentence(res, rows["recourse_share"])
    assert "accurate" not in gap_sentence(res, rows["recourse_share"])
    assert "accurate" in gap_sentence(res, rows["mean_accuracy"])
    rules_only = audit(ex, X, df["group"], y_pred=y, n_boot=50)  # no model: the paper's rules, and says so
    assert not rules_only.verified
    for r in rules_only.gaps().itertuples():
        if r.group == "B" and np.isfinite(r.difference):
            assert "rules only — not checked on a model" in gap_sentence(rules_only, r)
            assert "confirms" not in gap_sentence(rules_only, r)


# ---------------------------------------------------------------------------------------------------- mergeable counts
@pytest.mark.slow  # one audit per partition: `make test`, not `make test-fast`
@pytest.mark.parametrize("reference", [None, REST])
def test_counts_of_partitions_add_up_to_the_in_memory_audit(planted, reference):
    """Counted per random partition and added (distances and verified recourse included), the counts equal the
    in-memory audit's and give exactly its numbers, intervals and findings (same seed)."""
    from tcrex.audit import audit_counts, audit_from_counts
    df, X, y, ex, res = planted
    frame = X.assign(group=df["group"].to_numpy())
    frame.loc[frame.index[:7], "group"] = None  # a missing group too
    want = audit(ex, frame, "group", y_pred=y, model=_generating_rule, reference=reference, n_boot=300)
    cuts = np.sort(np.random.default_rng(0).choice(np.arange(1, N), size=6, replace=False))
    parts = [audit_counts(ex, frame.iloc[a:b], "group", y_pred=y[a:b], model=_generating_rule)
             for a, b in zip([0, *cuts], [*cuts, N])]
    total = sum(parts[::-1])  # order of addition does not matter
    assert total.n_rows == N and total.distances["n"].sum() == want.table()["n_recourse"].sum()
    assert_counts_equal(total, want.counts)
    got = audit_from_counts(total, reference=reference, n_boot=300)
    assert got.individuals is None
    assert_same_audit(got, want)
    with pytest.raises(ParameterError, match="counts"):
        got.regroup(reference=REST)


def test_counts_match_the_rows(planted):
    """The count cells against the per-individual outcomes they summarise."""
    df, X, y, ex, res = planted
    c, ind = res.counts, res.individuals
    assert c.cells["n"].sum() == N
    for g in res.groups:
        sel = ind[ind.group == g]
        cells = c.cells[c.cells.group == g]
        assert cells["n"].sum() == len(sel)
        for status, n in cells.groupby("status")["n"].sum().items():
            assert (sel.status == status).sum() == n
        rec = sel[sel.has_recourse]
        assert (cells[cells.has_recourse].eval("changes * n").sum()) == rec.changes.sum()
        assert c.change.loc[g, "savings"] == ex.feature_actions(X[(df.group == g).to_numpy() & (y == 0)],
                                                                 y_pred=y[(df.group == g).to_numpy() & (y == 0)]
                                                                 )["savings"].eq("change").sum()
        d = c.distances[c.distances.group == g]
        assert d["n"].sum() == len(rec)
        assert np.sort(np.repeat(d.distance.to_numpy(), d.n.to_numpy())) == pytest.approx(
            np.sort(rec.distance.to_numpy()), abs=0)


def test_bootstrap_from_counts_equals_the_sorted_rows():
    """Drawing from distinct distances and their counts is drawing from the sorted list of all distances."""
    from tcrex.audit._bootstrap import _bootstrap_sums
    rng = np.random.default_rng(5)
    values = rng.choice([0.1, 0.25, 0.4, 1.3], size=500)
    uniq, counts = np.unique(values, return_counts=True)
    sizes = rng.integers(0, 500, size=200)
    a = _bootstrap_sums(np.random.default_rng(9), uniq, counts, sizes)
    idx = np.random.default_rng(9).integers(0, 500, size=int(sizes.sum()), dtype=np.int32)
    drawn = np.sort(values)[idx]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    b = np.array([drawn[s:s + k].sum() for s, k in zip(starts, sizes)])
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_long_subtitles_wrap_and_the_heatmap_names_its_grouping_in_the_title(planted):
    """Plotly never wraps a subtitle: the dashboard cut the heatmap's list of features left out ("… Foreign_worker
    and 2") and the gap chart's colour key ("slate: no cle"); the heatmap's long y-axis title ran into the subtitle."""
    df, X, y, ex, res = planted
    long = res.regroup(df["group"].rename("Personal_status_and_sex_of_the_applicant"), n_boot=50)
    figures = [figs.feature_change_heatmap(long), figs.gap_forest_plot(long)]
    for fig in figures:
        sub = fig.layout.title.subtitle.text
        lines = sub.split("<br>")
        assert all(len(line) <= 100 for line in lines), lines
        assert fig.layout.margin.t >= 80 + 16 * (len(lines) - 1)
    heat = figures[0]
    assert heat.layout.title.text.endswith("by Personal_status_and_sex_of_the_applicant")
    assert not heat.layout.yaxis.title.text
