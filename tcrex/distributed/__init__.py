"""Explanations and audits beyond one process: Parquet streaming helpers and Dask.

The explainer always travels as its JSON (``TCREx.to_json()``, a few KB of rules and metarules), never as a pickle
holding fit data or a model; each worker rebuilds it with ``TCREx.from_json`` and explains its own rows.

>>> import dask.dataframe as dd                                   # doctest: +SKIP
>>> out = explain(dd.read_parquet("s3://bucket/*.parquet"), ex.to_json(), y_pred="score")  # doctest: +SKIP
>>> out.to_parquet("s3://bucket/explained/")                       # doctest: +SKIP
"""
from __future__ import annotations

import pandas as pd

from ..errors import TCRExError
from ._compare import compare_file, compare_frame
from ._options import RunCheck, RunOptions
from ._progress import PROGRESS_TOPIC, BatchProgress, known_rows, say_progress
from ._stream import (EXPLAIN_COLUMNS, NO_REFERENCE_NOT_DONE, VERIFICATION_KEY, VERIFIED_COLUMNS, FileError,
                      Overlapped, audit_file, audit_frame, check_kept_columns, check_model_file, check_number_columns,
                      check_run, column_names, count_rows, counterfactual_table, explain_columns,
                      explain_parquet_file, expand_paths, file_digest, iter_frames, load_model_file,
                      load_model_file_soon, load_rules, located, model_file, numbered, output_columns, provenance,
                      reference_files, sample_rows, start_outputs)

__all__ = ["explain", "audit", "audit_counts", "explain_columns", "explain_parquet_file", "audit_frame", "audit_file",
           "expand_paths", "iter_frames", "count_rows", "sample_rows", "load_rules", "load_model_file",
           "EXPLAIN_COLUMNS", "FileError", "located", "check_number_columns", "counterfactual_table",
           "compare_file", "compare_frame", "Overlapped", "numbered", "start_outputs", "column_names",
           "check_model_file", "VERIFICATION_KEY", "NO_REFERENCE_NOT_DONE", "check_run", "load_model_file_soon",
           "file_digest", "model_file", "provenance", "reference_files", "VERIFIED_COLUMNS", "output_columns",
           "check_kept_columns", "PROGRESS_TOPIC", "BatchProgress", "say_progress",
           "known_rows", "RunOptions", "RunCheck"]


def _part(df: pd.DataFrame, rules: str, y_pred, keep) -> pd.DataFrame:
    return explain_columns(load_rules(rules), df, y_pred=y_pred, keep=keep)


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
    empty = ddf._meta  # noqa: SLF001 - Dask's documented empty frame of the right dtypes
    return explain_columns(load_rules(text), empty, y_pred=y_pred, keep=keep)


def _audit_part(df: pd.DataFrame, rules: str, groups, y_pred, model_path, target):
    from ._stream import load_model_file
    model = load_model_file(model_path) if model_path else None
    return audit_frame(load_rules(rules), df, groups=groups, y_pred=y_pred, model=model, target=target)


def audit_counts(ddf, rules, *, groups: str, y_pred: str | None = None, model_path: str | None = None, target=None):
    """The audit's mergeable counts (:class:`tcrex.audit.AuditCounts`) of every row of ``ddf``: each partition is
    counted on the workers and the counts are added in a tree; no row reaches the driver."""
    import operator

    import dask
    text = rules if isinstance(rules, str) else rules.to_json()
    if (y_pred is None) == (model_path is None):
        raise TCRExError("give exactly one of y_pred (a column name) and model_path")
    _audit_part(ddf._meta, text, groups, y_pred, model_path, target)  # noqa: SLF001 - columns, target checked up front
    parts = [dask.delayed(_audit_part)(p, text, groups, y_pred, model_path, target) for p in ddf.to_delayed()]
    while len(parts) > 1:
        parts = [dask.delayed(operator.add)(a, b) for a, b in zip(parts[::2], parts[1::2])] + \
            ([parts[-1]] if len(parts) % 2 else [])
    (counts,) = dask.compute(parts[0])
    return counts


def audit(ddf, rules, *, groups: str, y_pred: str | None = None, model_path: str | None = None, target=None,
          **kwargs):
    """Subgroup audit (:func:`tcrex.audit.audit`) of the rows of ``ddf`` grouped by the column ``groups``.

    Built from per-partition mergeable counts (:func:`audit_counts`), so the driver never holds rows; the result
    equals :func:`tcrex.audit.audit` of all rows with the same explainer (``kwargs``: ``n_boot``, ``confidence``,
    ``reference``, ``random_state``, ``min_group_size``). The explainer travels as JSON, without fit data, so
    distances are not available (as for any explainer restored from JSON).
    """
    from ..audit import audit_from_counts
    return audit_from_counts(audit_counts(ddf, rules, groups=groups, y_pred=y_pred, model_path=model_path,
                                          target=target), **kwargs)
