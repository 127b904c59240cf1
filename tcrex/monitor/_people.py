"""Per person, from one version to the next: the advice each person holds re-checked on the new model, fresh
verified recourse for whoever needs it and holds none that works, and what happened (the person's status).

Everything here reads the engine's own definitions: who needs recourse is :func:`tcrex.vocabulary.needs_recourse` of
``explain()``'s status, verified advice is :func:`tcrex.vocabulary.is_verified` of ``counterfactuals(verify=True)``,
and advice holds when :meth:`tcrex.TCREx.in_target` accepts the new model's output at its point. The frame a run
produces *is* a verified frame (``counterfactuals``' columns, the point of each person's current advice) with the
monitor's columns added (:data:`~tcrex.monitor.PERSON_COLUMNS`), so the audit aggregates it unchanged
(``audit(..., counterfactuals=frame)``).

The functions work on any partition of the people (a file, a batch, a Dask task): each row depends on its own
person only.
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .. import conform_dtypes
from ..vocabulary import RECOURSE_OUTCOMES, SOURCES, is_verified, needs_recourse
from ._vocabulary import (BASELINE, GAINED, INVALIDATED, KEPT, NEWLY_NEEDING, NO_LONGER_NEEDING, NOT_NEEDING,
                          PERSON_COLUMNS, STATUSES, STILL_NONE)

_STATUS_DTYPE = pd.CategoricalDtype(list(STATUSES) + [BASELINE])


def baseline_frame(ex, X: pd.DataFrame, model, spec, reference, label: str, *, y=None) -> pd.DataFrame:
    """Every person's verified advice under the first version: ``counterfactuals(verify=True)`` with the monitor's
    columns (status ``baseline``: nothing happened before). ``y``: the model's outputs on X when known."""
    names = list(ex.schema_.names)
    Xf = X[names]
    y = ex.outputs(Xf, model=model) if y is None else np.asarray(y)
    exp = ex.explain(Xf, y_pred=y, target=spec)
    cf = ex.counterfactuals(Xf, model=model, y_pred=y, target=spec, reference=reference)
    need = needs_recourse(exp["status"])
    ver = is_verified(cf) & need
    return _with_columns(cf, status=np.full(len(X), BASELINE, dtype=object), need=need, ver=ver,
                         prev_ver=np.zeros(len(X), dtype=bool), holds=None, y=y, target=exp["target"],
                         advice_version=np.where(ver, label, None))


def advance_frame(ex, X: pd.DataFrame, previous: pd.DataFrame, model, spec, reference, label: str, *,
                  same_model: bool = False) -> pd.DataFrame:
    """The people's frame under a new version, from their frame under the previous one (``previous``: a frame of
    :func:`baseline_frame` / :func:`advance_frame`, same rows in the same order).

    One model call asks about every person and every point of advice held; who needs recourse and holds no advice
    that the new model confirms (their advice was invalidated, they held none, or they newly need recourse) gets a
    fresh ``counterfactuals(verify=True)`` search; everyone else keeps the row they had (advice that still works is
    not replaced).

    ``same_model``: the new version's model file is the previous version's (same SHA-256). The search is
    deterministic, so whoever needed recourse and had none verified still has none: their rows are kept instead of
    searching again (everything else is re-checked as for any model)."""
    names = list(ex.schema_.names)
    Xf = X[names]
    n = len(Xf)
    prev_need = previous["needs_recourse"].to_numpy(dtype=bool)
    prev_ver = previous["verified"].to_numpy(dtype=bool)
    pts = conform_dtypes(previous.loc[prev_ver, names].reset_index(drop=True), Xf)
    both = pd.concat([Xf.reset_index(drop=True), pts], ignore_index=True) if len(pts) else Xf
    outputs = ex.outputs(both, model=model)  # one model call: the people as they are and the advice they hold
    y, y_pts = np.asarray(outputs[:n]), np.asarray(outputs[n:])
    exp = ex.explain(Xf, y_pred=y, target=spec)
    need = needs_recourse(exp["status"])
    holds = np.zeros(n, dtype=bool)
    if prev_ver.any():
        holds[prev_ver] = ex.in_target(y_pts, previous["target"].to_numpy(dtype=np.float64, na_value=np.nan)[prev_ver])
    kept = prev_ver & need & holds
    unchanged = ~prev_need & ~need  # the favourable outcome under both: their row depends on X alone
    if same_model:  # the same file's search gives the same (no) answer
        unchanged |= prev_need & ~prev_ver & need
    search = need & ~kept & ~unchanged
    cf_columns = [c for c in previous.columns if c not in PERSON_COLUMNS]
    parts = []
    if kept.any():
        old = previous.loc[kept, cf_columns].copy()
        old["output"] = pd.Series(list(y_pts[(holds & need)[prev_ver]]), index=old.index, dtype=object)
        old["valid"] = pd.array(np.ones(len(old), dtype=bool), dtype="boolean")
        parts.append(old)
    if unchanged.any():
        parts.append(previous.loc[unchanged, cf_columns])
    for rows in (search, ~need & ~unchanged):
        if rows.any():
            sel = np.flatnonzero(rows)
            part = ex.counterfactuals(Xf.iloc[sel], model=model, y_pred=y[sel], target=spec, reference=reference)
            part.index = X.index[sel]
            parts.append(part)
    cf = _concat(parts, X.index)
    ver = is_verified(cf) & need
    status = np.select(
        [kept, prev_ver & need & ~holds, prev_need & ~prev_ver & need & ver, ~prev_need & need, prev_need & ~need,
         prev_need & need],
        [KEPT, INVALIDATED, GAINED, NEWLY_NEEDING, NO_LONGER_NEEDING, STILL_NONE], default=NOT_NEEDING)
    advice_version = np.where(kept, previous["advice_version"].astype(object).to_numpy(),
                              np.where(ver, label, None))
    return _with_columns(cf, status=status, need=need, ver=ver, prev_ver=prev_ver, holds=holds, y=y,
                         target=exp["target"], advice_version=advice_version, normal=True)


def _concat(parts: list, index) -> pd.DataFrame:
    """The parts' rows in ``index`` order, with the verified frame's dtypes (categories, booleans, tuples)."""
    frame = pd.concat(parts) if len(parts) > 1 else parts[0]
    frame = frame.loc[index]
    return normalise(frame)


def normalise(frame: pd.DataFrame) -> pd.DataFrame:
    """The verified frame's own dtypes, whatever the frame went through (a Parquet round trip, a concat):
    ``source`` / ``recourse`` categoricals of every source / outcome, ``changed`` tuples, ``valid`` boolean,
    rule indices Int64."""
    frame = frame.copy()
    frame["source"] = pd.Categorical(frame["source"].astype(object).where(frame["source"].notna(), None),
                                     categories=list(SOURCES))
    frame["recourse"] = pd.Categorical(frame["recourse"].astype(object).where(frame["recourse"].notna(), None),
                                       categories=list(RECOURSE_OUTCOMES))
    frame["changed"] = [tuple(c) if c is not None and not (isinstance(c, float) and c != c) else () for c in
                        frame["changed"]]
    valid = frame["valid"]
    frame["valid"] = valid.astype("boolean") if not isinstance(valid.dtype, pd.BooleanDtype) else valid
    for c in ("rule", "recommended_rule"):
        frame[c] = pd.array(pd.to_numeric(frame[c], errors="coerce"), dtype="Int64") if c in frame else frame[c]
    frame["n_changes"] = frame["n_changes"].fillna(0).astype(np.int64)
    if "status" in frame:
        frame["status"] = pd.Categorical(frame["status"].astype(object), dtype=_STATUS_DTYPE)
        for c in ("needs_recourse", "verified", "previous_verified"):
            frame[c] = frame[c].astype(bool)
        frame["advice_holds"] = pd.array(frame["advice_holds"].astype(object).where(frame["advice_holds"].notna(),
                                                                                      None).tolist(), dtype="boolean")
        frame["target"] = pd.array(pd.to_numeric(frame["target"], errors="coerce"), dtype="Int64")
    return frame


def _with_columns(cf, *, status, need, ver, prev_ver, holds, y, target, advice_version,
                  normal: bool = False) -> pd.DataFrame:
    out = cf.copy() if normal else normalise(cf)  # ``normal``: cf has the verified frame's dtypes already
    n = len(out)
    out["status"] = pd.Categorical(status, dtype=_STATUS_DTYPE)
    out["needs_recourse"] = np.asarray(need, dtype=bool)
    out["verified"] = np.asarray(ver, dtype=bool)
    out["previous_verified"] = np.asarray(prev_ver, dtype=bool)
    out["advice_holds"] = pd.arrays.BooleanArray(np.zeros(n, dtype=bool) if holds is None else holds,
                                                 ~np.asarray(prev_ver, dtype=bool))
    out["person_output"] = pd.Series(list(np.asarray(y)), index=out.index, dtype=object)
    out["target"] = pd.array(pd.to_numeric(pd.Series(target, index=out.index), errors="coerce"), dtype="Int64")
    out["advice_version"] = pd.array(list(advice_version), dtype="string")
    assert list(out.columns[-len(PERSON_COLUMNS):]) == list(PERSON_COLUMNS)
    return out


# ------------------------------------------------------------------------------------------------ Parquet
def to_parquet(frame: pd.DataFrame) -> bytes:
    """The frame as Parquet bytes (zstd): ``changed`` a list of names, outputs as their values."""
    out = frame.copy()
    out["changed"] = [list(c) for c in out["changed"]]
    for c in ("output", "person_output"):
        if c in out:
            out[c] = _plain_outputs(out[c])
    table = pa.Table.from_pandas(out, preserve_index=False)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def _plain_outputs(s: pd.Series) -> pd.Series:
    """Model outputs (an object column of numbers, class labels or None) as one Parquet type: numbers when they
    all are, else text."""
    values = s.to_numpy(dtype=object)
    present = [v for v in values if v is not None and not (isinstance(v, float) and v != v)]
    if all(isinstance(v, (int, float, np.integer, np.floating, bool, np.bool_)) for v in present):
        return pd.Series(pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(), index=s.index)
    return pd.Series([None if v is None or (isinstance(v, float) and v != v) else str(v) for v in values],
                     index=s.index, dtype=object)


def from_parquet(data: bytes) -> pd.DataFrame:
    frame = pq.read_table(io.BytesIO(data)).to_pandas()
    return normalise(frame) if "recourse" in frame else frame


def frame_bytes(frame: pd.DataFrame) -> bytes:
    """A plain table (the people, the reference rows) as Parquet bytes."""
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False), buf, compression="zstd")
    return buf.getvalue()


def table_from(data: bytes) -> pd.DataFrame:
    return pq.read_table(io.BytesIO(data)).to_pandas()

