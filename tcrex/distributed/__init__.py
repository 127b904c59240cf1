"""Explanations and audits beyond one process: Parquet streaming helpers and Dask.

The explainer always travels as its JSON (``TCREx.to_json()``, a few KB of rules and metarules), never as a pickle
holding fit data or a model; each worker rebuilds it with ``TCREx.from_json`` and explains its own rows.

>>> import dask.dataframe as dd                                   # doctest: +SKIP
>>> out = explain(dd.read_parquet("s3://bucket/*.parquet"), ex.to_json(), y_pred="score")  # doctest: +SKIP
>>> out.to_parquet("s3://bucket/explained/")                       # doctest: +SKIP
"""
from __future__ import annotations

import pandas as pd

from ._stream import EXPLAIN_COLUMNS, explain_frame, explain_parquet_file, expand_paths, load_model_file, load_rules

__all__ = ["explain", "audit", "explain_frame", "explain_parquet_file", "expand_paths", "load_rules",
           "load_model_file", "EXPLAIN_COLUMNS"]


def _part(df: pd.DataFrame, rules: str, y_pred, keep) -> pd.DataFrame:
    return explain_frame(load_rules(rules), df, y_pred=y_pred, keep=keep)


def explain(ddf, rules, *, y_pred: str, keep=None):
    """Explain every row of the Dask DataFrame ``ddf``; ``y_pred`` names the column holding the model's outputs.

    ``rules`` is a fitted :class:`tcrex.TCREx` or its JSON text. Returns a lazy Dask DataFrame aligned with ``ddf``
    (same partitions, same index) with the columns of :meth:`TCREx.explain` plus ``keep``.
    """
    text = rules if isinstance(rules, str) else rules.to_json()
    keep = list(keep or [])
    meta = _meta_from(text, ddf, y_pred, keep)
    return ddf.map_partitions(_part, text, y_pred, keep, meta=meta)


def _meta_from(text, ddf, y_pred, keep) -> pd.DataFrame:
    """Explicit meta: the result of explaining zero rows (exact dtypes, categories included)."""
    empty = ddf._meta
    return explain_frame(load_rules(text), empty, y_pred=y_pred, keep=keep)


def audit(ddf, rules, *, groups: str, y_pred: str, **kwargs):
    """Subgroup audit (:func:`tcrex.audit.audit`) of the rows of ``ddf`` grouped by the column ``groups``.

    Each partition is explained on the workers; only the columns the audit needs travel to the driver.
    """
    from ..audit import audit as _audit
    ex = load_rules(rules if isinstance(rules, str) else rules.to_json())
    frame = ddf.compute()
    X = frame.drop(columns=[y_pred])
    return _audit(ex, X, groups, y_pred=frame[y_pred].to_numpy(), **kwargs)
