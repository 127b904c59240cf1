"""Verified counterfactuals in batch (issue #27): the grouped sentences give exactly what the plain row-by-row
way gives. The reference lives here: the sentence of each row built row by row (the implementation before the
grouping)."""
import numpy as np
import pytest

import tcrex._verify as verify
from tcrex import TCREx
from tcrex._vocabulary import ALREADY_IN_TARGET, SOURCES
from tcrex.text import status_sentence, verified_sentence

from .helpers import mixed
from .test_properties import make_problem
from .test_verify import diagonal_model, owner_model


def reference_sentences(ex, rec, X, res, class_names=None) -> list:
    """Row by row: each row's changed features, their values' texts and the verdict at the nearest point."""
    point = ex._decode(rec.point, X.index).to_numpy(dtype=object)
    nearest = ex._decode(rec.nearest, X.index).to_numpy(dtype=object)
    names = ex.schema_.names
    out = []
    for i in range(len(X)):
        t = int(res["target"][i])
        if t < 0:
            out.append(status_sentence(ALREADY_IN_TARGET))
            continue
        changed = np.flatnonzero(rec.changed[i])
        r, paper, src = int(rec.rule[i]), int(res["rule"][i]), int(rec.source[i])
        sol = ex._all_targets[t]
        conds = ex._conditions(sol.rules, r) if r >= 0 else {}
        changes = [{"feature": names[f], "value": verify._cell(point[i, f]),
                    "condition": conds[f]["text"] if f in conds else None,
                    "nearest": verify._cell(nearest[i, f]) if r >= 0 else None} for f in changed]
        keeps = [{"feature": names[f], "condition": c["text"]} for f, c in conds.items() if not rec.changed[i, f]]
        out.append(verified_sentence(SOURCES[src] if src >= 0 else None, changes, keeps,
                                     rule_id=ex.rule_id(t, r) if r >= 0 else None,
                                     paper_rule_id=ex.rule_id(t, paper) if paper >= 0 else None,
                                     nearest_output=verify._named(rec.nearest_output[i], class_names),
                                     target=sol.target.describe(class_names)))
    return out


def _cases():
    """(explainer, rows, model, class names): random problems of every task and model kind, and the mixed data
    with constraints that reach every source."""
    cases = []
    for seed in (1, 3, 4, 7, 11, 12, 17, 23):
        p = make_problem(seed)
        if p is not None:
            cases.append((f"problem{seed}", lambda p=p: (TCREx(**p.params()).fit(p.X, p.model), p.X, p.model, None)))
    X, _ = mixed(400, seed=2)
    for name, model, cons, target in [
            ("diagonal", diagonal_model, None, None),
            ("owner", owner_model, None, 1),
            ("owner_constrained", owner_model, {"age": "increase_only",
                                                "job": {"transitions": {"clerk": ["driver"], "nurse": ["teacher"]}}}, 1),
            ("diagonal_constrained", diagonal_model, {"income": "decrease_only", "owner": "immutable"}, None)]:
        cases.append((name, lambda model=model, cons=cons, target=target: (
            TCREx(rho=0.03, tau=0.9, constraints=cons, target=target).fit(X, model), X, model,
            {0: "rejected", 1: "approved"})))
    return cases


CASES = _cases()


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_grouped_sentences_are_the_row_by_row_sentences(case, monkeypatch):
    ex, X, model, class_names = case()
    seen = {}
    grouped = verify.sentences

    def spy(ex, rec, X, res, class_names=None):
        seen.update(rec=rec, X=X, res=res)
        return grouped(ex, rec, X, res, class_names=class_names)

    monkeypatch.setattr(verify, "sentences", spy)
    cf = ex.counterfactuals(X, model=model, class_names=class_names)
    expected = reference_sentences(ex, seen["rec"], seen["X"], seen["res"], class_names)
    assert cf["text"].tolist() == expected
    assert cf["text"].nunique() < len(cf)  # rows do share sentences: the grouping is exercised
