"""The report's population parts: the subgroup audit (its findings, table and forest plot, said with the practical
threshold) and the comparison of two models (who needs recourse under each, the rules model B breaks).
"""
from __future__ import annotations

import pandas as pd

from ..audit import basis_sentence, clear_gaps, split_findings
from ..figures import gap_forest_svg
from ..population import PRACTICAL_DEFAULT, threshold_text
from ..text import pluralise
from ._markup import _e, _interval, _mean, _percent, _points, _readable, _stack, _table


#: The note a group name carries instead of a yes/no column.
SMALL_GROUP_NOTE = "small group"

REFERENCE_NOTE = "reference"


def _group_names(frame: pd.DataFrame) -> pd.Series:
    """Group names with their notes ("Retired (small group)", "Salaried (reference)") in place of the
    ``small_group`` / ``is_reference`` columns."""
    notes = []
    for _, r in frame.iterrows():
        marks = [REFERENCE_NOTE] if bool(r.get("is_reference", False)) else []
        marks += [SMALL_GROUP_NOTE] if bool(r.get("small_group", False)) else []
        notes.append(f"{r['group']} ({', '.join(marks)})" if marks else str(r["group"]))
    return pd.Series(notes, index=frame.index)


def _group_table(frame: pd.DataFrame, columns: dict) -> str:
    """A per-group table for readers: notes in the group's name, shares as "81 %", means to two decimals, no
    empty or raw cells."""
    out = frame.copy()
    out["group"] = _group_names(frame)
    columns = {k: v for k, v in columns.items() if k not in ("small_group", "is_reference")}
    for c in out.columns:
        if c.endswith("_share") or c in ("mean_feasibility", "mean_accuracy", "invalidation_rate") \
                or c.startswith("verified_share"):
            out[c] = out[c].map(lambda v: _percent(v) or "–")
        elif c.startswith("mean_"):
            out[c] = out[c].map(_mean)
    table = out[[c for c in columns if c in out.columns]].rename(columns=columns)
    small = bool(frame.get("small_group", pd.Series(dtype=bool)).fillna(False).astype(bool).any())
    note = (f'<p class="note">"{SMALL_GROUP_NOTE}": too few people for a firm conclusion (see the glossary).</p>'
            if small else "")
    return _table(table) + note


AUDIT_COLUMNS = {"group": "group", "n_total": "rows", "n": "need recourse", "n_recourse": "have verified recourse",
                 "recourse_share": "share with verified recourse", "n_next_rule": "verified through the next rule",
                 "n_minimal_change": "verified beyond the rules", "n_similar": "similar case only",
                 "n_none": "no verified recourse", "n_no_rule": "no valid rule",
                 "n_no_actionable_rule": "no actionable rule", "mean_changes": "mean changes",
                 "mean_distance": "mean distance", "mean_feasibility": "mean feasibility",
                 "mean_accuracy": "mean accuracy", "small_group": "small group", "is_reference": "reference"}

#: The per-group table of an audit without a model (the paper's rules, never checked on a model).
AUDIT_RULE_COLUMNS = {"group": "group", "n_total": "rows", "n": "need recourse", "n_recourse": "have a rule",
                      "recourse_share": "share with a rule", "n_no_rule": "no valid rule",
                      "n_no_actionable_rule": "no actionable rule", "mean_changes": "mean changes (rules)",
                      "mean_distance": "mean distance (rules)", "mean_feasibility": "mean feasibility",
                      "mean_accuracy": "mean accuracy", "small_group": "small group", "is_reference": "reference"}


def _audit_html(result, title: str | None, practical: float = PRACTICAL_DEFAULT) -> str:
    """Findings (clear gaps first, by :func:`tcrex.audit.split_findings`), per-group table and the gap
    forest plot as static SVG (no scripts)."""
    head = f'<p class="meta">{_e(title)}</p>' if title else ""
    found = split_findings(result, practical)
    items = []
    if found is not None:
        items = ([f'<li class="clear"><b>{_e(s)}</b></li>' for s in found.clear]
                 + ([f"<li><b>No clear difference between the groups</b> (none at least {practical:g} points with a "
                     f"{result.confidence:.0%} interval excluding zero).</li>"] if not found.clear and found.compared
                    else [])
                 + [f"<li>{_e(s)} <i>(below the practical threshold of {practical:g} points)</i></li>"
                    for s in found.below]
                 + [f"<li>{_e(s)}</li>" for s in found.other])
        items.insert(0, f"<li>{_e(found.overview)}</li>")
    columns = AUDIT_COLUMNS if result.verified else AUDIT_RULE_COLUMNS
    n_clear = int(clear_gaps(result.gaps(), practical).sum())
    note = (f"{pluralise(n_clear, 'clear gap')}: at least {threshold_text(practical)}, with a "
            f"{result.confidence:.0%} interval excluding zero ({result.n_boot} bootstrap resamples; reference: "
            f"{result.reference_display}).")
    svg = gap_forest_svg(result, practical=practical)
    return (f"{head}<h3>Findings</h3><ul>{''.join(items)}</ul><p class=\"note\">{_e(note)}</p>"
            f"<h3>Per group</h3><p class=\"note\" id=\"audit-basis\">{_e(basis_sentence(result))}</p>"
            f"{_group_table(result.table(), columns)}<div class=\"figure\" id=\"audit-forest\"><h3>Gaps from the "
            f"reference group</h3><div class=\"tree\">{svg}</div></div>")


COMPARISON_COLUMNS = {"group": "group", "n": "rows", "n_need_a": "need recourse (A)", "n_need_b": "need recourse (B)",
                      "n_lost": "lose recourse", "n_gained": "gain recourse", "n_kept": "keep recourse",
                      "invalidation_rate": "A's advice invalidated by B", "verified_share_a": "verified (A)",
                      "verified_share_b": "verified (B)", "small_group": "small group", "is_reference": "reference"}

#: The rules of model A that break under model B, as a reader sees them.
BROKEN_RULE_COLUMNS = {"rule_id": "rule", "conditions": "conditions", "accuracy_a": "reach the outcome under A",
                       "accuracy_b": "under B", "holds_tau_b": "still accurate enough under B",
                       "n_points": "points checked", "points_hold_share": "points model B confirms"}


def comparison_html(result, title: str | None = None) -> str:
    """A comparison of recourse across two models (:func:`tcrex.compare.compare_models`): the headline, the findings (in
    the audit's wording), who keeps, loses or gains recourse, the per-group table with its gaps, and the rules of
    model A that break under model B. Static HTML, no scripts; no individual's values."""
    from ..compare import CHANGE_TEXT, CHANGES, COMPARE_METRICS  # noqa: PLC0415 - the comparison is optional

    s = result.summary
    head = f'<p class="meta">{_e(title)}</p>' if title else ""
    short = {c: label for c, label, _ in _change_labels()}
    flows = pd.DataFrame({"change": [short.get(c, "favourable outcome under both") for c in CHANGES],
                          "what it means": [CHANGE_TEXT[c] for c in CHANGES],
                          "people": [s["changes"][c] for c in CHANGES],
                          "share": [f"{s['shares'][c]:.1%}" if s["shares"][c] == s["shares"][c] else ""
                                    for c in CHANGES]})
    body = (f"{head}<p><b>{_e(result.headline())}</b></p><h3>Findings</h3><ul>"
            + "".join(f"<li>{_e(f)}</li>" for f in result.findings()) + "</ul>"
            + f"<h3>Who keeps, loses or gains recourse</h3>{_table(flows)}")
    if result.groups is not None:
        gaps = result.gaps
        gaps = pd.DataFrame({
            "measure": gaps["metric"].map(lambda m: COMPARE_METRICS[m][0]),
            "group": _group_names(gaps.assign(is_reference=False)),
            "share in the group": gaps["value"].map(lambda v: _percent(v) or "–"),
            f"share in {result.reference_display}": gaps["reference_value"].map(lambda v: _percent(v) or "–"),
            "difference": gaps["difference"].map(_points),
            f"{result.confidence:.0%} interval": [_interval(lo, hi)
                                                  for lo, hi in zip(gaps["ci_low"], gaps["ci_high"])],
            "clear difference": ["yes" if v else "no" for v in clear_gaps(gaps)]})
        body += (f"<h3>Per group</h3>{_group_table(result.groups, COMPARISON_COLUMNS)}"
                 f"<h3>Gaps from {_e(result.reference_display)}</h3>{_table(gaps)}<p class=\"note\">Differences "
                 f"in percentage points with {result.confidence:.0%} bootstrap intervals ({result.n_boot} "
                 "resamples); a clear difference is one whose interval excludes zero and that is at least "
                 f"{PRACTICAL_DEFAULT:g} percentage points (the audit's practical threshold).</p>")
    broken = result.broken_rules()
    if len(broken):
        body += ("<h3>Rules of model A that break under model B</h3>"
                 + _table(_readable(broken, BROKEN_RULE_COLUMNS, ("accuracy_a", "accuracy_b", "points_hold_share"))))
    else:
        body += '<p class="note">Every rule of model A still holds τ under model B and B confirms all its points.</p>'
    return body


def _where_groups_differ(result, practical: float) -> str:
    """Question 3: the audit's gaps from the reference group (its forest chart) and two sentences."""
    found = split_findings(result, practical)
    if found is None:
        return '<p class="note">The audit found no groups to compare.</p>'
    if found.clear:  # each finding is a sentence of its own
        more = f" And {pluralise(len(found.clear) - 2, 'more clear difference')} (see the appendix)." \
            if len(found.clear) > 2 else ""
        second = " ".join(found.clear[:2]) + more
    else:
        second = (f"No difference between the groups is large (at least {threshold_text(practical)}) and sure "
                  f"(a {result.confidence:.0%} interval that excludes zero).")
    # the main part shows the headline measure; every measure's chart is in the appendix's audit
    svg = gap_forest_svg(result, metrics=["recourse_share"], practical=practical)
    return (f'<div class="figure tree">{svg}</div>'
            f"<p>{_e(found.overview)}</p><p>{_e(second)}</p>")


def _change_labels() -> list:
    """The comparison's changes for people who need recourse: ``[(change, short words, colour)]`` (the bar and
    the appendix's table say them the same way)."""
    from ..compare import GAINED, KEPT, LOST, NEWLY_NEEDED, NO_LONGER_NEEDED, STILL_NONE  # noqa: PLC0415

    return [(KEPT, "keep verified recourse", "#009E73"), (LOST, "lose verified recourse", "#D55E00"),
            (GAINED, "gain verified recourse", "#0072B2"), (STILL_NONE, "none under either model", "#999999"),
            (NEWLY_NEEDED, "newly need a change", "#E69F00"), (NO_LONGER_NEEDED, "no longer need one", "#56B4E9")]


def _what_changed(result) -> str:
    """Question 4: who keeps, loses or gains recourse under the other model (a bar) and two sentences."""
    s = result.summary
    parts = [(label, int(s["changes"][c]), color) for c, label, color in _change_labels()]
    said = result.headline().rstrip(".")
    findings = [f for f in result.findings() if said not in f]
    return (_stack(parts) + f"<p>{_e(result.headline().rstrip('.'))}.</p>"
            + (f"<p>{_e(findings[0])}</p>" if findings else ""))


def _audit_headline(result, practical: float) -> str:
    """The audit in two lines for the first page: its first two clear gaps (and how many more), else that there
    is none; the overview of what was compared is in "Where groups differ"."""
    found = split_findings(result, practical)
    if found is None:
        return '<p class="note">The audit found no groups to compare.</p>'
    # the overview (who was compared with whom) is said once, under "Where groups differ"
    lines = [f'<li class="gap"><b>{_e(c)}</b></li>' for c in found.clear[:2]]
    if len(found.clear) > 2:
        lines.append(f"<li>… and {pluralise(len(found.clear) - 2, 'more clear gap')} (see Where groups differ "
                     "and the appendix's audit).</li>")
    if not lines:  # nothing clear: say at least what was compared
        lines.append(f"<li>{_e(found.overview)}</li>")
    if not found.clear and found.compared:
        lines.append(f"<li>No clear difference between the groups (none at least {practical:g} points with a "
                     f"{result.confidence:.0%} interval excluding zero).</li>")
    return f"<ul>{''.join(lines)}</ul>"
