"""The report's recourse parts: the headline figures, the top rules in plain words, who gets recourse and how hard
it is (the verified advice's changes when the model checked it), the chosen individuals and the model's score.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..figures import change_keep_counts, individual_table
from ..text import class_label, framed_alternative, is_trivial_rule, join_and, pluralise, trivial_rule_note
from ..vocabulary import ALREADY_IN_RULE, has_recourse, is_verified, needs_recourse, STATUS_PLAIN, STATUS_TEXT
from ._markup import _cell, _e, _full, _kv, _pct, _stack, _table, _WHO_COLORS


#: How many rules the executive page names in words (all targets together); the rest are in the appendix.
TOP_RULES = 3


def _with_rule(explanations: pd.DataFrame) -> np.ndarray:
    """Which rows of an explain() frame need recourse and have a rule for it (the paper's, not checked)."""
    status = explanations["status"].astype(str).to_numpy()
    return has_recourse(status) & needs_recourse(status)


def _headline(ex, explanations: pd.DataFrame | None, effectiveness=None,
              counterfactuals: pd.DataFrame | None = None) -> tuple[str, list]:
    """Headline recourse figures (HTML) and plain sentences. With the verified frame (``counterfactuals``) every
    figure is the verified one (the advice people get, checked on the model); the rules' own count is one
    secondary sentence, said as :data:`RULES_ALONE`. Without a model, the rules' figures, said as not checked."""
    if counterfactuals is not None and len(counterfactuals):
        return _headline_verified(explanations, counterfactuals)
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


def verified_figures(counterfactuals: pd.DataFrame) -> dict:
    """The headline figures of the verified frame (one owner: the executive page's tiles, its sentences and the
    tests read them here): people, needing a change, verified, the median changes of the verified points, and
    those with a similar case only / nothing."""
    outcome = counterfactuals["recourse"].astype(object)
    need = outcome.notna().to_numpy()
    verified = is_verified(counterfactuals)
    changes = counterfactuals.loc[verified, "n_changes"].astype(int)
    return {"people": len(counterfactuals), "need": int(need.sum()), "verified": int(verified.sum()),
            "median_changes": float(changes.median()) if len(changes) else None,
            "similar": int((outcome == "similar_case").sum()), "none": int((outcome == "none").sum())}


def _headline_verified(explanations, counterfactuals: pd.DataFrame) -> tuple[str, list]:
    f = verified_figures(counterfactuals)
    median = "–" if f["median_changes"] is None else _cell(f["median_changes"])
    cards = [("individuals explained", f"{f['people']:,}"),
             ("need a change to reach the favourable outcome", f"{f['need']:,} ({_pct(f['need'], f['people'])})"),
             ("of them get a change the model confirms", f"{f['verified']:,} ({_pct(f['verified'], f['need'])})"),
             ("median features the confirmed change changes", median)]
    html_cards = "".join(f"<div><b>{_e(v)}</b>{_e(k)}</div>" for k, v in cards)
    words = [f"Of {f['people']:,} individuals, {f['need']:,} are not in the favourable outcome; the model confirms "
             f"a change for {f['verified']:,} of them ({_pct(f['verified'], f['need'])}), typically changing "
             f"{median} feature{'' if median == '1' else 's'}."]
    if f["similar"] + f["none"]:
        words.append(f"{f['similar'] + f['none']:,} have no confirmed change (for {f['similar']:,} a similar real "
                     "case is shown, which is not advice).")
    if explanations is not None and len(explanations):
        status = explanations["status"].astype(str).to_numpy()
        n_has = int((has_recourse(status) & needs_recourse(status)).sum())
        words.append(f"The rules alone (not checked on the model) give {n_has:,} of them a rule to follow; the "
                     "appendix keeps those figures apart.")
    return f'<div class="headline">{html_cards}</div>', words


def _top_rules(ex, explanations: pd.DataFrame | None, k: int = 3, effectiveness=None, names=None,
               checked: bool = True, counterfactuals: pd.DataFrame | None = None) -> list:
    """The most used (else the largest) rules per target, in plain words; ``checked`` adds what happened on the
    model to the people each rule is the optimal rule for (the executive page leaves it to the appendix). With
    the verified frame (``counterfactuals``) a rule's use is the people whose confirmed change follows it."""
    rules = ex.rules_frame(effectiveness=effectiveness) if effectiveness is not None else ex.rules_frame()
    names = names or {}
    out = []
    for t, sol in enumerate(ex.targets_):
        rt = rules[rules.target == t].copy()
        if not len(rt):
            out.append(f"No rule reaches {names.get(t, sol.target.describe())} at these settings.")
            continue
        verified_use = counterfactuals is not None and len(counterfactuals) and explanations is not None \
            and len(explanations)
        if verified_use:
            tgt = pd.to_numeric(explanations["target"].reindex(counterfactuals.index), errors="coerce").to_numpy()
            mine = is_verified(counterfactuals) & (tgt == t) \
                & (counterfactuals["source"].astype(object) != "minimal_change").to_numpy()
            used = pd.to_numeric(counterfactuals.loc[mine, "recommended_rule"], errors="coerce").dropna().astype(int)
            rt["used"] = rt["rule"].map(used.value_counts()).fillna(0).astype(int)
        elif explanations is not None and len(explanations):
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
            who = ((f"; the confirmed change of {pluralise(r.used, 'person', 'people')} follows it" if verified_use
                    else f", recommended to {pluralise(r.used, 'individual')}") if r.used else "")
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


def _changes_table(changes: pd.Series, inside_rule: bool = False) -> str:
    """A bar per number of features to change (``changes``: one number per person with advice). ``inside_rule``
    (the rules' own counts once a model checked the advice): 0 is not "no change" but people inside a rule the
    model does not confirm, and says so."""
    counts = changes.dropna().astype(int).value_counts().sort_index()
    if not len(counts):
        return '<p class="note">No one here has a recourse.</p>'
    top = max(int(counts.max()), 1)
    label = {0: STATUS_PLAIN[ALREADY_IN_RULE]} if inside_rule else {}
    rows = "".join(f"<tr><td>{_e(label.get(int(c), str(int(c))))}</td><td>{int(n):,}</td><td style=\"width:55%\"><span class=\"bar\" "
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
        checked = exp.counterfactual_valid is not None and getattr(exp, "recourse", None) is not None
        facts += [("metarule", getattr(exp, "metarule_id", None) or exp.metarule),
                  ("features to change", exp.n_changes if not checked or exp.recourse == "verified"
                   else "none the model confirms")]  # never "0" for someone the model rejects
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
        alts = "".join(f"<li title=\"{_e(a.get('paper_text') or a['text'])}\">{_e(marks.get(a.get('verified'), ''))}"
                       f"{_e(framed_alternative(a['text']))}</li>" for a in exp.alternatives)
        checked = any(a.get("verified") is not None for a in exp.alternatives)
        parts.append("<p>Nearby metarules: what the advice would be had this person been slightly different (their "
                     "past, not something to change now; the paper's wording in each line's tooltip)"
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
