"""Who needs recourse: the one favourable outcome of a fitted explainer that the audit and the comparison of models
count against (``target=``, or the explainer's own ``target``). Everyone whose output is not in it needs recourse
(:func:`tcrex.vocabulary.needs_recourse`); people already favourable are never counted as needing it.
"""
from __future__ import annotations

import numpy as np

from .. import targets_from_spec
from ..errors import ParameterError


def favourable_outcome(explainer, target, *, needs: str, fitted: str):
    """``(spec, target)``: the favourable outcome as given (``target``, or the explainer's) and the engine's
    :class:`Target` for it. ``needs`` and ``fitted`` name the caller and its explainer in the message when the
    explainer was fitted with the default targets ("the audit needs", "the explainer"). One outcome only: a
    regression threshold split in both directions is refused."""
    spec = target if target is not None else explainer.target
    if spec is None:
        classes = getattr(explainer, "classes_", [])
        hint = (f"the favourable class, e.g. target={classes[-1]!r} (classes: {classes})" if classes else
                "the favourable interval, e.g. target=(threshold, None)")
        raise ParameterError(f"{needs} to know which outcome is favourable (who needs recourse), but {fitted} was "
                             f"fitted with the default targets; pass target= {hint}")
    wanted = targets_from_spec(spec, explainer.task_, np.zeros(1), explainer.classes_)
    if len(wanted) != 1:
        raise ParameterError(f"target {spec!r} names {len(wanted)} outcomes in both directions; for regression "
                             "pass an interval, e.g. target=(threshold, None) for 'above the threshold'")
    return spec, wanted[0]
