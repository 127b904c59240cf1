"""A self-contained HTML report of a fitted explainer for stakeholders: one string that works offline, on a
projector and on paper.

It is written for a board: a main part (an executive page, then one short section per question -- who gets recourse,
how hard it is, where groups differ, what changed between models -- each a chart and two sentences) and an appendix
with everything technical (glossary, the chosen people, rules, metarules and their trees, the full audit and
comparison, aggregates, parameters), collapsed on screen and starting on a new page in print. Numbers are written
for people (shares as %, differences in points with their intervals, notes instead of yes/no columns); headings are
words, not column names; every table wraps to the page (1280 px on screen, A4 on paper); charts and table rows are
never split across printed pages. It carries aggregates, rules and the chosen individuals -- not the uploaded table
-- unless the caller passes ``include_rows=True`` with ``rows``; a "What this report contains" note says which.
plotly.js (about 4.9 MB) is embedded only when plotly ``figures`` are passed (the subgroup audit's forest plot is
static SVG). Every string that comes from the user (titles, descriptions, parameters, column names, category values)
is HTML-escaped, and values are formatted (no raw ``True``/``False`` or numpy reprs).
"""
from __future__ import annotations

import hashlib
import html
import json
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from .. import __version__, check_fitted
from ..figures import change_keep_counts, dot_to_svg, gap_forest_svg, individual_table, metarule_tree_html
from ..vocabulary import STATUS_TEXT, has_recourse, is_verified, needs_recourse
from ..audit import basis_sentence, clear_gaps, split_findings
from ..population import PRACTICAL_DEFAULT, threshold_text
from ..text import class_label, is_trivial_rule, join_and, pluralise, trivial_rule_note

MAX_TABLE_ROWS = 500
#: How many rules the executive page names in words (all targets together); the rest are in the appendix.
TOP_RULES = 3

_CSS = """
:root { --ink: #1a1a1a; --muted: #5a5a5a; --rule: #d0d0d0; --band: #f4f4f4; }
* { box-sizing: border-box; }
body { font-family: Arial, Helvetica, sans-serif; font-size: 18px; line-height: 1.45; color: var(--ink);
       max-width: 1280px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 34px; margin: 0 0 4px; }
h2 { font-size: 26px; margin: 40px 0 12px; padding-bottom: 4px; border-bottom: 2px solid var(--ink); }
h3 { font-size: 21px; margin: 28px 0 8px; }
.meta { color: var(--muted); margin: 0 0 20px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 15px; width: 100%; }
th, td { border: 1px solid var(--rule); padding: 5px 8px; text-align: left; vertical-align: top; }
td { overflow-wrap: anywhere; }  /* long feature names wrap: every table fits an A4 / 1280 px page */
th { overflow-wrap: normal; hyphens: auto; }  /* headings break between words only */
td.num, th.num { text-align: right; }
td.num, td.short { white-space: nowrap; overflow-wrap: normal; }
th { background: var(--band); }
tbody tr:nth-child(even) td { background: #fafafa; }
table.kv { width: auto; min-width: 50%; }
table.kv th { width: 14em; }
code, pre, .fp { font-family: "DejaVu Sans Mono", Consolas, monospace; }
.fp { font-size: 16px; background: var(--band); padding: 1px 6px; border-radius: 4px; }
pre { font-size: 14px; background: var(--band); padding: 12px 14px; border-radius: 6px; white-space: pre-wrap;
      word-break: break-word; }
pre.summary { font-size: 16px; }
.figure { margin: 12px 0 28px; page-break-inside: avoid; break-inside: avoid; }
.tree { overflow-x: auto; border: 1px solid var(--rule); border-radius: 6px; padding: 8px; background: #fff; }
.tree svg { display: block; margin: 0 auto; max-width: 100%; height: auto; }  /* sized to fit */
.note { color: var(--muted); font-size: 15px; }
li.clear, li.gap { color: #B03A00; }
.exec { background: #f7f9fc; border: 1px solid #c9d6ea; border-radius: 8px; padding: 4px 22px 14px; }
.headline { display: flex; flex-wrap: wrap; gap: 14px; margin: 12px 0; }
.headline div { background: #fff; border: 1px solid var(--rule); border-radius: 8px; padding: 8px 14px; min-width: 11em; }
.headline b { display: block; font-size: 28px; }
.contains { border-left: 4px solid #0072B2; padding: 4px 12px; background: #f4f8fb; font-size: 15px; }
.bar { display: inline-block; height: 12px; vertical-align: middle; }
.tcrex-outline { font-size: 15px; }
nav ol { columns: 2; font-size: 16px; }
details summary { cursor: pointer; color: var(--muted); font-size: 15px; }
details.full { margin: 8px 0 18px; }
details.full > summary { color: #0b4f8a; font-size: 16px; }
.exec .contains { margin-top: 14px; }
section.question { break-inside: avoid; page-break-inside: avoid; }
section.question h2 { margin-top: 28px; }
.stack { display: flex; height: 30px; border-radius: 4px; overflow: hidden; margin: 8px 0 4px; }
.stack span { display: block; height: 100%; }
.legend { font-size: 15px; margin: 4px 0 10px; }
.legend > span { display: inline-block; white-space: nowrap; }  /* a swatch stays with its words */
.legend i { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; vertical-align: middle; }
details.appendix { margin-top: 40px; border-top: 2px solid var(--ink); }
details.appendix > summary { font-size: 24px; font-weight: bold; color: var(--ink); padding: 12px 0; }
dl.glossary dt { font-weight: bold; margin-top: 6px; }
dl.glossary dd { margin: 0 0 0 1.5em; }
.figure, figure, svg, .stack, tr, .headline div, dl.glossary dt, dl.glossary dd {
  break-inside: avoid; page-break-inside: avoid; }
@media print {
  details.appendix { break-before: page; page-break-before: always; border-top: none; }
  details.appendix::details-content { display: block; content-visibility: visible; height: auto; }
  details.appendix > summary { list-style: none; }
  body { font-size: 12pt; max-width: none; padding: 0; }
  h2 { page-break-after: avoid; break-after: avoid; }
  table { font-size: 9.5pt; }
  .tree { overflow: visible; border: none; }
  .tree svg { max-width: 100%; height: auto; }
  .tcrex-outline details > *:not(summary) { display: block; }
  .figure > details, details.full { display: none; }
  nav { display: none; }
}
"""


def fingerprint_bytes(data: bytes) -> str:
    """SHA-256 hex digest of raw bytes (e.g. an uploaded file)."""
    return hashlib.sha256(data).hexdigest()


def fingerprint_frame(df: pd.DataFrame) -> str:
    """SHA-256 hex digest of a DataFrame's column names, dtypes, index and values (row-hash based, exact)."""
    h = hashlib.sha256()
    h.update(json.dumps([[str(c), str(t)] for c, t in df.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(df, index=True).to_numpy().tobytes())
    return h.hexdigest()


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _fp(value: str | None) -> str:
    if not value:
        return '<span class="note">not given</span>'
    v = str(value)
    short = v[:16] + ("…" if len(v) > 16 else "")
    return f'<span class="fp" title="{_e(v)}">sha256:{_e(short)}</span> <span class="note">({_e(v)})</span>'


def _cell(v) -> str:
    """A value as a reader sees it: yes/no for booleans, plain numbers (no numpy reprs), lists joined."""
    if isinstance(v, (list, tuple, set)):
        return ", ".join(_cell(x) for x in v)
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float):
        return "" if np.isnan(v) else f"{v:.4g}"
    if v is None or v is pd.NA or v is pd.NaT:
        return ""
    return str(v)


def _table(df: pd.DataFrame, max_rows: int = MAX_TABLE_ROWS, widths: dict | None = None) -> str:
    """``df`` as an HTML table (first ``max_rows`` rows); numbers right-aligned; ``widths`` sets some columns'
    share of the width (``{"conditions": "34%"}``) so long texts take the room and short columns stay narrow."""
    n = len(df)
    shown = df.iloc[:max_rows]
    numeric = [pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in shown.dtypes]
    widths = widths or {}

    def th(c, num):
        style = f' style="width:{widths[c]}"' if c in widths else ""
        cls = ' class="num"' if num else ""
        return f"<th{cls}{style}>{_e(c)}</th>"

    head = "".join(th(c, num) for c, num in zip(shown.columns, numeric))
    # short texts (ids, "2 %", "change") never break; long ones (conditions, advice) wrap anywhere
    short = [bool(num) or not len(shown) or max(len(_cell(v)) for v in shown.iloc[:, i]) <= 14
             for i, num in enumerate(numeric)]
    cls = [' class="num"' if num else ' class="short"' if sh else "" for num, sh in zip(numeric, short)]
    body = []
    for row in shown.itertuples(index=False):
        body.append("<tr>" + "".join(f"<td{c}>{_e(_cell(v))}</td>" for v, c in zip(row, cls)) + "</tr>")
    note = f'<p class="note">First {max_rows} of {n} rows.</p>' if n > max_rows else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{note}"


def _percent(v) -> str:
    """A share for readers: "81 %", empty when unknown."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return ""
    return "" if v != v else f"{v:.0%}"


def _readable(frame: pd.DataFrame, columns: dict, percent=()) -> pd.DataFrame:
    """``frame`` with only ``columns`` (in that order), renamed to the words a reader sees; shares as "81 %"."""
    out = frame[[c for c in columns if c in frame.columns]].copy()
    for c in percent:
        if c in out.columns:
            out[c] = out[c].map(_percent)
    return out.rename(columns=columns)


def _points(v, sign: bool = True) -> str:
    """A difference of shares in percentage points for readers: "+3.2 points", "–" when unknown."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "–"
    return "–" if v != v else f"{100 * v:{'+' if sign else ''}.1f} points"


def _interval(low, high) -> str:
    """An interval of a difference of shares: "-3.1 to 8.0 points", "–" when unknown."""
    lo, hi = _points(low, sign=False), _points(high, sign=False)
    if "–" in (lo, hi):
        return "–"
    return f"{lo.removesuffix(' points')} to {hi}"


def _mean(v) -> str:
    """A mean (changes, distances) for readers: two decimals, "–" when unknown."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "–"
    return "–" if v != v else f"{v:.2f}"


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


def _full(summary: str, body: str) -> str:
    """A full table kept out of the reading flow: collapsed until opened (and left out on paper)."""
    return f'<details class="full"><summary>{_e(summary)}</summary>{body}</details>'


def _kv(items, raw: dict | None = None) -> str:
    """A two-column key/value table; ``raw`` maps keys to ready-made (already escaped) HTML cells."""
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(_cell(v))}</td></tr>" for k, v in items)
    rows += "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in (raw or {}).items())
    return f'<table class="kv"><tbody>{rows}</tbody></table>'


def _slug(prefix: str, i: int) -> str:
    return f"{prefix}-{i}"


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


MAX_REPORT_LEAVES = 300
#: Trees with at most this many metarules are printed fully opened; larger ones open at the root.
OPEN_ALL_LEAVES = 60


def _pct(a: int, b: int) -> str:
    return "–" if not b else f"{a / b:.0%}"


def _with_rule(explanations: pd.DataFrame) -> np.ndarray:
    """Which rows of an explain() frame need recourse and have a rule for it (the paper's, not checked)."""
    status = explanations["status"].astype(str).to_numpy()
    return has_recourse(status) & needs_recourse(status)


def _headline(ex, explanations: pd.DataFrame | None, effectiveness=None) -> tuple[str, list]:
    """Headline recourse figures (HTML) and plain sentences, from an explain() frame (aggregates only) and, when
    the points were checked on the model, its :class:`Effectiveness`."""
    if explanations is None or not len(explanations):
        return "", []
    status = explanations["status"].astype(str).to_numpy()
    need = needs_recourse(status)
    has = has_recourse(status)
    n, n_need, n_has = len(status), int(need.sum()), int((has & need).sum())
    changes = explanations.loc[has & need, "changes"]
    median = _cell(float(changes.median())) if len(changes) else "–"
    # the paper's rule-based figures say so: beside the verified count they must not read as checked recourse
    cards = [("individuals explained", f"{n:,}"),
             ("need a change to reach the favourable outcome", f"{n_need:,} ({_pct(n_need, n)})"),
             ("of them have a rule (the paper's, not checked on a model)", f"{n_has:,} ({_pct(n_has, n_need)})"),
             ("median features the rule asks to change", median)]
    if effectiveness is not None and effectiveness.n_needing:
        cards.append(("verified by a point that follows the advice (checked on the model)",
                      f"{effectiveness.n_verified:,} ({_pct(effectiveness.n_verified, effectiveness.n_needing)})"))
    html_cards = "".join(f"<div><b>{_e(v)}</b>{_e(k)}</div>" for k, v in cards)
    no_rule = n_need - n_has
    words = [f"Of {n:,} individuals, {n_need:,} are not in the favourable outcome; by the rules alone (not checked "
             f"on a model) {n_has:,} of them ({_pct(n_has, n_need)}) have an actionable rule, typically asking to "
             f"change {median} feature{'' if median == '1' else 's'}."]
    if no_rule:
        words.append(f"{no_rule:,} get no recourse (no valid or no actionable rule at these settings).")
    if effectiveness is not None and effectiveness.n_needing:
        e = effectiveness  # one sentence: "Who gets recourse" draws the breakdown (own rule, next rule, …)
        words.append(f"Checked on the model, {e.n_verified:,} of the {e.n_needing:,} who need recourse "
                     f"({_pct(e.n_verified, e.n_needing)}) have a change the model confirms; a similar real case is "
                     "shown but never counted as verified (see Who gets recourse).")
    elif explanations is not None and len(explanations):
        words.append("The recommended points were not checked on a model (no model was available): a rule is "
                     "only right for most of the individuals inside it, so a point may not change the outcome.")
    return f'<div class="headline">{html_cards}</div>', words


def _top_rules(ex, explanations: pd.DataFrame | None, k: int = 3, effectiveness=None, names=None,
               checked: bool = True) -> list:
    """The most used (else the largest) rules per target, in plain words; ``checked`` adds what happened on the
    model to the people each rule is the optimal rule for (the executive page leaves it to the appendix)."""
    rules = ex.rules_frame(effectiveness=effectiveness) if effectiveness is not None else ex.rules_frame()
    names = names or {}
    out = []
    for t, sol in enumerate(ex.targets_):
        rt = rules[rules.target == t].copy()
        if not len(rt):
            out.append(f"No rule reaches {names.get(t, sol.target.describe())} at these settings.")
            continue
        if explanations is not None and len(explanations):
            tgt = pd.to_numeric(explanations["target"], errors="coerce")
            used = pd.to_numeric(explanations.loc[tgt == t, "rule"], errors="coerce").dropna().astype(int)
            rt["used"] = rt["rule"].map(used.value_counts()).fillna(0).astype(int)
        else:
            rt["used"] = 0
        outcome = names.get(t, sol.target.describe())
        trivial = rt["complexity"].map(is_trivial_rule).astype(bool)
        for _, r in rt[trivial].iterrows():  # flagged, never listed as advice
            who = f" The explanations send {pluralise(r.used, 'individual')} to it." if r.used else ""
            out.append(f"Rule {r.rule_id} ({outcome}) is left out: {trivial_rule_note(outcome, r.accuracy)}.{who}")
        rt = rt[~trivial].sort_values(["used", "n"], ascending=False).head(k)
        for _, r in rt.iterrows():
            who = f", recommended to {pluralise(r.used, 'individual')}" if r.used else ""
            works = ""
            if checked and "effectiveness" in rt.columns and r.n_served and r.effectiveness == r.effectiveness:
                works = " " + _rule_outcome_sentence(r)
            out.append(f"To reach {outcome}: have {r.conditions}. Rule {r.rule_id} — "
                       f"{float(r.accuracy):.0%} of such individuals reach it, it covers "
                       f"{float(r.feasibility):.0%} of the data{who}.{works}")
    return out


def _rule_outcome_sentence(r) -> str:
    """What happens, checked on the model, to the individuals a rule is the optimal rule for: the same counts as
    the summary's (verified through this rule, the next rule, a minimal change; not verified)."""
    text = (f"Checked on the model, its own advice is verified for {float(r.effectiveness):.0%} of the "
            f"{int(r.n_served):,} it is the optimal rule for")
    counts = [getattr(r, c, None) for c in ("n_this_rule", "n_next_rule", "n_minimal_change", "n_not_verified")]
    if any(c is None or c is pd.NA or c != c for c in counts):  # an export written before the counts existed
        return text + "."
    here, nxt, minimal, none = (int(c) for c in counts)
    others = int(r.n_served) - here
    if not others:
        return text + "."
    parts = [f"{nxt:,} through the next rule in cost order"] if nxt else []
    parts += [f"{minimal:,} by a minimal change beyond the rules"] if minimal else []
    said = (f"; of the other {others:,}, " + join_and(parts) + " verified" if parts else "")
    if none:
        said += (", and " if parts else f"; of the other {others:,}, ") + f"{none:,} have no verified recourse"
    return text + said + "."


def _bars(counts: pd.DataFrame) -> str:
    """Change/keep counts per feature as an HTML table with inline bars (no plotting library)."""
    if not len(counts):
        return '<p class="note">No feature is to change or keep.</p>'
    top = max(int(counts["total"].max()), 1)
    rows = []
    for _, r in counts.iterrows():
        c, k = int(r["change"]), int(r["keep"])
        rows.append(f"<tr><td>{_e(r['feature'])}</td><td>{c:,}</td><td>{k:,}</td><td style=\"width:45%\">"
                    f'<span class="bar" style="width:{100 * c / top:.1f}%;background:#D55E00"></span>'
                    f'<span class="bar" style="width:{100 * k / top:.1f}%;background:#0072B2"></span></td></tr>')
    return ("<table><thead><tr><th>feature</th><th>change</th><th>keep</th><th>"
            '<span style="color:#D55E00">■ change</span> <span style="color:#0072B2">■ keep</span></th></tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


def _changes_table(changes: pd.Series) -> str:
    """A bar per number of features to change (``changes``: one number per person with advice)."""
    counts = changes.dropna().astype(int).value_counts().sort_index()
    if not len(counts):
        return '<p class="note">No one here has a recourse.</p>'
    top = max(int(counts.max()), 1)
    rows = "".join(f"<tr><td>{int(c)}</td><td>{int(n):,}</td><td style=\"width:55%\"><span class=\"bar\" "
                   f'style="width:{100 * int(n) / top:.1f}%;background:#009E73"></span></td></tr>'
                   for c, n in counts.items())
    return (f"<table><thead><tr><th>features to change</th><th>individuals</th><th></th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def _outcome(value, class_names) -> str:
    """A model output as a reader sees it: its class name when known ("approved"), else the value."""
    return class_label(value, class_names) or _cell(value)


def _individual_html(ex, name: str, exp, x, real_example: bool = False, class_names=None,
                     target_names: dict | None = None) -> str:
    """One chosen individual: the recourse in words, then the side-by-side table and the rule. The "real example"
    is another person's row, so it is shown only when row-level data is included. ``class_names`` names model
    outputs, ``target_names`` the targets (``{target id: name}``)."""
    parts = [f"<h3>{_e(name)}</h3>", f"<p><b>{_e(exp.text)}</b></p>"]
    facts = [("model output", _outcome(exp.output, class_names)),
             ("status", STATUS_TEXT.get(str(exp.status), str(exp.status)))]
    if exp.target is not None:
        facts.append(("target", (target_names or {}).get(exp.target, exp.target_description)))
    if exp.counterfactual_valid is not None:
        verdict = (("yes" if exp.counterfactual_valid else "no")
                   + f" (the model gives {_outcome(exp.counterfactual_output, class_names)})")
        facts.append(("the model agrees at the recommended point", verdict))
        if getattr(exp, "recourse", None) == "similar_case":
            facts.append(("note", "no verified recourse: only a similar real case gets the favourable outcome; "
                                  "it is shown, not advised"))
        elif getattr(exp, "counterfactual_source", None) == "minimal_change":
            facts.append(("note", "no rule has a point the model confirms here; the advice is a minimal change "
                                  "found from the nearest real case with the favourable outcome"))
    if exp.rule is not None:
        # the rule whose changes are shown heads the facts; the paper's optimal rule is a secondary line
        recommended = getattr(exp, "recommended_rule_id", None)
        if getattr(exp, "counterfactual_source", None) == "minimal_change":
            facts.append(("rule", "none: a change beyond the rules"))
        else:
            facts.append(("rule", recommended or getattr(exp, "rule_id", None) or exp.rule))
        if exp.counterfactual_valid is not None and recommended != getattr(exp, "rule_id", None):
            facts.append(("the paper's optimal rule", f"{exp.rule_id}, not confirmed by the model here"))
        facts += [("metarule", getattr(exp, "metarule_id", None) or exp.metarule),
                  ("features to change", exp.n_changes)]
    if exp.rule is not None:
        parts.insert(1, f"<p class=\"rule-heading\"><b>{_e(_rule_heading(exp))}</b></p>")
    parts.append(_kv(facts))
    table = individual_table(exp, x, changes_first=True, outcome_name=lambda v: _outcome(v, class_names),
                             constraints=getattr(ex, "constraints_", None), value_labels=ex.schema_.value_labels)
    table = table.rename(columns={"counterfactual value": "recommended point"})
    if not real_example:
        table = table.drop(columns=[c for c in table.columns if c.startswith("real example")])
    # the features the rule names (and the model's output row) are the advice; the rest stay as they are
    in_rule = table["action"].isin(["change", "keep"]) | table["feature"].astype(str).str.startswith("⟨")
    widths = {"feature": "22%", "rule condition": "22%"}
    if in_rule.any() and not in_rule.all():
        rest = table[~in_rule]
        parts.append(_table(table[in_rule], widths=widths))
        parts.append(_full(f"The other {pluralise(len(rest), 'feature')} (the rule does not name them; "
                           "they stay as they are)", _table(rest, widths=widths)))
    else:
        parts.append(_table(table, widths=widths))
    if exp.alternatives:
        marks = {True: "✓ ", False: "✗ "}
        alts = "".join(f"<li>{_e(marks.get(a.get('verified'), ''))}{_e(a['text'])}</li>" for a in exp.alternatives)
        checked = any(a.get("verified") is not None for a in exp.alternatives)
        parts.append("<p>Nearby metarules (if this individual were slightly different)"
                     + ("; ✓ the model confirms a point of the alternative, ✗ it confirms none" if checked else
                        "; not checked on a model") + f":</p><ul>{alts}</ul>")
    return f'<div class="figure">{"".join(parts)}</div>'


def _rule_heading(exp) -> str:
    """The line under an individual's name: the rule whose changes are shown (the recommended rule), then the
    paper's optimal rule when the model does not confirm it."""
    recommended = getattr(exp, "recommended_rule_id", None)
    if getattr(exp, "counterfactual_source", None) == "minimal_change":
        head = "A change beyond the rules"
    else:
        head = f"Rule {recommended or exp.rule_id}"
    if exp.counterfactual_valid is not None and recommended != exp.rule_id:
        head += f" — the paper's optimal rule {exp.rule_id} is not confirmed by the model here"
    return head


def _performance_html(perf) -> str:
    """The model's headline figures as a small table, where they were measured, and (classifiers) per class."""
    if isinstance(perf, str):
        return f'<p class="note">{_e(perf)}</p>'
    caveat = {True: "held out from training", False: "training rows: these figures are optimistic",
              None: "the model may have been trained on these rows"}[perf.holdout]
    body = f"<p>Measured on {_e(perf.rows)} ({_e(caveat)}).</p>" + _table(perf.table())
    if perf.per_class is not None:
        body += "<h3>Per class</h3>" + _table(perf.per_class)
    if perf.notes:
        body += "".join(f'<p class="note">{_e(n[0].upper() + n[1:])}.</p>' for n in perf.notes)
    return body


def _ids_first(frame: pd.DataFrame) -> pd.DataFrame:
    """A rules or metarules frame for readers: the public ids (``rule_id``, ``metarule_id``) in place of the
    per-target indices, which collide across targets."""
    out = frame
    for name in ("rule", "metarule"):
        if f"{name}_id" in out.columns:
            out = out.drop(columns=[name]).rename(columns={f"{name}_id": name})
    return out


#: Rules and metarules tables as a reader sees them: {frame column: heading}, in this order.
RULE_COLUMNS = {"rule_id": "rule", "target_description": "outcome it reaches", "conditions": "conditions",
                "n": "individuals inside", "feasibility": "share of the data", "accuracy": "reach the outcome",
                "complexity": "number of conditions", "n_metarules": "metarules using it",
                "n_served": "recommended to", "effectiveness": "its own advice verified (checked on the model)",
                "n_next_rule": "verified through the next rule", "n_minimal_change": "verified by a minimal change",
                "n_not_verified": "not verified",
                "boundary_effectiveness": "works at the rule's nearest point"}
METARULE_COLUMNS = {"metarule_id": "metarule", "conditions": "where (the region)", "rule_id": "recommended rule",
                    "text": "advice", "sparsity": "changes at most", "n_cells": "grid cells",
                    "n_served": "advised (individuals)", "n_this_rule": "verified through this rule",
                    "n_next_rule": "verified through the next rule", "n_minimal_change": "verified by a minimal change",
                    "n_not_verified": "not verified", "effectiveness": "its own advice verified (checked on the model)",
                    "boundary_effectiveness": "works at the rule's nearest point"}
_SHARES = ("feasibility", "accuracy", "effectiveness", "boundary_effectiveness")
#: Rules and metarules shown in the reading flow; the rest are in a collapsed full table.
SUMMARY_RULES = 12
SUMMARY_METARULES = 10


def _rules_html(rules: pd.DataFrame, multi_target: bool) -> str:
    """The rules, most recommended first: all of them when few, else the first ``SUMMARY_RULES`` and the full
    table collapsed."""
    columns = {k: v for k, v in RULE_COLUMNS.items() if multi_target or k != "target_description"}
    order = [c for c in ("n_served", "n") if c in rules.columns]
    ranked = rules.sort_values(order, ascending=False, kind="stable") if order else rules
    widths = {"conditions": "34%"}
    intro = ('<p class="note">"Share of the data": the rows inside the rule; "reach the outcome": the share of '
             "them the model puts in the favourable outcome (the rule's accuracy)"
             + ('; "its own advice verified": of the individuals a rule is the optimal rule for (needing '
                "recourse), the share whose verified point follows this rule; the others are counted by what "
                "verifies them instead (the next rule in cost order, a minimal change) or as not verified. The "
                "headline's verified share counts everyone verified by any of these" if "effectiveness"
                in rules.columns else "") + ".</p>")
    if len(rules) <= SUMMARY_RULES:
        return intro + _table(_readable(rules, columns, _SHARES), widths=widths)
    head = _readable(ranked.head(SUMMARY_RULES), columns, _SHARES)
    return (intro + f"<p>The {SUMMARY_RULES} most recommended of {len(rules):,} rules:</p>" + _table(head, widths=widths)
            + _full(f"All {len(rules):,} rules", _table(_readable(rules, columns, _SHARES), widths=widths)))


def _advised(metas: pd.DataFrame, explanations: pd.DataFrame | None) -> pd.Series | None:
    """How many individuals each metarule advises: ``n_served`` (checked on the model) when present, else counted
    from ``explanations`` (those who need and have a recourse)."""
    if "n_served" in metas.columns:
        return metas["n_served"]
    if explanations is None or not len(explanations):
        return None
    sel = explanations[_with_rule(explanations)]
    counts = pd.Series(list(zip(pd.to_numeric(sel["target"]).astype(int), pd.to_numeric(sel["metarule"]).astype(int)))
                       ).value_counts() if len(sel) else pd.Series(dtype=int)
    return pd.Series([int(counts.get((int(t), int(m)), 0)) for t, m in zip(metas["target"], metas["metarule"])],
                     index=metas.index)


def _metarules_html(metas: pd.DataFrame, explanations: pd.DataFrame | None, multi_target: bool) -> str:
    """The metarules: how many, the ones that advise the most individuals, and the full table collapsed."""
    if not len(metas):
        return '<p class="note">No metarule: no rule is valid at these settings.</p>'
    advised = _advised(metas, explanations)
    frame = metas.assign(n_served=advised) if advised is not None else metas
    widths = {"where (the region)": "30%", "advice": "30%"}
    intro = (f"<p>{pluralise(len(metas), 'metarule')} split the inputs into regions; in each region one rule is "
             "recommended, with the advice it gives there (the change and what to keep)."
             + (" Checked on the model, the counts say what happens to the individuals each metarule serves: "
                "verified through its rule, through the next rule in cost order, by a minimal change, or not "
                "verified." if "n_this_rule" in metas.columns else "") + "</p>")
    full_columns = dict(METARULE_COLUMNS)
    full_columns.update({"change": "change", "keep": "keep", "paper_text": "the paper's statement"})
    full = _table(_readable(frame, full_columns, _SHARES), widths={"where (the region)": "24%", "advice": "24%"})
    if len(metas) <= SUMMARY_METARULES:
        return intro + _table(_readable(frame, METARULE_COLUMNS, _SHARES), widths=widths)
    columns = {k: v for k, v in METARULE_COLUMNS.items() if k not in ("n_cells", "boundary_effectiveness")}
    if advised is not None:
        top = frame[advised > 0].sort_values("n_served", ascending=False, kind="stable").head(SUMMARY_METARULES)
        lead = (f"<p>The {len(top)} metarules that advise the most individuals "
                f"({int(top['n_served'].sum()):,} of {int(advised.sum()):,} advised):</p>")
    else:
        top = frame.sort_values("n_cells", ascending=False, kind="stable").head(SUMMARY_METARULES)
        lead = f"<p>The {len(top)} largest metarules (by grid cells):</p>"
    return (intro + lead + _table(_readable(top, columns, _SHARES), widths=widths)
            + _full(f"All {len(metas):,} metarules (also in the CSV export, one row per individual)", full))


#: The colours of the "who gets recourse" bar (colour-blind safe, as the figures').
_WHO_COLORS = ("#009E73", "#56B4E9", "#0072B2", "#E69F00", "#D55E00")


def _stack(parts) -> str:
    """A horizontal 100 % bar with its legend: ``parts`` is ``[(label, count, colour)]`` (static HTML, no
    script); each label says its count and share."""
    total = sum(n for _, n, _ in parts) or 1
    bar = "".join(f'<span style="width:{100 * n / total:.2f}%;background:{c}" title="{_e(label)}"></span>'
                  for label, n, c in parts if n)
    legend = "".join(f'<span><i style="background:{c}"></i>{_e(label)}: {n:,} ({_e(_percent(n / total))})</span>'
                     for label, n, c in parts if n)
    return f'<div class="figure"><div class="stack">{bar}</div><p class="legend">{legend}</p></div>'


def _who_gets_recourse(explanations, effectiveness) -> str | None:
    """Question 1: of the people not in the favourable outcome, who has recourse (verified on the model when it
    was checked, else by the rules alone). A chart and two sentences; None without explanations."""
    if explanations is None or not len(explanations):
        return None
    status = explanations["status"].astype(str).to_numpy()
    need = needs_recourse(status)
    n, n_need = len(status), int(need.sum())
    if effectiveness is not None and effectiveness.n_needing:
        e = effectiveness
        parts = [("verified through their own rule", e.n_optimal_rule, _WHO_COLORS[0]),
                 ("verified through the next rule", e.n_next_rule, _WHO_COLORS[1]),
                 ("verified by a small change beyond the rules", e.n_minimal_change, _WHO_COLORS[2]),
                 ("only a similar case (not verified)", e.n_similar, _WHO_COLORS[3]),
                 ("no verified recourse", e.n_none, _WHO_COLORS[4])]
        words = [f"Of {n:,} people, {n_need:,} ({_pct(n_need, n)}) do not get the favourable outcome; for "
                 f"{e.n_verified:,} of them ({_pct(e.n_verified, e.n_needing)}) we found a change that the model "
                 "confirms.",
                 f"{e.n_similar + e.n_none:,} ({_pct(e.n_similar + e.n_none, e.n_needing)}) have no confirmed "
                 "change: for some a similar real case exists, but it is not advice."]
    else:
        n_has = int((has_recourse(status) & need).sum())
        parts = [("have a rule to follow", n_has, _WHO_COLORS[0]),
                 ("no rule at these settings", n_need - n_has, _WHO_COLORS[4])]
        words = [f"Of {n:,} people, {n_need:,} ({_pct(n_need, n)}) do not get the favourable outcome; "
                 f"{n_has:,} of them ({_pct(n_has, n_need)}) have a rule to follow.",
                 "No model was available, so this advice was not checked: a rule holds for most people inside it, "
                 "not for everyone."]
    return _stack(parts) + "".join(f"<p>{_e(w)}</p>" for w in words)


def _how_hard(explanations, actions, counterfactuals=None) -> str | None:
    """Question 2: how many features people are asked to change (a bar per count), and which features most. With
    the checked points (``counterfactuals``) it counts the advice people get: the features each verified point
    changes; without a model, the rules' changes, said as not checked."""
    if counterfactuals is not None and len(counterfactuals):
        return _how_hard_verified(counterfactuals)
    if explanations is None or not len(explanations):
        return None
    sel = _with_rule(explanations)
    changes = explanations.loc[sel, "changes"].dropna()
    if not len(changes):
        return '<p>No one who needs a change has a rule to follow, so there is no effort to measure.</p>'
    one = int((changes <= 1).sum())
    words = [f"By the rules alone (not checked on a model), half of the people with a rule are asked to change at "
             f"most {_cell(float(changes.median()))} feature{'' if float(changes.median()) == 1 else 's'}; "
             f"{_pct(one, len(changes))} need a single change."]
    if actions is not None and len(actions):
        counts = change_keep_counts(actions)
        counts = counts[counts["change"] > 0].sort_values("change", ascending=False).head(3)
        if len(counts):
            words.append("The features most often asked to change: " + join_and(
                [f"{f} ({int(c):,} people)" for f, c in zip(counts["feature"], counts["change"])]) + ".")
    return _changes_table(explanations["changes"][sel]) + "".join(f"<p>{_e(w)}</p>" for w in words)


def _how_hard_verified(counterfactuals: pd.DataFrame) -> str:
    """"How hard it is" from the points the model confirms: the changes each verified point makes (never 0: a
    person who needs recourse and is verified changes at least one feature), and the features changed most."""
    verified = counterfactuals.loc[is_verified(counterfactuals)]
    if not len(verified):
        return '<p>No one who needs a change has one the model confirms, so there is no effort to measure.</p>'
    changes = verified["n_changes"].astype(int)
    median = float(changes.median())
    one = int((changes <= 1).sum())
    words = [f"Checked on the model: of the {len(verified):,} people with a change the model confirms, half are "
             f"asked to change at most {_cell(median)} feature{'' if median == 1 else 's'}; "
             f"{_pct(one, len(verified))} need a single change."]
    counts = pd.Series([f for changed in verified["changed"] for f in changed], dtype=object).value_counts()
    if len(counts):
        words.append("The features the confirmed advice changes most often: " + join_and(
            [f"{f} ({int(c):,} people)" for f, c in counts.head(3).items()]) + ".")
    return _changes_table(changes) + "".join(f"<p>{_e(w)}</p>" for w in words)


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


#: The terms the report still uses, in one place (the appendix's glossary).
GLOSSARY = {
    "favourable outcome": "the model's decision a person wants (for example, approved).",
    "recourse": "a change a person can make to get the favourable outcome.",
    "verified": "we changed exactly the features the advice names, to the values it states, and the model then "
                "gave the favourable outcome.",
    "similar case": "a real person in the data who has the favourable outcome and resembles this one; shown for "
                    "context, never counted as verified advice.",
    "rule": "a region of the inputs (for example, income above 40,000 and no late payments) in which most people "
            "get the favourable outcome.",
    "reach the outcome (accuracy)": "the share of the people inside a rule whose model decision is favourable.",
    "share of the data (feasibility)": "the share of all rows that fall inside a rule.",
    "metarule": "which rule to recommend, depending on where a person starts.",
    "τ (tau) and ρ (rho)": "the least accuracy a rule needs and the least share of the data it must cover.",
    "reference group": "the group the others are compared with.",
    "interval": "the range the true difference lies in, with the stated confidence (bootstrap resampling).",
    "clear gap": "a difference of at least the practical threshold whose interval excludes zero.",
    "small group": "a group with too few people for a firm conclusion; its figures are marked.",
}


def _glossary() -> str:
    return ('<dl class="glossary">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in GLOSSARY.items())
            + "</dl>")


def report_contents(n_individuals: int = 0, rows: int | None = None, total_rows: int | None = None,
                    tables=(), audit: bool = False, comparison: bool = False, figures: bool = False) -> list[str]:
    """What a report will hold, in the words its "What this report contains" note and the Export page use
    (one owner for both): aggregates always; the chosen people's values only when they are included."""
    out = ["aggregates (counts and shares over all people)", "rules and metarules"]
    if audit:
        out.append("the subgroup audit")
    if comparison:
        out.append("the comparison with another model")
    out.append(f"{pluralise(n_individuals, 'chosen person', 'chosen people')} with their feature values"
               if n_individuals else "no individual's values")
    if tables:
        out.append(f"{pluralise(len(tables), 'table')} chosen by the author: " + ", ".join(tables))
    if rows:
        out.append(f"row-level data: the first {min(rows, MAX_TABLE_ROWS):,} of {total_rows or rows:,} rows, "
                   "as requested")
    if figures:
        out.append("interactive charts")
    return out


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


@dataclass(frozen=True, eq=False, kw_only=True)
class ReportOptions:
    """Everything :func:`build_report` puts in a report besides the explainer: provenance (required), then what
    to add (all optional). Build one per report; :func:`dataclasses.replace` gives a variant.

    >>> ReportOptions(title="Loans", data_description="loans.csv", data_fingerprint=fingerprint_frame(X),
    ...               model_description="XGBoost", model_fingerprint=fingerprint_bytes(b"..."),
    ...               params={"tau": 0.9})  # doctest: +SKIP
    """

    #: The report's title (its ``<h1>`` and ``<title>``).
    title: str
    #: The data and the model in words, with their fingerprints (:func:`fingerprint_frame`,
    #: :func:`fingerprint_bytes`): the first page and the provenance table.
    data_description: str
    data_fingerprint: str
    model_description: str
    model_fingerprint: str
    #: The caller's parameters (``{name: value}``), shown in the provenance table.
    params: dict
    #: plotly figures ``{title: figure}``; plotly.js is embedded once, and only with them.
    figures: dict | None = None
    #: Tables ``{title: DataFrame}`` (first :data:`MAX_TABLE_ROWS` rows each).
    tables: dict | None = None
    #: DOT graphs ``{title: text}`` drawn as SVG instead of the metarule trees (``{}``: no trees).
    dot: dict | None = None
    #: When the report was made; default now (UTC).
    generated_at: datetime | None = None
    #: A :class:`tcrex.audit.AuditResult` to add (its gaps called clear at ``audit_practical`` points), and its title.
    audit: object = None
    audit_title: str | None = None
    audit_practical: float = PRACTICAL_DEFAULT
    #: The chosen individuals: ``{name: (LocalExplanation, feature values)}``.
    individuals: dict | None = None
    #: ``TCREx.explain`` output (summarised: recourse figures, changes per person) and ``feature_actions`` output
    #: (change/keep per feature).
    explanations: pd.DataFrame | None = None
    actions: pd.DataFrame | None = None
    #: Row-level data, embedded (first :data:`MAX_TABLE_ROWS` rows) only with ``include_rows=True``.
    rows: pd.DataFrame | None = None
    include_rows: bool = False
    #: Draw the metarule trees as static outlines (when ``dot`` is not given).
    trees: bool = True
    #: :meth:`TCREx.effectiveness` output: how often the recommended points work on the model.
    effectiveness: object = None
    #: ``TCREx.counterfactuals(X, model=...)`` of the same people: with it, "How hard it is" counts the changes of
    #: the points the model confirms (the advice people get), not the paper's rule changes.
    counterfactuals: pd.DataFrame | None = None
    #: Each target in words (``{0: "approved"}``) instead of ``output = 1``.
    outcome_names: dict | None = None
    #: ``{label: name}`` for the classes everywhere else; default the explainer's own.
    class_names: dict | None = None
    #: A :class:`tcrex.performance.ModelPerformance`, or a sentence saying why there is none.
    model_performance: object = None
    #: A :class:`tcrex.compare.ComparisonResult` to add, and its title.
    comparison: object = None
    comparison_title: str | None = None


class _Sections:
    """The report's sections in order, with their table-of-contents entries."""

    def __init__(self):
        self.toc, self.sections = [], []

    def add(self, anchor: str, heading: str, body: str, css_class: str = "") -> None:
        self.toc.append(f'<li><a href="#{anchor}">{_e(heading)}</a></li>')
        cls = f' class="{css_class}"' if css_class else ""
        self.sections.append(f'<section id="{anchor}"{cls}><h2>{_e(heading)}</h2>{body}</section>')

    def question(self, anchor: str, heading: str, body: str | None) -> None:
        """A short main-part section, left out when there is nothing to say."""
        if body:
            self.add(anchor, heading, body, css_class="question")


def _target_names(ex, o: ReportOptions, class_names) -> dict:
    return o.outcome_names or ({t: s.target.describe(class_names) for t, s in enumerate(ex.targets_)}
                               if class_names else {})


def _executive_summary(ex, o: ReportOptions, names: dict, embed_rows: bool) -> str:
    """The first page: model, data, targets, headline figures, top rules, the chosen people, the audit, and what
    the report contains."""
    individuals = o.individuals or {}
    cards, words = _headline(ex, o.explanations, o.effectiveness)
    outcomes = "; ".join(names.get(t, s.target.describe()) for t, s in enumerate(ex.targets_))
    n_rules = sum(s.n_rules for s in ex.targets_)
    n_metas = sum(len(s.metarules) for s in ex.targets_)
    facts = [("model", o.model_description), ("data", o.data_description),
             ("favourable outcome (target)" if len(ex.targets_) == 1 else
              "target outcomes (each individual is explained towards a target it is not in)", outcomes),
             ("found", f"{pluralise(n_rules, 'rule')} and {pluralise(n_metas, 'metarule')} at accuracy ≥ {ex.tau:g}, "
                       "each rule holding "
                       f"≥ {ex.rho:g} of the data")]
    top = _top_rules(ex, o.explanations, effectiveness=o.effectiveness, names=names, checked=False)
    shown = top[:TOP_RULES]  # three in all, however many targets: the rest are in the appendix
    more = n_rules - sum(t.startswith("To reach ") for t in shown)
    if more > 0:
        shown.append(f"… and {pluralise(more, 'more rule')} in the appendix (Rules).")
    body = (_kv(facts) + cards + "".join(f"<p>{_e(w)}</p>" for w in words)
            + "<h3>Top rules in plain words</h3><ul>" + "".join(f"<li>{_e(t)}</li>" for t in shown) + "</ul>")
    if individuals:
        body += "<h3>Chosen individual" + ("s" if len(individuals) > 1 else "") + "</h3><ul>" + "".join(
            f"<li><b>{_e(name)}</b>: {_e(exp.text)}</li>" for name, (exp, _) in individuals.items()) + "</ul>"
    if o.audit is not None:
        body += "<h3>Subgroup audit</h3>" + _audit_headline(o.audit, o.audit_practical)
    # what is in here: part of the first page, so a reader knows at once what the file holds
    figures, tables, rows = o.figures or {}, o.tables or {}, o.rows
    contains = report_contents(len(individuals), rows=len(rows) if embed_rows else None,
                               total_rows=len(rows) if embed_rows else None, tables=list(tables),
                               audit=o.audit is not None, comparison=o.comparison is not None, figures=bool(figures))
    absent = "" if embed_rows else " It does <b>not</b> contain the uploaded table."
    body += (f'<p class="contains">This report contains {_e("; ".join(contains))}.{absent} '
             f"{'Interactive charts embed plotly.js.' if figures else 'No scripts: it opens instantly.'} "
             "The technical detail is in the appendix at the end (click to open; it prints on its own "
             "pages).</p>")
    return f'<div class="exec">{body}</div>'


def _main_part(ex, o: ReportOptions, names: dict, embed_rows: bool) -> _Sections:
    """The executive summary, then one short section per question."""
    main = _Sections()
    main.add("executive-summary", "Executive summary", _executive_summary(ex, o, names, embed_rows))
    main.question("who-gets-recourse", "Who gets recourse", _who_gets_recourse(o.explanations, o.effectiveness))
    main.question("how-hard", "How hard it is", _how_hard(o.explanations, o.actions, o.counterfactuals))
    if o.audit is not None:
        main.question("groups-differ", "Where groups differ", _where_groups_differ(o.audit, o.audit_practical))
    if o.comparison is not None:
        main.question("models-changed", "What changed between models", _what_changed(o.comparison))
    main.toc.append('<li><a href="#appendix">Appendix: rules, metarules, trees, audit detail, glossary</a></li>')
    return main


def _trees_section(ex, o: ReportOptions, class_names) -> str | None:
    """The metarule trees: the caller's DOT graphs as SVG, else static outlines (None: no trees)."""
    if o.dot:
        parts = []
        for i, (name, text) in enumerate(o.dot.items()):
            svg = dot_to_svg(text)
            drawn = f'<div class="tree">{svg}</div>' if svg else \
                '<p class="note">This graph is not a simple tree; paste the DOT text below into any Graphviz ' \
                'viewer to draw it.</p>'
            parts.append(f'<div class="figure" id="{_slug("tree", i)}"><h3>{_e(name)}</h3>{drawn}'
                         f'<details><summary>DOT text (paste into any Graphviz viewer)</summary>'
                         f'<pre>{_e(text)}</pre></details></div>')
        return "".join(parts)
    if not (o.trees and o.dot is None):
        return None
    parts = []
    explanations = o.explanations
    for t, sol in enumerate(ex.targets_):
        n = len(sol.metarules)
        pop = explanations if explanations is not None and len(explanations) else None
        body = metarule_tree_html(ex, t, population=pop, max_leaves=MAX_REPORT_LEAVES,
                                  open_all=n <= OPEN_ALL_LEAVES, class_names=class_names)
        parts.append(f'<div class="figure" id="{_slug("tree", t)}">{body}</div>')
    return ('<p class="note">Each tree splits the inputs until one recommendation '
            "applies; open a branch to follow it. Leaves sharing a letter give the same advice.</p>" + "".join(parts))


def _figures_section(figures: dict) -> str:
    """The caller's plotly figures; plotly.js is embedded with the first one only."""
    parts = []
    for i, (name, fig) in enumerate(figures.items()):
        div = fig.to_html(full_html=False, include_plotlyjs=i == 0, div_id=_slug("figure", i),
                          config={"displaylogo": False, "responsive": True})
        parts.append(f'<div class="figure"><h3>{_e(name)}</h3>{div}</div>')
    return "".join(parts)


def _explainer_settings(ex) -> dict:
    """The explainer's own settings (not the caller's ``params``, which the provenance table shows)."""
    own = ex.get_params()
    settings = {k: "default" if v is None else v for k, v in own.items() if k not in ("value_labels", "class_names")}
    # None is not the default of these two: it switches them off
    settings.update({k: "none" for k in ("special_codes", "max_changes") if own.get(k, 0) is None})
    book = ex.schema_.value_labels  # the codebook in words: how many labels, not every one
    settings["value labels"] = (f"{pluralise(sum(map(len, book.values())), 'label')} for "
                                f"{pluralise(len(book), 'feature')}: {', '.join(book)}" if book else "none")
    settings.update({"task": getattr(ex, "task_", None), "fit rows": getattr(ex, "n_fit_rows_", None),
                     "features": len(ex.schema_.names)})
    constraints = getattr(ex, "constraints_", None)
    settings["constraints"] = "none" if constraints is None else constraints.describe()
    return settings


def _provenance(ex, o: ReportOptions, class_names) -> str:
    """Parameters and provenance: data and model with fingerprints, the caller's parameters, the explainer's
    settings and the text summary (collapsed)."""
    return (_kv([("data", o.data_description), ("model", o.model_description)],
                raw={"data fingerprint": _fp(o.data_fingerprint), "model fingerprint": _fp(o.model_fingerprint)})
            + (_kv(o.params.items()) if o.params else '<p class="note">no parameters given</p>')
            + "<h3>Explainer settings</h3>" + _kv(_explainer_settings(ex).items())
            + _full("Global summary (text): every rule and metarule in words",
                    f'<pre class="summary">{_e(ex.summary_text(class_names))}</pre>'))


def _appendix(ex, o: ReportOptions, names: dict, embed_rows: bool, class_names) -> _Sections:
    """The technical detail: glossary, the chosen people, rules, metarules, trees, audit, comparison, aggregates,
    model performance, figures, tables, rows and provenance."""
    app = _Sections()
    app.add("glossary", "Glossary", _glossary())
    individuals = o.individuals or {}
    if individuals:
        app.add("individuals", "Chosen individuals" if len(individuals) > 1 else "Chosen individual",
                "".join(_individual_html(ex, name, exp, x, real_example=embed_rows, class_names=class_names,
                                         target_names=names)
                        for name, (exp, x) in individuals.items())
                + ("" if embed_rows else '<p class="note">The "real example" (the nearest real row following the '
                   "rule) is another person's data and is left out; include row-level data to show it.</p>"))
    eff, explanations, actions = o.effectiveness, o.explanations, o.actions
    rules = ex.rules_frame(effectiveness=eff) if eff is not None else ex.rules_frame()
    metas = ex.metarules_frame(effectiveness=eff) if eff is not None else ex.metarules_frame()
    if names:  # targets by name ("approved"), not "output = 1"
        rules = rules.assign(target_description=rules["target"].map(lambda t: names.get(int(t), "")))
    checked = [t for t in _top_rules(ex, explanations, effectiveness=eff, names=names)
               if t.startswith("To reach ")] if eff is not None else []
    app.add("rules", "Rules", ("<h3>The top rules, checked on the model</h3><ul>"
                               + "".join(f"<li>{_e(t)}</li>" for t in checked) + "</ul>" if checked else "")
            + _rules_html(rules, multi_target=len(ex.targets_) > 1))
    app.add("metarules", "Metarules", _metarules_html(metas, explanations, multi_target=len(ex.targets_) > 1))
    trees = _trees_section(ex, o, class_names)
    if trees is not None:
        app.add("trees", "Metarule trees", trees)
    if o.audit is not None:
        app.add("audit", "Subgroup audit", _audit_html(o.audit, o.audit_title, o.audit_practical))
    if o.comparison is not None:
        app.add("comparison", "Recourse across models", comparison_html(o.comparison, o.comparison_title))
    agg = []
    if explanations is not None and len(explanations):
        ruled = explanations["changes"][_with_rule(explanations)]
        agg.append("<h3>Features each person's rule asks to change (the paper's rules, not checked on a model)</h3>"
                   + _changes_table(ruled))
    if actions is not None and len(actions):
        agg.append("<h3>Change or keep, per feature</h3>" + _bars(change_keep_counts(actions)))
    if agg:
        app.add("aggregates", "Changes per person and per feature", "".join(agg))
    if o.model_performance is not None:
        app.add("model-performance", "How well the model does", _performance_html(o.model_performance))
    if o.figures:
        app.add("figures", "Figures", _figures_section(o.figures))
    if o.tables:
        app.add("tables", "Tables", "".join(f'<div class="figure" id="{_slug("table", i)}"><h3>{_e(name)}</h3>'
                                            f"{_table(df)}</div>" for i, (name, df) in enumerate(o.tables.items())))
    if embed_rows:
        app.add("rows", "Row-level data (included on request)", _table(o.rows))
    app.add("parameters", "Parameters and provenance", _provenance(ex, o, class_names))
    return app


def _document(title: str, when: datetime, main: _Sections, appendix: _Sections) -> str:
    """The whole HTML document: header with the main part's contents, the main part, the collapsed appendix."""
    stamp = when.isoformat(timespec="seconds")
    head = (f'<header><h1>{_e(title)}</h1><p class="meta">Generated {_e(stamp)} · T-CREx {_e(__version__)} · '
            f'counterfactual rules and metarules (Bewley et al., ICML 2024)</p>'
            f'<nav><ol>{"".join(main.toc)}</ol></nav></header>')
    details = ('<details class="appendix" id="appendix"><summary>Appendix: the technical detail (the full rule and '
               "metarule lists, trees, intervals, fingerprints, glossary)</summary>" + "".join(appendix.sections)
               + "</details>")
    body = f'<main id="main-part">{"".join(main.sections)}</main>' + details
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>{head}{body}"
            f'<footer class="note"><p>Self-contained report: works offline; print from the browser for paper.'
            f"</p></footer></body></html>\n")


def build_report(ex, options: ReportOptions) -> str:
    """One self-contained HTML document describing a fitted explainer for stakeholders (what goes in:
    :class:`ReportOptions`).

    Order (the main part, then the appendix ``<details class="appendix">``, described in docs/figures.md): an
    **executive summary** on one page (model, data, the favourable outcome of every target, headline
    recourse figures from ``explanations``, the top rules in plain words, the chosen individuals' advice, the
    audit's overview and clear gaps, and a note on **what the report contains**), one short section per question
    (who gets recourse, how hard it is, where groups differ, what changed between models), then the appendix:
    the glossary, the **chosen individuals** (the features their rule names first, the rest collapsed), the
    **rules** (most recommended first; beyond :data:`SUMMARY_RULES` the rest collapsed), the **metarules** (the
    :data:`SUMMARY_METARULES` that advise the most individuals; all of them collapsed), the **metarule trees** as
    static outlines (opened fully up to 60 metarules, else at the root; ``trees=False`` for none; a ``dot`` dict
    instead draws those DOT graphs as SVG sized to fit), the subgroup ``audit`` (its gaps called clear by
    :func:`tcrex.audit.clear_gaps` at ``audit_practical`` points; its forest plot as static SVG), the comparison
    (:func:`comparison_html`), the aggregates (how many features to change; change/keep per feature), the
    model's performance, the caller's ``figures`` and ``tables``, row-level data (only with ``include_rows=True``
    and ``rows``), and parameters with the data and model fingerprints (the text summary collapsed).

    ``class_names`` (default the explainer's own) names the classes in model outputs, the rules and metarules
    tables and the text summary (and the targets when ``outcome_names`` is not given). Rules are named by their
    one id (``rule_id``: "R1", "R2", …).
    """
    check_fitted(ex)
    class_names = options.class_names
    if class_names is None:  # the explainer's own (TCREx(class_names=...), kept in its JSON)
        class_names = getattr(ex, "class_names", None) or None
    names = _target_names(ex, options, class_names)
    embed_rows = options.include_rows and options.rows is not None
    main = _main_part(ex, options, names, embed_rows)
    appendix = _appendix(ex, options, names, embed_rows, class_names)
    return _document(options.title, options.generated_at or datetime.now(timezone.utc), main, appendix)
