"""Verified counterfactuals in batch: the batched search and the grouped sentences give exactly what
the plain way gives — same points, sources, sentences and columns.

The references live here: the sentence of each row built row by row, the search beyond the rules scoring every
subset of a row's differing features in one call, and the search inside the rules in small chunks with the
paper's rule searched deeper in one round (the implementation before the batching)."""
import math

import numpy as np
import pandas as pd
import pytest

import tcrex._engine.recourse._search as recourse
import tcrex._engine.recourse._verify as verify
from tcrex._engine.base._data import Encoded
from tcrex.vocabulary import ALREADY_IN_TARGET, SOURCES
from tcrex.text import box_conditions, status_sentence, value_text, verified_sentence

from tests.support.search_cases import CASES, SEARCH_CASES


def reference_sentences(ex, rec, X, res, class_names=None) -> list:
    """Row by row: each row's changed features, their values' texts and the verdict at the nearest point."""
    point = ex.schema_.decode(rec.point, X.index).to_numpy(dtype=object)
    nearest = ex.schema_.decode(rec.nearest, X.index).to_numpy(dtype=object)
    names = ex.schema_.names
    out = []
    for i in range(len(X)):
        t = int(res.target_id[i])
        if t < 0:
            out.append(status_sentence(ALREADY_IN_TARGET))
            continue
        changed = np.flatnonzero(rec.changed[i])
        r, paper, src = int(rec.rule[i]), int(res.rule[i]), int(rec.source[i])
        sol = ex.state_.all_solutions()[t]
        conds = box_conditions(ex.schema_, sol.rules, r) if r >= 0 else {}
        labels = [ex.schema_.features[f].labels for f in range(len(names))]
        changes = [{"feature": names[f], "value": value_text(point[i, f], labels[f]),
                    "condition": conds[f]["text"] if f in conds else None,
                    "nearest": value_text(nearest[i, f], labels[f]) if r >= 0 else None} for f in changed]
        keeps = [{"feature": names[f], "condition": c["text"]} for f, c in conds.items() if not rec.changed[i, f]]
        out.append(verified_sentence(SOURCES[src] if src >= 0 else None, changes, keeps,
                                     rule_id=ex.rule_id(t, r) if r >= 0 else None,
                                     paper_rule_id=ex.rule_id(t, paper) if paper >= 0 else None,
                                     nearest_output=verify._named(rec.nearest_output[i], class_names),
                                     target=sol.target.describe(class_names), max_changes=ex.max_changes))
    return out


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_grouped_sentences_are_the_row_by_row_sentences(case, monkeypatch):
    ex, X, model, class_names = case()
    seen = {}
    grouped = verify.sentences

    def spy(state, rec, X, res, class_names=None):
        seen.update(rec=rec, X=X, res=res)
        return grouped(state, rec, X, res, class_names=class_names)

    monkeypatch.setattr(verify, "sentences", spy)
    cf = ex.counterfactuals(X, model=model, class_names=class_names)
    expected = reference_sentences(ex, seen["rec"], seen["X"], seen["res"], class_names)
    assert cf["text"].tolist() == expected
    assert cf["text"].nunique() < len(cf)  # rows do share sentences: the grouping is exercised


def reference_give_back(cands, scorer, x, x_pct, start, scale, tgt, start_out, known=None):
    """Every subset of each row's differing features kept at the start's values, in one model call per row size:
    the confirmed subset with the fewest features wins, then the nearest, then the earlier subset; with
    max_changes, only subsets of at most that many features, and a result beyond it is not within. ``known`` is
    neither read nor updated: every pass scores every subset again."""
    num, cat = start.num.copy(), start.cat.copy()
    out = np.asarray(start_out, dtype=object).copy()
    m = x.num.shape[1]
    diff = np.concatenate([start.num != x.num, start.cat != x.cat], axis=1)
    k = diff.sum(axis=1)
    most = cands.max_changes
    small = k <= recourse.MAX_SUBSET_FEATURES
    if most is not None:
        small |= np.array([sum(math.comb(int(s), c) for c in range(1, min(most, int(s) - 1) + 1))
                           <= recourse.MAX_SUBSETS for s in k])
    blocks = []
    for size in np.unique(k[small]):
        if size <= 1:
            continue
        rows = np.flatnonzero(small & (k == size))
        where = np.argsort(~diff[rows], axis=1, kind="stable")[:, :size]
        masks = (np.arange(1, 2 ** size)[:, None] >> np.arange(size)[None, :]) & 1
        masks = masks[(masks.sum(axis=1) < size) & (masks.sum(axis=1) <= (most or size))].astype(bool)
        for r_i, r in enumerate(rows):
            cn = np.repeat(x.num[r][None], len(masks), axis=0)
            cc = np.repeat(x.cat[r][None], len(masks), axis=0)
            for j, slot in enumerate(where[r_i]):
                if slot < m:
                    cn[masks[:, j], slot] = start.num[r, slot]
                else:
                    cc[masks[:, j], slot - m] = start.cat[r, slot - m]
            blocks.append((cn, cc, np.full(len(masks), r), masks.sum(axis=1)))
    if blocks:
        cn, cc, owner, size = (np.concatenate(z) for z in zip(*blocks))
        o = scorer.outputs(Encoded(cn, cc))
        good = np.flatnonzero(scorer.in_target(o, tgt[owner]))
        if len(good):
            dist = scale.distance(x.take(owner[good]), Encoded(cn[good], cc[good]), x_pct[owner[good]])
            good = good[np.lexsort((good, dist, size[good], owner[good]))]
            best = good[np.r_[True, owner[good][1:] != owner[good][:-1]]]
            num[owner[best]], cat[owner[best]] = cn[best], cc[best]
            out[owner[best]] = recourse._objects(o[best])
    big = np.flatnonzero(~small)
    if len(big):
        n_, c_, o_ = recourse._give_back_greedy(cands, scorer, x.take(big), x_pct[big], Encoded(num[big], cat[big]),
                                                scale, tgt[big], out[big])
        num[big], cat[big], out[big] = n_, c_, o_
    n_changed = (num != x.num).sum(axis=1) + (cat != x.cat).sum(axis=1)
    return num, cat, out, n_changed <= (most or n_changed.max(initial=0))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("chunk_rows", [None, 300])
@pytest.mark.parametrize("case", [c[1] for c in SEARCH_CASES], ids=[c[0] for c in SEARCH_CASES])
def test_batched_search_finds_what_the_plain_search_finds(case, chunk_rows, monkeypatch):
    ex, X, model, class_names = case()
    with monkeypatch.context() as plain:
        plain.setattr(recourse, "CHUNK_ROWS", 2000)
        plain.setattr(recourse, "DEEPER_TIERS", (1,))
        plain.setattr(recourse, "_give_back", reference_give_back)
        expected = ex.counterfactuals(X, model=model, class_names=class_names)
    if chunk_rows is not None:  # several chunks, tiers inside each
        monkeypatch.setattr(recourse, "CHUNK_ROWS", chunk_rows)
    got = ex.counterfactuals(X, model=model, class_names=class_names)
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs == expected.attrs
