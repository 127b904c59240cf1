"""Metacounterfactuals checked on the model.

A metacounterfactual (paper §6.2) says "if A were in the region of metarule M2, rule R5's advice would apply":
a promise about a hypothetical person. Here it is checked like the recourse of :mod:`tcrex._engine.recourse._search`: the "if"
features move to values the data holds inside M2 (nearest to the person's own values first), then R5's advice is
applied there with the candidate points of :class:`tcrex._engine.recourse._search.Candidates` (values the data holds inside the
rule, nearest first). The first point the model puts in the person's target is the alternative's ``point``; it
changes only the "if" features and the features the advice names, and its "if" part lies inside M2 (so R5 is the
optimal rule there, with the same features to change as the alternative states). Every candidate of every
alternative of one person is scored in one model call.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..base._data import Encoded, _native
from ._search import Candidates, Scorer, _objects, _ranks, rule_values
from ..fitting._solution import Solution
from ..fitting._state import FittedState
from ._verify import _Model
from ...text import checked_metacounterfactual_sentence, titled, value_text

#: "If" values tried per moved feature: the observed values inside the metarule nearest the person's own.
IF_VALUES = 4
#: "If" points (combinations of those values, nearest first) tried per alternative.
IF_POINTS = 8


def _observed(state: FittedState, t: int, cache: dict, j: int) -> np.ndarray | None:
    """The ascending values the data holds for numeric slot ``j``: the fit rows' own, else (an explainer restored
    from JSON) the union of the rules' observed values; None when neither is known."""
    if j not in cache:
        if state.has_fit_data:
            cache[j] = np.unique(state.fit_enc.num[:, j])
        else:
            values = rule_values(state, t)
            parts = [v[j] for v in values if j in v] if values is not None else []
            cache[j] = np.unique(np.concatenate(parts)) if parts else None
    return cache[j]


def _if_options(state: FittedState, t: int, sol: Solution, m: int, x: Encoded, num_out, cat_out, cache) -> list:
    """Per feature outside metarule ``m`` (numeric slots first, then categorical), the values to try, nearest
    first: ``[("n"|"c", slot, values)]``; None when a feature has no value to move to."""
    out = []
    low, high = sol.metarules.low[m], sol.metarules.high[m]
    for j in np.flatnonzero(num_out):
        vals = _observed(state, t, cache, j)
        inside = vals[(vals > low[j]) & (vals <= high[j])] if vals is not None else np.zeros(0)
        if not len(inside):
            return None
        up = x.num[0, j] <= low[j]
        out.append(("n", j, (inside if up else inside[::-1])[:IF_VALUES]))
    pref = state.category_preference
    for j in np.flatnonzero(cat_out):
        cats = np.flatnonzero(sol.metarules.allowed[j][m])
        if pref is not None:
            cats = cats[np.argsort(-pref[j][cats], kind="stable")]
        if not len(cats):
            return None
        out.append(("c", j, cats[:IF_VALUES]))
    return out


def verify_alternatives(state: FittedState, enc: Encoded, t: int, alternatives: list, model_call,
                        decode) -> None:
    """Add ``verified`` (bool) to each alternative (dicts from ``metacounterfactuals``) of the one row ``enc``
    in target ``t`` and, when verified, ``point`` (the full input, decoded by ``decode(Encoded) -> [dict]``),
    ``if_point`` (the "if" features moved, before the advice), ``output`` (the model's) and ``changed``."""
    if not alternatives:
        return
    sol = state.all_solutions()[t]
    targets = state.all_solutions()
    names = state.schema.names
    cache: dict = {}
    starts_num, starts_cat, owner_alt, if_rank = [], [], [], []
    for a, alt in enumerate(alternatives):
        alt["verified"] = False
        m, r = alt["metarule"], alt["rule"]
        if r is None or r < 0:
            continue
        num_out, cat_out = sol.metarules.outside(enc, np.array([m]))
        options = _if_options(state, t, sol, m, enc, num_out[0], cat_out[0], cache)
        if options is None:
            continue
        ranks = _ranks(tuple(len(o[2]) for o in options), False)[:IF_POINTS]
        num = np.repeat(enc.num, len(ranks), axis=0)
        cat = np.repeat(enc.cat, len(ranks), axis=0)
        for s, (kind, j, values) in enumerate(options):
            (num if kind == "n" else cat)[:, j] = values[ranks[:, s]]
        starts_num.append(num), starts_cat.append(cat)
        owner_alt.append(np.full(len(ranks), a)), if_rank.append(np.arange(len(ranks)))
    if not starts_num:
        return
    starts = Encoded(np.concatenate(starts_num), np.concatenate(starts_cat))
    owner_alt, if_rank = np.concatenate(owner_alt), np.concatenate(if_rank)
    # each "if" point must lie in its metarule with the alternative's rule and the same features to change
    r2, m2, _, p2 = sol.lookup(starts)
    outside = sol.outside(p2)  # (n, n_features) in schema order
    want = np.array([alternatives[a]["metarule"] for a in owner_alt])
    named = np.zeros((len(alternatives), len(names)), dtype=bool)
    for a, alt in enumerate(alternatives):
        for c in alt["changes"]:
            named[a, names.index(c["feature"])] = True
    keep = (m2 == want) & (r2 == np.array([alternatives[a]["rule"] for a in owner_alt])) & \
        (outside == named[owner_alt]).all(axis=1)
    if not keep.any():
        return
    starts = starts.take(np.flatnonzero(keep))
    owner_alt, if_rank, r2 = owner_alt[keep], if_rank[keep], r2[keep]
    cands = Candidates(state, starts, targets)
    nums, cats, owners, ranks = [], [], [], []
    for r in np.unique(r2):
        rows = np.flatnonzero(r2 == r)
        n_out, c_out, forbidden, _, _ = cands.reach(rows, t, np.array([r]))
        rows = rows[~forbidden[:, 0]]
        if not len(rows):
            continue
        built = cands.build(rows, t, int(r), n_out[~forbidden[:, 0], 0], c_out[~forbidden[:, 0], 0])
        if built is None:
            continue
        num, cat, owner, rank = built
        nums.append(num), cats.append(cat), owners.append(rows[owner]), ranks.append(rank)
    if not nums:
        return
    num, cat, start_of, rank = (np.concatenate(z) for z in (nums, cats, owners, ranks))
    scorer = Scorer(model_call, targets)
    out = scorer.outputs(Encoded(num, cat))
    ok = scorer.in_target(out, np.full(len(out), t))
    # the point changes only the "if" features and the features the advice names (a check, never assumed)
    moved = np.concatenate([num != enc.num, cat != enc.cat], axis=1)
    schema_of = np.concatenate([np.asarray(state.schema.numeric, dtype=np.int64),
                                np.asarray(state.schema.categorical, dtype=np.int64)])
    changed = np.zeros((len(num), len(names)), dtype=bool)
    changed[:, schema_of] = moved
    alt_of = owner_alt[start_of]
    allowed = named[alt_of].copy()
    for a, alt in enumerate(alternatives):
        for c in alt["metachanges"]:
            allowed[alt_of == a, names.index(c["feature"])] = True
    ok &= ~(changed & ~allowed).any(axis=1)
    good = np.flatnonzero(ok)
    if not len(good):
        return
    good = good[np.lexsort((rank[good], if_rank[start_of[good]], alt_of[good]))]
    best = good[np.r_[True, alt_of[good][1:] != alt_of[good][:-1]]]
    points = decode(Encoded(num[best], cat[best]))
    if_points = decode(starts.take(start_of[best]))
    outputs = _objects(out[best])
    for k, b in enumerate(best):
        alt = alternatives[int(alt_of[b])]
        alt["verified"] = True
        alt["point"] = points[k]
        alt["if_point"] = if_points[k]
        alt["output"] = _native(outputs[k])
        alt["changed"] = [names[i] for i in np.flatnonzero(changed[b])]


def check_alternatives(state: FittedState, X, enc: Encoded, t: int, alternatives: list, model) -> None:
    """:func:`verify_alternatives` on ``model`` (points given to it as the model's own frame, like ``X``), then
    each alternative's sentence says what was checked; the paper's sentence stays in ``paper_text``."""
    checker = _Model(state, model, X)

    def decode(points: Encoded) -> list:
        frame = state.schema.decode(points, pd.RangeIndex(len(points)))
        return [{k: _native(v) for k, v in row.items()} for row in frame.to_dict("records")]

    verify_alternatives(state, enc, t, alternatives, checker.outputs, decode)

    def stated(feature, value) -> str:
        return value_text(value, state.schema.features[state.schema.index(feature)].labels)

    for alt in alternatives:
        alt["paper_text"] = alt["text"]
        if alt.get("rule") is None or alt["rule"] < 0:
            continue  # "no actionable recourse": nothing to confirm, and the sentence says so already
        if alt["verified"]:  # the point's values as every sentence states them: "label (code)" when labelled
            moves = [titled({"feature": c["feature"], "value": stated(c["feature"], alt["if_point"][c["feature"]])},
                            c.get("title")) for c in alt["metachanges"]]
            changes = [titled({"feature": c["feature"], "value": stated(c["feature"], alt["point"][c["feature"]])},
                              c.get("title")) for c in alt["changes"]]
            alt["text"] = checked_metacounterfactual_sentence(moves, changes, alt["keeps"], verified=True)
        else:
            alt["text"] = checked_metacounterfactual_sentence(alt["metachanges"], [], [], verified=False,
                                                              rule_id=alt.get("rule_id"),
                                                              paper_changes=alt["changes"])
