"""One rule for a clear audit gap (tcrex.audit.clear_gaps), applied alike by the dashboard, the forest plot and the
report; and the report's audit drawn as static SVG (no plotly.js)."""
import re

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.audit import (METRICS, audit, below_threshold_gaps, clear_gaps, gap_direction, practical_gaps,
                         split_findings)
from tcrex.population import PRACTICAL_DEFAULT
from tcrex.datasets import make_recourse_groups
from tcrex.figures import _audit as figs
from tcrex.figures import gap_forest_plot, gap_forest_svg
from tcrex.report import ReportOptions, build_report


@pytest.fixture(scope="module")
def planted():
    """Group B needs about one change more than A: significant gaps of very different sizes."""
    df = make_recourse_groups(2000, disparity=True, random_state=0)
    X = df.drop(columns=["group", "approved"])
    y = df["approved"].to_numpy()
    ex = TCREx(rho=0.02, tau=0.9, target=1, grower="exact").fit(X, y_pred=y)
    return ex, audit(ex, X, df["group"].map({"A": "A <i>", "B": "B & co"}), y_pred=y, n_boot=300)


def test_clear_means_significant_and_at_least_the_threshold():
    gaps = pd.DataFrame({"metric": ["recourse_share", "recourse_share", "mean_changes", "mean_changes",
                                    "recourse_share"],
                         "difference": [0.003, 0.08, 0.02, 0.5, 0.0], "reference_value": [0.9, 0.9, 1.0, 1.0, 0.5],
                         "significant": [True, True, True, False, True]})
    assert practical_gaps(gaps, 5.0).tolist() == [False, True, False, True, False]
    assert clear_gaps(gaps, 5.0).tolist() == [False, True, False, False, False]
    assert below_threshold_gaps(gaps, 5.0).tolist() == [True, False, True, False, True]  # 0.0 points: never clear
    assert PRACTICAL_DEFAULT == 5.0


def test_findings_split_by_the_threshold(planted):
    ex, res = planted
    sig = int(res.gaps()["significant"].sum())
    assert sig >= 2
    low, high = split_findings(res, 0.0), split_findings(res, 1000.0)
    assert len(low.clear) == sig and not low.below
    assert not high.clear and len(high.below) == sig
    assert high.overview == res.findings()[0]
    assert len(high.other) == len(res.findings()) - 1 - sig


def test_forest_plot_colours_follow_the_threshold(planted):
    ex, res = planted
    at_zero = {c for t in gap_forest_plot(res, practical=0.0).data for c in t.marker.color}
    assert figs.SIGNIFICANT_COLOR in at_zero
    strict = {c for t in gap_forest_plot(res, practical=1000.0).data for c in t.marker.color}
    assert figs.SIGNIFICANT_COLOR not in strict and figs.BETTER_COLOR not in strict
    assert strict & {figs.BELOW_COLOR, figs.BELOW_BETTER_COLOR}
    default = gap_forest_plot(res)
    gaps = res.gaps()
    clear = clear_gaps(gaps, PRACTICAL_DEFAULT)
    worse = gap_direction(gaps) == "worse"
    by_metric = {m: i for i, m in enumerate(METRICS)}
    order = np.argsort(gaps["metric"].map(by_metric).to_numpy(), kind="stable")  # the plot's panel order
    colours = [c for t in default.data for c in t.marker.color]
    expected = [figs.SIGNIFICANT_COLOR if worse[i] else figs.BETTER_COLOR for i in order if clear[i]]
    assert [c for c in colours if c in (figs.SIGNIFICANT_COLOR, figs.BETTER_COLOR)] == expected


def test_clear_gaps_are_coloured_by_direction_not_by_size(planted):
    """Fewer changes or more recourse than the reference is good news for the group (green), never red."""
    ex, res = planted
    gaps = res.gaps()
    direction = gap_direction(gaps)
    for row, d in zip(gaps.itertuples(), direction):
        if not np.isfinite(row.difference) or row.difference == 0:
            assert d == ""
            continue
        higher_is_better = row.metric in ("recourse_share", "mean_feasibility", "mean_accuracy", "effectiveness")
        assert d == ("better" if (row.difference > 0) == higher_is_better else "worse"), row
    found = split_findings(res, 0.0)
    assert sorted(found.clear_worse + found.clear_better) == sorted(found.clear)
    worse_rows = gaps[gaps["significant"].to_numpy() & (direction == "worse")]
    assert len(found.clear_worse) == len(worse_rows)


def test_forest_svg_is_static_escaped_and_marks_clear_gaps(planted):
    ex, res = planted
    svg = gap_forest_svg(res, practical=0.0)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "<script" not in svg.lower() and "on" + "load" not in svg
    assert "A &lt;i&gt;" in svg and "B &amp; co" in svg and "<i>" not in svg
    clear = clear_gaps(res.gaps(), 0.0)
    n_worse = int((clear & (gap_direction(res.gaps()) == "worse")).sum())
    assert svg.count(f'fill="{figs.SIGNIFICANT_COLOR}"') == n_worse + 1  # the markers and the legend swatch
    assert svg.count(f'fill="{figs.BETTER_COLOR}"') == int(clear.sum()) - n_worse + 1
    assert gap_forest_svg(res, practical=1000.0).count(f'fill="{figs.SIGNIFICANT_COLOR}"') == 1  # legend only


def _report(ex, res, **kw):
    return build_report(ex, ReportOptions(title="t", data_description="d", data_fingerprint="a" * 64,
                                          model_description="m", model_fingerprint="b" * 64, params={}, audit=res,
                                          audit_title="audit", **kw))


def test_report_applies_the_threshold_and_has_no_scripts(planted):
    ex, res = planted
    plain = _report(ex, res, trees=False)
    strict = _report(ex, res, trees=False, audit_practical=1000.0)
    lenient = _report(ex, res, trees=False, audit_practical=0.0)
    sig = int(res.gaps()["significant"].sum())
    assert f"{sig} clear gaps" in lenient and "0 clear gaps" in strict
    assert strict.count('<li class="clear">') == 0 and lenient.count('<li class="clear">') == sig
    assert "below the practical threshold of 1000 points" in strict
    for html in (plain, strict, lenient):
        assert "<script" not in html.lower() and "plotly" not in html.lower()
        assert 'id="audit-forest"' in html and "<svg" in html
        assert "No scripts: it opens instantly." in html
    assert len(plain.encode()) < 200_000


def test_report_with_an_audit_stays_small_on_the_dashboard_sample():
    """The report of the loans sample with an audit: well under the 4.9 MB plotly.js it used to embed."""
    from tcrex import datasets

    X, y = datasets.make_loans(1000, random_state=0).pipe(lambda d: (d.drop(columns=["approved"]), d["approved"]))
    ex = TCREx(target=1).fit(X, y_pred=y.to_numpy())
    res = audit(ex, X, X["employment"], y_pred=y.to_numpy(), n_boot=200)
    html = _report(ex, res, explanations=ex.explain(X, y_pred=y.to_numpy()))
    assert len(html.encode()) < 400_000
    assert not re.search(r"<script", html, re.I)
