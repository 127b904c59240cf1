"""The audit in English: numbers in their unit, the sentence of a clear gap, and the findings of a result.

Reads an :class:`~tcrex.audit.AuditResult` through its public methods only. An audit with a model speaks of
verified recourse and verified advice; one without says in every finding about recourse that it is the paper's
rule-based audit, "rules only — not checked on a model" (:data:`tcrex.audit.RULES_ONLY`).
"""
from __future__ import annotations

import numpy as np

from ..population import confidence_text, join_words
from ..text import pluralise
from ._metrics import METRICS, RULES_ONLY


def _amount(metric, v) -> str:
    """A difference in its unit: percentage points for shares, plain numbers for means."""
    if METRICS[metric][2] == "share":
        return f"{abs(v) * 100:.1f} percentage points"
    return f"{abs(v):.2f}"


def _signed(metric, v, unit=True) -> str:
    share = METRICS[metric][2] == "share"
    text = f"{v * 100:+.1f}" if share else f"{v:+.2f}"
    if float(text) == 0:  # no "-0.0" / "+0.00": zero has no sign
        text = text[1:]
    return text + (" points" if share and unit else "")


def _level(metric, v) -> str:
    if METRICS[metric][2] == "share":
        return f"{v:.0%}" if metric == "recourse_share" else f"{v:.1%}"
    return f"{v:.2f}"


#: The sentence of a clear gap in an audit with a model (verified recourse and verified advice), per metric: a
#: template and its words for a higher / a lower value.
_GAP_SENTENCES = {
    "recourse_share": ("Individuals with {g} who need recourse have verified recourse (a point the model confirms) "
                       "{word} often than {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
    "mean_changes": ("Individuals with {g} need on average {amount} {word} changes than {r} to reach a point the "
                     "model confirms {ci}; {vals} changes.", ("more", "fewer")),
    "mean_distance": ("Individuals with {g} have to move on average {amount} {word} (total percentile shift) than "
                      "{r} to reach their verified point {ci}; {vals}.", ("further", "less far")),
    "mean_feasibility": ("The rules the verified advice to individuals with {g} follows cover on average {amount} "
                         "{word} of the fit data (feasibility) than those of {r} {ci}; {vals}.", ("more", "less")),
    "mean_accuracy": ("The rules the verified advice to individuals with {g} follows are on average {amount} {word} "
                      "accurate than those of {r} {ci}; {vals}.", ("more", "less")),
}

#: The same sentences in an audit without a model: the paper's rules, never checked on a model (each says so).
_RULE_GAP_SENTENCES = {
    "recourse_share": ("Individuals with {g} who need recourse have a rule {word} often than {r}: {vals}, {amount} "
                       "{direction} {ci} ({basis}).", ("more", "less")),
    "mean_changes": ("Individuals with {g} are asked by their rule for on average {amount} {word} changes than {r} "
                     "{ci}; {vals} changes ({basis}).", ("more", "fewer")),
    "mean_distance": ("Individuals with {g} have to move on average {amount} {word} (total percentile shift) than "
                      "{r} to reach their rule {ci}; {vals} ({basis}).", ("further", "less far")),
    "mean_feasibility": ("The rules given to individuals with {g} cover on average {amount} {word} of the fit data "
                         "(feasibility) than those given to {r} {ci}; {vals} ({basis}).", ("more", "less")),
    "mean_accuracy": ("The rules given to individuals with {g} are on average {amount} {word} accurate than those "
                      "given to {r} {ci}; {vals} ({basis}).", ("more", "less")),
}


def basis_sentence(res) -> str:
    """What the audit's numbers are, in one sentence: the findings' overview ends with it, and the report and the
    dashboard print it beside the per-group table."""
    if res.verified:
        return ("Recourse is verified on the model: a point that changes exactly the features the advice names and "
                "that the model confirms; changes, distances, features and rules are those of that advice.")
    return (f"{RULES_ONLY[0].upper()}{RULES_ONLY[1:]}: recourse here means a rule applies (the paper's rule-based "
            "audit), and changes, distances, features and rules are the rule's own.")


def _rules_note(res) -> str:
    """" (rules only — not checked on a model)" for an audit without a model, else nothing."""
    return "" if res.verified else f" ({RULES_ONLY})"


def gap_sentence(res, row) -> str:
    """The sentence of a clear gap (``row``: a row of ``res.gaps()``, ``res`` the :class:`AuditResult`)."""
    m, d = row.metric, row.difference
    more = d > 0
    lo, hi = (row.ci_low, row.ci_high) if more else (-row.ci_high, -row.ci_low)
    if METRICS[m][2] == "share":
        ci = f"({confidence_text(res.confidence)} CI {lo * 100:.1f} to {hi * 100:.1f})"
    else:
        ci = f"({confidence_text(res.confidence)} CI {lo:.2f} to {hi:.2f})"
    template, words = (_GAP_SENTENCES if res.verified else _RULE_GAP_SENTENCES)[m]
    return template.format(g=res.display(row.group), r=res.reference_display, word=words[0 if more else 1],
                           direction="higher" if more else "lower", amount=_amount(m, d), ci=ci, basis=RULES_ONLY,
                           vals=f"{_level(m, row.value)} against {_level(m, row.reference_value)}")


def findings_text(res) -> list[str]:
    """Plain-language findings of an :class:`AuditResult` (what :meth:`AuditResult.findings` returns)."""
    table, gaps, change_shares = res.table(), res.gaps(), res.feature_change_shares("change")
    conf = confidence_text(res.confidence)
    n_need, n_all = int(table["n"].sum()), int(table["n_total"].sum())
    ref_note = " (the largest group)" if _is_largest(res) else ""
    out = [f"Audit of {pluralise(n_need, 'individual')} who need{'s' if n_need == 1 else ''} recourse (target: "
           f"{res.target}) out of {n_all:,}, in "
           f"{len(res.groups)} groups of {res.group_column}; each group is compared with "
           f"{res.reference_display}{ref_note}. {basis_sentence(res)}"]
    labels, note = res.metrics, _rules_note(res)
    if n_need == 0:
        out.append("No individual needs recourse: every model output is already in the target.")
        return out
    if len(res.groups) < 2:
        out.append("There is only one group, so nothing to compare.")
    by_group = {g: table.set_index("group").loc[g] for g in res.groups}
    empty = [g for g in res.groups if by_group[g]["n"] == 0]
    for g in empty:
        out.append(f"No individual with {res.display(g)} needs recourse, so the group is not compared.")
    clear = gaps[gaps["significant"]]
    for row in clear.itertuples():
        out.append(gap_sentence(res, row))
    # groups with no clear difference, one sentence each; metrics equal for everyone apart
    for g in res.groups:
        part = gaps[(gaps["group"] == g) & ~gaps["significant"] & ~gaps["small_group"]
                    & np.isfinite(gaps["ci_low"]) & np.isfinite(gaps["difference"])]
        same = (part["difference"] == 0) & (part["ci_low"] == 0) & (part["ci_high"] == 0)
        unclear = [f"{labels[r.metric][0]} ({_signed(r.metric, r.difference)}, {conf} CI "
                   f"{_signed(r.metric, r.ci_low, unit=False)} to {_signed(r.metric, r.ci_high, unit=False)})"
                   for r in part[~same].itertuples()]
        if unclear:
            out.append(f"No clear difference between {res.display(g)} and {res.reference_display} in "
                       f"{join_words(unclear)}: each {conf} confidence interval covers zero{note}.")
        equal = [f"{labels[r.metric][0]} ({_level(r.metric, r.value)})" for r in part[same].itertuples()]
        if equal:
            out.append(f"Exactly the same {join_words(equal, 'and')} for {res.display(g)} as for "
                       f"{res.reference_display}{note}.")
    # small groups and metrics that cannot be compared
    for g in res.groups:
        if g in empty:
            continue
        row = by_group[g]
        if row["n"] < res.min_group_size:
            n_g = int(row['n'])
            out.append(f"Small group: only {pluralise(n_g, 'individual')} with {res.display(g)} "
                       f"need{'s' if n_g == 1 else ''} recourse (fewer "
                       f"than {res.min_group_size}), so its comparisons are too uncertain to draw conclusions.")
        elif row["n_recourse"] == 0 and res.verified:
            out.append(f"No individual with {res.display(g)} has verified recourse ({int(row['n_similar'])} with "
                       f"only a similar real case, {int(row['n_none'])} with none; {int(row['n_no_rule'])} without "
                       f"any valid rule, {int(row['n_no_actionable_rule'])} without an actionable one), so the "
                       "cost of recourse cannot be compared for this group.")
        elif row["n_recourse"] == 0:
            out.append(f"No individual with {res.display(g)} has recourse ({int(row['n_no_rule'])} without any "
                       f"valid rule, {int(row['n_no_actionable_rule'])} without an actionable one), so the cost "
                       f"of recourse cannot be compared for this group{note}.")
        elif row["n_recourse"] < res.min_group_size:
            n_r = int(row['n_recourse'])
            out.append(f"Only {pluralise(n_r, 'individual')} with {res.display(g)} {'has' if n_r == 1 else 'have'} "
                       f"{'verified recourse' if res.verified else 'a rule'} (fewer than "
                       f"{res.min_group_size}), so their changes, distances and rule quality are too uncertain to "
                       "compare.")
    top = []
    for g in res.groups:
        shares = change_shares.loc[g].dropna().sort_values(ascending=False, kind="stable")
        shares = shares[shares > 0].head(3)
        if len(shares):
            top.append(f"{res.display(g)}: " + ", ".join(f"{f} ({v:.0%})" for f, v in shares.items()))
    if top:
        whose = "the verified advice changes most often, among individuals with verified recourse" if res.verified \
            else f"most often to change by the rules, among individuals with a rule ({RULES_ONLY})"
        out.append(f"Features {whose} — " + "; ".join(top) + ".")
    if res.group_is_feature:
        asked = change_shares[res.group_column] if res.group_column in change_shares else None
        n_rec = table.set_index("group")["n_recourse"]
        n_asked = int(round(float(np.nansum(asked.to_numpy() * n_rec.reindex(asked.index).to_numpy())))) \
            if asked is not None else 0
        if n_asked:
            out.append(f"{res.group_column} is one of the model's features and {pluralise(n_asked, 'individual')} "
                       f"{'is' if n_asked == 1 else 'are'} told to "
                       f"change it{note}; consider marking it immutable (an actionability constraint).")
    if not res.distance_available:
        out.append("Distances are not available: the explainer has no fit data (restored from JSON) and no "
                   "reference rows were given (reference_rows=).")
    return out


def _is_largest(res) -> bool:
    if res.reference_is_rest or len(res.groups) < 2:
        return False
    t = res.table().set_index("group")
    return bool(t.loc[res.reference, "n_total"] == t["n_total"].max())
