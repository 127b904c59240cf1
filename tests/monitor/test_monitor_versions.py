"""A population monitored across model versions on a generated credit table: the first model, a retrain, a version
that degrades one group on purpose, the degraded model registered again, and the first model registered again.

Every answer is checked against an independent computation: each person's status against a brute-force
recomputation (each stored point re-scored with the new model one person at a time, fresh recourse from
``counterfactuals``), each group's figures against ``tcrex.audit.audit`` of the run's frame and the invalidation
rate against a plain count; the alerts fire for the degraded group (and its intersections) and for nothing else; a
model registered again gives no invalidation and no alert."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.audit import audit
from tcrex.monitor import PERSON_COLUMNS, SHARE_DROP, STATUSES, History, RunResult

from tests.support.monitor_case import DEGRADED, GROUPS, ID, brute_force, loaded

pytestmark = pytest.mark.slow

KEPT, INVALIDATED = "kept", "invalidated"  # two of the statuses (tcrex.monitor.STATUSES)
ORDER = ["v1", "v2", "v3", "v3-again", "v1-again"]
MODEL_OF = {"v1": "v1", "v2": "v2", "v3": "v3", "v3-again": "v3", "v1-again": "v1"}


def _explainer(case):
    return TCREx.from_json(case.rules)


@pytest.mark.parametrize("before,after", list(zip(ORDER, ORDER[1:])))
def test_statuses_equal_a_brute_force_recomputation(case, monitored, before, after):
    _, results, frames = monitored
    got = frames[after]
    assert list(got[ID]) == list(case.people[ID])  # every person, in input order
    want = brute_force(_explainer(case), case.people, frames[before].drop(columns=[ID]),
                       loaded(case.models[MODEL_OF[after]]), case.fit_rows)
    pd.testing.assert_series_equal(got["status"].astype(str).reset_index(drop=True), want["status"],
                                   check_names=False)
    np.testing.assert_array_equal(got["verified"].to_numpy(), want["verified"].to_numpy())
    np.testing.assert_array_equal(got["needs_recourse"].to_numpy(), want["needs_recourse"].to_numpy())
    held = want["previous_verified"].to_numpy()
    np.testing.assert_array_equal(got["advice_holds"].to_numpy(dtype=bool, na_value=False)[held],
                                  want["advice_holds"].to_numpy()[held])
    assert got["advice_holds"][~held].isna().all()
    counts = results[after].counts
    assert {s: counts[s] for s in STATUSES} == want["status"].value_counts().reindex(list(STATUSES),
                                                                                     fill_value=0).to_dict()


def test_kept_advice_is_the_advice_held_and_fresh_advice_is_what_counterfactuals_gives(case, monitored):
    """A person whose advice still works keeps the very point they held; a person searched again gets exactly the
    engine's verified frame for them under the new model."""
    _, _, frames = monitored
    ex = _explainer(case)
    names = list(ex.schema_.names)
    prev, now = frames["v2"], frames["v3"]
    kept = (now["status"] == KEPT).to_numpy()
    assert kept.any()
    for c in names:
        a, b = now.loc[kept, c], prev.loc[kept, c]
        if c in ex.schema_.names and pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
            np.testing.assert_array_equal(a.to_numpy(dtype=float), b.to_numpy(dtype=float))
        else:
            assert list(a.astype(object)) == list(b.astype(object)), c
    fresh = (now["status"] == INVALIDATED).to_numpy()
    assert fresh.any()
    cf = ex.counterfactuals(case.people.loc[fresh, names], model=loaded(case.models["v3"]),
                            reference=case.fit_rows)
    assert list(now.loc[fresh, "recourse"].astype(object)) == list(cf["recourse"].astype(object))
    assert list(now.loc[fresh, "changed"]) == list(cf["changed"])
    assert list(now.loc[fresh, "text"]) == list(cf["text"])


@pytest.mark.parametrize("label", ORDER)
def test_group_figures_equal_the_audit_of_the_runs_frame(case, monitored, label):
    _, results, frames = monitored
    res, frame = results[label], frames[label]
    ex = _explainer(case)
    cf = frame.drop(columns=[ID, *PERSON_COLUMNS])
    y = frame["person_output"].to_numpy()
    X = case.people
    for grouping in GROUPS:
        name = " × ".join(grouping) if isinstance(grouping, list) else grouping
        want = audit(ex, X, grouping, y_pred=y, counterfactuals=cf, reference_rows=case.fit_rows, n_boot=400,
                     reference=res.references[name])
        table = want.table().set_index("group")
        iv = want.metric_intervals().set_index(["group", "metric"])
        got = res.groups[res.groups["feature"] == name].set_index("value")
        assert list(got.index) == list(want.groups)
        for g in want.groups:
            row = got.loc[g]
            assert row["n_needing"] == table.loc[g, "n"]
            assert row["n_verified"] == table.loc[g, "n_recourse"]
            for col, metric in (("verified_share", "recourse_share"), ("mean_changes", "mean_changes"),
                                ("mean_distance", "mean_distance")):
                value, lo, hi = iv.loc[(g, metric), ["value", "ci_low", "ci_high"]]
                prefix = "" if col == "verified_share" else f"{col}_"
                np.testing.assert_allclose([row[col], row[f"{prefix}ci_low"], row[f"{prefix}ci_high"]],
                                           [value, lo, hi], equal_nan=True)
        # the invalidation rate: the advice held that the new model rejects, counted plainly per group
        if res.previous_version is not None:
            held = frame["previous_verified"].to_numpy()
            rejected = held & ~frame["advice_holds"].to_numpy(dtype=bool, na_value=False)
            labels = want.individuals["group"].astype(str).to_numpy()
            for g in want.groups:
                sel = labels == g
                expect = rejected[sel].sum() / held[sel].sum() if held[sel].sum() else np.nan
                np.testing.assert_allclose(got.loc[g, "invalidation_rate"], expect, equal_nan=True)


def test_alerts_fire_for_the_degraded_group_and_nothing_else(monitored):
    _, results, _ = monitored
    assert results["v1"].alerts == []  # a baseline has nothing to compare with
    assert results["v2"].alerts == [], [a.message for a in results["v2"].alerts]  # a retrain's churn is tolerated
    alerts = results["v3"].alerts
    assert alerts
    for a in alerts:  # every alert names the degraded group, alone or in an intersection
        assert DEGRADED in str(a.value).split(" · "), a.message
        assert "education" in str(a.feature)
        assert f"= {DEGRADED}" in a.message
    table = results["v3"].groups
    counted = (table["n_needing"] >= 30) & (table["n_previous_needing"] >= 30)  # the monitor's min_group_size
    hit = table[table["value"].astype(str).str.split(" · ").map(lambda parts: DEGRADED in parts)
                & counted & table["feature"].notna()]
    assert len(hit), table
    dropped = {(a.feature, a.value) for a in alerts if a.kind == SHARE_DROP}
    assert set(zip(hit["feature"], hit["value"])) <= dropped  # every (non-small) part of the degraded group
    assert all(a.before > a.after for a in alerts if a.kind == SHARE_DROP)
    assert results["v1-again"].alerts == []  # the first model again: the degraded group recovers


def test_a_model_registered_again_gives_no_invalidation_and_no_alert(monitored):
    _, results, frames = monitored
    again = results["v3-again"]
    assert again.counts[INVALIDATED] == 0 and again.alerts == []
    assert again.invalidation_rate == 0
    assert again.version.model_sha256 == results["v3"].version.model_sha256
    frame = frames["v3-again"]
    held = frame["previous_verified"].to_numpy()
    assert frame["advice_holds"][held].all()
    assert set(frame["status"].astype(str)) <= {"kept", "still_none", "not_needing"}
    before, now = results["v3"].groups, again.groups
    np.testing.assert_allclose(now["verified_share"], before["verified_share"])
    assert (now["share_change"].fillna(0) == 0).all()


def test_the_degraded_group_loses_verified_recourse(monitored):
    _, results, _ = monitored
    g = results["v3"].groups
    row = g[(g["feature"] == "education") & (g["value"] == DEGRADED)].iloc[0]
    assert row["share_change"] < -0.10 and row["change_ci_high"] < 0
    others = g[(g["feature"] == "education") & (g["value"] != DEGRADED) & ~g["small_group"]]
    assert (others["share_change"].abs() < 0.10).all()


def test_runs_are_typed_results_with_a_versioned_json(monitored):
    mon, results, _ = monitored
    res = results["v3"]
    doc = json.loads(res.to_json())
    for key in ("version", "model_sha256", "n_people", "n_kept", "n_invalidated", "n_gained", "n_newly_needing",
                "groups", "alerts"):
        assert key in doc
    for key in ("feature", "value", "n_needing", "verified_share", "ci_low", "ci_high", "invalidation_rate",
                "mean_changes"):
        assert key in doc["groups"][0]
    for key in ("kind", "group", "before", "after", "message"):
        assert key in doc["alerts"][0]
    assert RunResult.from_json(res.to_json()).to_dict() == res.to_dict()
    history = mon.history("credit")
    assert [r.version.label for r in history.runs] == ORDER
    assert [r.to_dict() for r in history.runs] == [results[k].to_dict() for k in ORDER]
    assert History.from_json(history.to_json()).to_dict() == history.to_dict()
    frame = history.to_frame()
    assert set(frame["version"]) == set(ORDER) and {"verified_share", "ci_low", "ci_high"} <= set(frame.columns)
    timeline = history.timeline()
    assert list(timeline["version"]) == ORDER and (timeline["registered"].diff().dropna() >= pd.Timedelta(0)).all()
    assert len(history.alerts()) == len(results["v3"].alerts)


def test_every_run_names_what_it_used_by_hash(case, monitored):
    import hashlib
    mon, results, _ = monitored
    stored_rules = mon.records.monitor("credit").spec["rules"]
    for label, res in results.items():
        h = res.hashes
        assert h["model"] == hashlib.sha256(case.models[MODEL_OF[label]].read_bytes()).hexdigest()
        assert h["rules"] == hashlib.sha256(stored_rules.encode()).hexdigest()
        assert h["people"] and h["reference_rows"] and h["dictionary"] and h["parameters"]
        assert h["people_results"] == res.people_digest
        assert res.version.origin == {"kind": "file", "path": str(case.models[MODEL_OF[label]])}
        assert {"tcrex", "numpy", "pandas", "xgboost"} <= set(res.packages)
    assert results["v2"].hashes["previous_people"] == results["v1"].people_digest
    # any run can be re-derived: its model, people and reference rows are in the store, by those hashes
    model = mon.model_of("credit", "v2", allow_pickle=False)
    assert model.predict(case.people[list(case.fit_rows.columns)].head(50)).shape == (50,)
