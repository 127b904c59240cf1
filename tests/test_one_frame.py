"""One owner, one per-person frame: every population figure is an aggregate of the verified frame
``TCREx.counterfactuals(verify=True)`` defines.

Per dataset (the bundled loans sample with its XGBoost model, and a German-credit-like table of categorical codes
with an XGBoost model using native categoricals), the frame is computed once here and every figure derived
elsewhere is checked against its aggregate: the audit's table, changes distribution, change / keep shares, top
rules and gaps' point values; the audit figures' data; ``effectiveness()``; the comparison's summary, people and
groups; the HTML report's audit table and verified headline (parsed from the HTML); and ``tcrex audit --model
--reference-rows`` on Parquet files (a rules JSON, a model file, the fit rows as reference rows).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.audit import audit
from tcrex.cli import main
from tcrex.compare import compare_models
from tcrex.figures import changes_distribution_by_group, feature_change_heatmap, group_comparison_bars
from tcrex.report import ReportOptions, build_report
from tcrex.vocabulary import BOUNDARY, EXAMPLE, MINIMAL_CHANGE, NEXT_RULE, SEARCHED, is_verified, needs_recourse

from tests.support.credit_like import german_like, german_model

#: Real XGBoost models, a verification of every row per dataset, the CLI on files: `make test`, not `make test-fast`.
pytestmark = pytest.mark.slow

N_BOOT = 60


# ---------------------------------------------------------------------------------------------------- datasets
def _loans():
    from tcrex.datasets import LOANS_MODEL, LOANS_MODEL_B, SAMPLE_DATA_DIR, load_bundled_loans, load_bundled_model

    frame = load_bundled_loans()
    X = frame.drop(columns=["approved"])
    model = load_bundled_model()
    model_b = load_bundled_model(SAMPLE_DATA_DIR / LOANS_MODEL_B)

    def save_model(path):
        path.write_bytes((SAMPLE_DATA_DIR / LOANS_MODEL).read_bytes())
        return path

    fit_rows = X.iloc[:2500]
    return dict(name="loans", X=X, fit_rows=fit_rows, features=list(X.columns), model=model, model_b=model_b,
                group="employment", save_model=save_model)


def _german():
    frame = german_like(1600, seed=0)
    X = frame.drop(columns=["target"])
    features = [c for c in X.columns if c != "sex"]
    model = german_model(frame)
    boot = frame.iloc[np.random.default_rng(1).integers(0, len(frame), len(frame))].reset_index(drop=True)
    model_b = german_model(boot, seed=1)

    def save_model(path):
        model.save_model(path)
        return path

    return dict(name="german", X=X, fit_rows=X[features], features=features, model=model, model_b=model_b,
                group="sex", save_model=save_model)


@pytest.fixture(scope="module", params=["loans", "german"])
def case(request):
    """The dataset, its explainer (fitted with the model, target 1) and the per-person verified frame, computed
    once: ``exp`` (explain: who needs recourse, the target) and ``cf`` (counterfactuals(verify=True))."""
    d = _loans() if request.param == "loans" else _german()
    ex = TCREx(target=1).fit(d["fit_rows"][d["features"]], d["model"])
    X = d["X"]
    d.update(ex=ex, exp=ex.explain(X[d["features"]], model=d["model"]),
             cf=ex.counterfactuals(X[d["features"]], model=d["model"]))
    d["want"] = _aggregates(d)
    return d


def _aggregates(d) -> dict:
    """Per group, every figure the other outputs must show, aggregated from the one frame."""
    ex, X, cf, exp, features = d["ex"], d["X"], d["cf"], d["exp"], d["features"]
    need = needs_recourse(exp["status"])
    ver = is_verified(cf) & need
    labels = X[d["group"]].astype(str).to_numpy()
    dist = np.full(len(X), np.nan)
    dist[ver] = ex.percentile_distance(X.loc[ver, features], cf.loc[ver, features])
    target = exp["target"].to_numpy(dtype=np.float64, na_value=np.nan)
    rec = cf["recommended_rule"].to_numpy(dtype=np.float64, na_value=np.nan)
    source = cf["source"].astype(object).to_numpy()
    changed = cf["changed"].to_numpy(dtype=object)
    out = {}
    for g in sorted(set(labels)):
        n = need & (labels == g)
        v = ver & (labels == g)
        rows = np.flatnonzero(v)
        keeps = {f: 0 for f in features}
        for i in rows:
            if rec[i] == rec[i]:
                for f in ex.rule_conditions(int(target[i]), int(rec[i])):
                    keeps[f] += f not in changed[i]
        out[g] = {
            "n": int(n.sum()), "n_recourse": int(v.sum()), "recourse_share": v.sum() / n.sum(),
            "mean_changes": float(cf["n_changes"].to_numpy()[v].mean()), "mean_distance": float(dist[v].mean()),
            "changes": Counter(int(k) for k in cf["n_changes"].to_numpy()[v]),
            "change": {f: np.mean([f in changed[i] for i in rows]) for f in features},
            "keep": {f: keeps[f] / len(rows) for f in features},
            "rules": Counter((int(target[i]), int(rec[i])) for i in rows if rec[i] == rec[i]),
            "n_optimal_rule": int(np.isin(source[n], [BOUNDARY, SEARCHED]).sum()),
            "n_next_rule": int((source[n] == NEXT_RULE).sum()),
            "n_minimal_change": int((source[n] == MINIMAL_CHANGE).sum()),
            "n_similar": int((source[n] == EXAMPLE).sum()),
            "n_none": int((pd.isna(source[n])).sum()),
        }
    d["need"], d["ver"], d["dist"] = need, ver, dist
    return out


# ---------------------------------------------------------------------------------------------------- the audit
def _check_audit_doc(groups: dict, table: pd.DataFrame, changes: pd.DataFrame, change: pd.DataFrame,
                     keep: pd.DataFrame, top: dict, want: dict, features) -> None:
    """An audit (its table, distribution, shares, top rules: frames keyed by group) equals the frame's aggregates."""
    for g, w in want.items():
        row = table.loc[g]
        assert row["n"] == w["n"] and row["n_recourse"] == w["n_recourse"], g
        assert row["recourse_share"] == pytest.approx(w["recourse_share"], abs=1e-12)
        assert row["mean_changes"] == pytest.approx(w["mean_changes"], abs=1e-12)
        assert row["mean_distance"] == pytest.approx(w["mean_distance"], abs=1e-9)
        for k in ("n_optimal_rule", "n_next_rule", "n_minimal_change", "n_similar", "n_none"):
            assert row[k] == w[k], (g, k)
        dist = {int(k): int(v) for k, v in changes.loc[g].items() if v}
        assert dist == dict(w["changes"]), g
        assert 0 not in dist  # nobody the model rejects is counted as needing no change
        for f in features:
            assert change.loc[g, f] == pytest.approx(w["change"][f], abs=1e-12), (g, f)
            assert keep.loc[g, f] == pytest.approx(w["keep"][f], abs=1e-12), (g, f)
        assert top[g] == w["rules"], g


def test_the_audit_and_its_figures_are_aggregates_of_the_frame(case):
    X, want, features = case["X"], case["want"], case["features"]
    res = audit(case["ex"], X, case["group"], model=case["model"], n_boot=N_BOOT)
    assert res.verified and res.basis == "verified on the model"
    table = res.table().set_index("group")
    top = {g: Counter({(int(r.target), int(r.rule)): int(r.n) for r in res.top_rules(g, k=1000).itertuples()})
           for g in res.groups}
    _check_audit_doc(res.groups, table, res.changes_distribution(), res.feature_change_shares(),
                     res.feature_change_shares("keep"), top, want, features)
    # the gaps' and intervals' point values are the table's
    for r in res.metric_intervals().itertuples():
        assert r.value == pytest.approx(table.loc[r.group, r.metric], nan_ok=True)
    # the figures' data
    bars = group_comparison_bars(res, "mean_changes").data[0]
    assert list(bars.y) == pytest.approx([want[g]["mean_changes"] for g in res.groups])
    dist = changes_distribution_by_group(res, normalize=False)
    for trace in dist.data:
        assert "0" not in list(trace.x)
        shown = {int(x): int(y) for x, y in zip(trace.x, trace.y) if y}
        assert shown == dict(want[trace.name]["changes"])
    heat_fig = feature_change_heatmap(res)
    heat = heat_fig.data[0]
    for i, g in enumerate(heat.y):
        for f, z in zip(heat.x, heat.z[i]):
            assert z == pytest.approx(want[g]["change"][f])
    assert all("Verified on the model" in f.layout.title.subtitle.text for f in (dist, heat_fig))
    # the findings speak of the verified advice, with its numbers
    overview = res.findings()[0]
    assert f"Audit of {sum(w['n'] for w in want.values()):,} individuals" in overview
    assert "verified on the model" in overview


def test_effectiveness_and_the_comparison_are_aggregates_of_the_frame(case):
    ex, X, features, want = case["ex"], case["X"], case["features"], case["want"]
    need, ver, cf = case["need"], case["ver"], case["cf"]
    eff = ex.effectiveness(X[features], model=case["model"])
    assert eff.n_needing == need.sum() and eff.n_verified == ver.sum()
    for k in ("n_optimal_rule", "n_next_rule", "n_minimal_change", "n_similar", "n_none"):
        assert getattr(eff, k) == sum(w[k] for w in want.values()), k
    cmp = compare_models(ex, X, case["model_b"], groups=case["group"], n_boot=N_BOOT)
    s = cmp.summary
    assert s["n_need_a"] == need.sum() and s["n_verified_a"] == ver.sum()
    assert s["recourse_share_a"] == pytest.approx(ver.sum() / need.sum())
    assert s["mean_changes_a"] == pytest.approx(cf["n_changes"].to_numpy()[ver].mean())
    people = cmp.people
    assert (people["verified_a"].to_numpy() == ver).all()
    assert people["n_changes_a"].to_numpy(dtype=float, na_value=np.nan)[ver] == pytest.approx(
        cf["n_changes"].to_numpy()[ver])
    assert people["cost_a"].to_numpy()[ver] == pytest.approx(case["dist"][ver])
    groups = cmp.groups.set_index("group")
    for g, w in want.items():
        assert groups.loc[g, "n_verified_a"] == w["n_recourse"]
        assert groups.loc[g, "verified_share_a"] == pytest.approx(w["recourse_share"])


# ---------------------------------------------------------------------------------------------------- the report
class _Tables(HTMLParser):
    """Every ``<table>`` of a document as rows of cell texts, with the id of the element just before it."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell, self._row, self.last_id, self.ids = [], None, None, None, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.last_id = attrs["id"]
        if tag == "table":
            self.tables.append([])
            self.ids.append(self.last_id)
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def test_the_report_prints_the_aggregates_of_the_frame(case):
    ex, X, features, want = case["ex"], case["X"], case["features"], case["want"]
    res = audit(ex, X, case["group"], model=case["model"], n_boot=N_BOOT)
    eff = ex.effectiveness(X[features], model=case["model"])
    html = build_report(ex, ReportOptions(title="t", data_description="d", data_fingerprint="f", model_description="m",
                                          model_fingerprint="g", params={}, audit=res, effectiveness=eff,
                                          explanations=case["exp"], trees=False))
    parser = _Tables()
    parser.feed(html)
    table = parser.tables[parser.ids.index("audit-basis")]
    head, body = table[0], table[1:]
    frame = pd.DataFrame(body, columns=head)
    # a group's notes ("Salaried (reference)", "(small group)") sit on its name; means are printed to 2 decimals
    frame["group"] = frame["group"].str.replace(r" \((reference|small group)(, small group)?\)$", "", regex=True)
    frame = frame.set_index("group")
    for g, w in want.items():
        row = frame.loc[g]
        assert int(row["need recourse"].replace(",", "")) == w["n"]
        assert int(row["have verified recourse"].replace(",", "")) == w["n_recourse"]
        assert row["mean changes"] == f"{w['mean_changes']:.2f}"
        assert row["mean distance"] == f"{w['mean_distance']:.2f}"
        assert int(row["verified through the next rule"]) == w["n_next_rule"]
    assert "Recourse is verified on the model" in html
    n_ver, n_need = int(case["ver"].sum()), int(case["need"].sum())
    card = re.search(r"<div><b>([\d,]+) \((\d+)%\)</b>verified by a point that follows the advice", html)
    assert card and int(card.group(1).replace(",", "")) == n_ver
    assert int(card.group(2)) == round(100 * n_ver / n_need)


# ---------------------------------------------------------------------------------------------------- the CLI
def test_the_cli_audit_on_parquet_prints_the_aggregates_of_the_frame(case, tmp_path):
    """``tcrex audit --model --reference-rows`` on Parquet files: a rules JSON holds no rows, so the fit rows are
    given as reference rows; the counts of two files then equal the frame's aggregates, distances included."""
    ex, X, features, want = case["ex"], case["X"], case["features"], case["want"]
    (tmp_path / "rules.json").write_text(ex.to_json())
    model_path = case["save_model"](tmp_path / "model.json")
    case["fit_rows"][features].to_parquet(tmp_path / "fit.parquet", index=False)
    half = len(X) // 2
    X.iloc[:half].to_parquet(tmp_path / "part0.parquet", index=False)
    X.iloc[half:].to_parquet(tmp_path / "part1.parquet", index=False)
    out = tmp_path / "audit.json"
    res = CliRunner().invoke(main, ["audit", "--rules", str(tmp_path / "rules.json"), "--data",
                                    str(tmp_path / "part*.parquet"), "--model", str(model_path), "--reference-rows",
                                    str(tmp_path / "fit.parquet"), "--group-column", case["group"], "--target", "1",
                                    "--n-boot", str(N_BOOT), "--out", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["verified"] is True and doc["distance_available"] is True
    table = pd.DataFrame(doc["groups"]).rename(columns={"n": "n_total", "n_need_recourse": "n"}).set_index("group")
    changes = pd.DataFrame.from_dict(doc["changes_distribution"], orient="index").fillna(0)
    change = pd.DataFrame.from_dict(doc["feature_change_shares"], orient="index")
    keep = pd.DataFrame.from_dict(doc["feature_keep_shares"], orient="index")
    top = {g: Counter({(r["target"], r["rule"]): r["n"] for r in rows}) for g, rows in doc["top_rules"].items()}
    # the JSON keeps the ten most frequent rules per group: compare those
    want_top = {g: {k: w["rules"][k] for k in top[g]} for g, w in want.items()}
    assert all(len(top[g]) == min(10, len(want[g]["rules"])) for g in want)
    _check_audit_doc(doc["group_labels"], table, changes, change, keep, top,
                     {g: {**w, "rules": Counter(want_top[g])} for g, w in want.items()}, features)


def test_an_audit_of_the_frame_given_is_the_audit_that_verifies(case):
    """``audit(counterfactuals=frame)`` aggregates a frame computed once (a dashboard's) and gives exactly the audit
    that verifies the rows itself; a frame of other rows or another target is refused."""
    from tcrex.errors import ParameterError

    from tests.support.audit_checks import assert_same_audit

    ex, X, cf = case["ex"], case["X"], case["cf"]
    want = audit(ex, X, case["group"], model=case["model"], n_boot=N_BOOT)
    got = audit(ex, X, case["group"], y_pred=ex.outputs(X[case["features"]], model=case["model"]),
                counterfactuals=cf.sample(frac=1.0, random_state=0), n_boot=N_BOOT)  # any row order
    assert_same_audit(got, want)
    with pytest.raises(ParameterError, match="every row"):
        audit(ex, X, case["group"], model=case["model"], counterfactuals=cf.iloc[1:], n_boot=N_BOOT)
    other = ex.counterfactuals(X[case["features"]], model=case["model"], target=0)
    with pytest.raises(ParameterError, match="other people"):
        audit(ex, X, case["group"], model=case["model"], counterfactuals=other, n_boot=N_BOOT)


def test_the_reports_how_hard_counts_the_verified_advice(case):
    """"How hard it is" counts the features each verified point changes (the advice people get, never 0), and
    names the features that advice changes most: the frame's own figures. Without the frame it says its counts are
    the rules', not checked."""
    ex, cf = case["ex"], case["cf"]
    opts = dict(title="t", data_description="d", data_fingerprint="f", model_description="m", model_fingerprint="g",
                params={}, explanations=case["exp"], trees=False)
    html = build_report(ex, ReportOptions(**opts, counterfactuals=cf))
    section = html[html.index('id="how-hard"'):html.index('id="where-groups-differ"') if 'id="where-groups-differ"'
                   in html else None]
    parser = _Tables()
    parser.feed(section)
    rows = {int(r[0]): int(r[1].replace(",", "")) for r in parser.tables[0][1:]}
    verified = cf.loc[case["ver"]]
    assert rows == verified["n_changes"].astype(int).value_counts().to_dict()
    assert 0 not in rows  # a person who needs recourse and is verified changes at least one feature
    assert f"of the {len(verified):,} people with a change the model confirms" in section
    top = pd.Series([f for c in verified["changed"] for f in c]).value_counts().index[0]
    assert f"most often: {top} (" in section
    unchecked = build_report(ex, ReportOptions(**opts))
    assert "By the rules alone (not checked on a model)" in unchecked
