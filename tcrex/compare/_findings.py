"""The comparison in English: the sentence of each clear gap and the findings."""
from __future__ import annotations


import numpy as np

from ..population import (PRACTICAL_DEFAULT, below_threshold_gaps, clear_gaps, confidence_text, join_words,
                          threshold_text)
from ..text import pluralise
from ._vocabulary import COMPARE_METRICS, NEWLY_NEEDED, NO_LONGER_NEEDED


# ---------------------------------------------------------------------------------------------------- findings
#: The sentence of a clear gap, per metric (the audit's wording: a template and its words for higher / lower).
_GAP_SENTENCES = {
    "lost_share": ("Individuals with {g} who need recourse under model A lose verified recourse under model B {word} "
                   "often than {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
    "gained_share": ("Individuals with {g} who need recourse under model A gain verified recourse under model B "
                     "{word} often than {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
    "invalidation_rate": ("Model A's verified advice to individuals with {g} is invalidated by model B {word} often "
                          "than for {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
    "verified_share_a": ("Individuals with {g} who need recourse have verified recourse under model A {word} often "
                         "than {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
    "verified_share_b": ("Individuals with {g} who need recourse have verified recourse under model B {word} often "
                         "than {r}: {vals}, {amount} {direction} {ci}.", ("more", "less")),
}


def _pts(v, unit=True) -> str:
    text = f"{v * 100:+.1f}"
    if float(text) == 0:
        text = text[1:]
    return text + (" points" if unit else "")


def _gap_sentence(res, row) -> str:
    d = row.difference
    more = d > 0
    lo, hi = (row.ci_low, row.ci_high) if more else (-row.ci_high, -row.ci_low)
    ci = f"({confidence_text(res.confidence)} CI {lo * 100:.1f} to {hi * 100:.1f})"
    template, words = _GAP_SENTENCES[row.metric]
    return template.format(g=res.display(row.group), r=res.reference_display, word=words[0 if more else 1],
                           direction="higher" if more else "lower", amount=f"{abs(d) * 100:.1f} percentage points",
                           ci=ci, vals=f"{row.value:.1%} against {row.reference_value:.1%}")


def _findings(res) -> list[str]:
    s = res.summary
    out = [f"Comparison of model A and model B on {pluralise(s['n'], 'individual')} (target: {res.target}): "
           f"{res.headline()}"]
    inv = s["invalidation_rate"]
    if inv == inv:
        out.append(f"Model B does not confirm {s['n_invalidated']:,} of model A's {s['n_verified_a']:,} verified "
                   f"points: an invalidation rate of {inv:.1%}.")
    nn, nl = s["changes"][NEWLY_NEEDED], s["changes"][NO_LONGER_NEEDED]
    if nn or nl:
        out.append(f"{pluralise(nn, 'individual')} with the favourable outcome under A need recourse under B; "
                   f"{nl:,} who needed it under A no longer do.")
    out.append(f"Explainer B was fitted on {res.explainer_b_fit_on}; A's rules are re-checked on "
               f"{res.rules_measured_on}.")
    broken = res.broken_rules()
    if len(broken):
        below = broken[broken["holds_tau_b"].fillna(True) == False]  # noqa: E712
        if len(below):
            out.append(f"{pluralise(len(below), 'rule')} of A no longer reach{'es' if len(below) == 1 else ''} "
                       f"accuracy tau under B: " + ", ".join(
                           f"{r.rule_id} ({r.accuracy_b:.0%})" for r in below.head(10).itertuples()) + ".")
    if res.groups is None:
        return out
    conf = confidence_text(res.confidence)
    table, gaps = res.groups, res.gaps
    largest = (not res.reference_is_rest and len(res.group_labels) > 1
               and int(table.set_index("group").loc[res.reference, "n"]) == int(table["n"].max()))
    out.append(f"{len(res.group_labels)} groups of {res.group_column}; each group is compared with "
               f"{res.reference_display}{' (the largest group)' if largest else ''}.")
    if len(res.group_labels) < 2:
        out.append("There is only one group, so nothing to compare.")
    for row in gaps[clear_gaps(gaps, PRACTICAL_DEFAULT)].itertuples():  # the audit's rule of a clear gap
        out.append(_gap_sentence(res, row))
    small = gaps[below_threshold_gaps(gaps, PRACTICAL_DEFAULT)]
    if len(small):
        out.append("Below the practical threshold (" + threshold_text(PRACTICAL_DEFAULT) + "), so not called a clear "
                   "difference although each interval excludes zero: " + join_words(
                       [f"{COMPARE_METRICS[r.metric][0]} for {res.display(r.group)} ({_pts(r.difference)})"
                        for r in small.itertuples()], "and") + ".")
    for g in res.group_labels:
        part = gaps[(gaps["group"] == g) & ~gaps["significant"] & ~gaps["small_group"]
                    & np.isfinite(gaps["ci_low"]) & np.isfinite(gaps["difference"])]
        same = (part["difference"] == 0) & (part["ci_low"] == 0) & (part["ci_high"] == 0)
        unclear = [f"{COMPARE_METRICS[r.metric][0]} ({_pts(r.difference)}, {conf} CI {_pts(r.ci_low, False)} to "
                   f"{_pts(r.ci_high, False)})" for r in part[~same].itertuples()]
        if unclear:
            out.append(f"No clear difference between {res.display(g)} and {res.reference_display} in "
                       f"{join_words(unclear)}: each {conf} confidence interval covers zero.")
        equal = [f"{COMPARE_METRICS[r.metric][0]} ({r.value:.1%})" for r in part[same].itertuples()]
        if equal:
            out.append(f"Exactly the same {join_words(equal, 'and')} for {res.display(g)} as for "
                       f"{res.reference_display}.")
    for row in table.itertuples():
        if row.n_need_a < res.min_group_size:
            out.append(f"Small group: only {pluralise(int(row.n_need_a), 'individual')} with {res.display(row.group)} "
                       f"need{'s' if row.n_need_a == 1 else ''} recourse under model A (fewer than "
                       f"{res.min_group_size}), so its comparisons are too uncertain to draw conclusions.")
    return out
