"""The Audit page speaks the verified frame: on the bundled sample with its model, the page's headline
and per-group table are aggregates of the dashboard's own check of every row (``counterfactuals(verify=True)``,
computed once per fit), and its number-of-changes chart has no bar at 0."""

from __future__ import annotations

import json

import pytest

from tcrex import datasets
from tcrex.ui.state import session
from tcrex.vocabulary import is_verified

from tests.support.apptest_kit import assert_clean, check_of, goto, last_result, new_app, outputs_from_a_column

def _markdown(at) -> str:
    return " ".join(m.value for m in at.markdown)

def test_audit_headline_and_table_are_aggregates_of_the_verified_frame():
    at = new_app()
    goto(at, "audit")
    assert_clean(at)
    run = session.last_audit(at.session_state)
    result = last_result(at)
    population = run.result.individuals.index
    frame = check_of(result).wait(timeout=300).value.frame.loc[population]  # the page's own check, computed once
    need = frame["recourse"].notna().to_numpy()
    ver = is_verified(frame)
    column = at.selectbox(key="audit_column").value
    # groups are named as the page names them: "label (code)" where the sample's codebook labels the column
    from tcrex.population import labelled_groups
    raw = datasets.load_bundled_loans().loc[population, column]
    labels = labelled_groups(raw, datasets.LOANS_VALUE_LABELS.get(column)).astype(str).to_numpy()
    # the headline: who needs recourse, out of whom, and that it is verified on the model
    text = _markdown(at)
    assert f"**Audit of {int(need.sum()):,} individuals who need recourse" in text
    assert f"out of {len(population):,}" in text and "Recourse is verified on the model" in text
    table = at.dataframe[0].value.set_index("group")
    features = list(result.explainer.schema_.names)
    X = datasets.load_bundled_loans().loc[population, features]
    for g in table.index:
        n, v = need & (labels == g), ver & (labels == g)
        assert table.loc[g, "need recourse"] == n.sum()
        assert table.loc[g, "have verified recourse"] == v.sum()
        assert table.loc[g, "mean changes"] == pytest.approx(frame["n_changes"].to_numpy()[v].mean())
        dist = result.explainer.percentile_distance(X[v], frame.loc[v, features])
        assert table.loc[g, "mean distance"] == pytest.approx(dist.mean())
        assert table.loc[g, "verified through the next rule"] == (frame["source"][v] == "next_rule").sum()
    # the number-of-changes chart: verified advice never changes nothing, so there is no bar at 0
    spec = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                if "Number of changes by" in c.proto.spec)
    for trace in spec["data"]:
        assert "0" not in [str(x) for x in trace["x"]]
    assert "features the verified advice changes" in spec["layout"]["title"]["subtitle"]["text"]

def test_without_a_model_the_audit_page_says_rules_only():
    """Outputs from a column: nothing to check the advice on, so the page is the paper's rule-based audit and its
    headline, table and charts say "rules only — not checked on a model"."""
    at = outputs_from_a_column(800)
    goto(at, "audit")
    assert_clean(at)
    assert not session.last_audit(at.session_state).result.verified
    text = _markdown(at)
    assert "Rules only — not checked on a model" in text
    assert "have a rule" in at.dataframe[0].value.columns
    assert "Rules only — not checked on a model" in " ".join(c.value for c in at.caption)
    subtitles = [json.loads(c.proto.spec)["layout"]["title"]["subtitle"]["text"] for c in at.get("plotly_chart")]
    assert len(subtitles) == 4 and all(s.startswith("Rules only — not checked on a model") for s in subtitles)
