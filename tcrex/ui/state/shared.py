"""Work shared by every session of one server: computed once, keyed on content, never mutated.

The bundled samples, their default models and the explainers fitted on them are the same for every user, so they
live in global caches (``st.cache_resource`` without a scope) keyed on content digests (the data's SHA-256 from
:func:`tcrex.ui.state.sources.frame_digest`, the model's key, the parameters).  Only uploads, models trained on uploads
and fits with parameters a user changed stay per session (:mod:`tcrex.ui.state.active`, :mod:`tcrex.ui.state.memory`).

What follows from a shared fit and is the same for every session is shared too: audits with the same settings
(:func:`once`) and what every session draws (:func:`view`); the recommended points checked on the model (the
effectiveness every page's headline reads) are a check of :mod:`tcrex.ui.state.checks`, one per fit and model.

Shared objects are read-only:

* numpy arrays reachable from them are flagged ``writeable=False`` (:func:`freeze`);
* data frames are handed out as shallow copies (``frame.copy(deep=False)``): with pandas' copy-on-write a
  session that writes to its copy gets its own columns and the shared frame does not change;
* the shared explainer is a :class:`SharedTCREx`: ``fit``, ``update`` and attribute assignment raise
  :class:`SharedObjectError`; ``copy.deepcopy`` gives a plain, writable :class:`tcrex.TCREx` (what
  :func:`tcrex.ui.state.active.explainer_result` does before ``update``).
"""

from __future__ import annotations

import copy
import threading
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from tcrex import TCREx

from . import caching
from . import sources
from .sources import DataSpec


class SharedObjectError(TypeError):
    """A session tried to change an object that every session shares."""


class SharedTCREx(TCREx):
    """A fitted explainer shared by every session: reading works, changing raises :class:`SharedObjectError`."""

    def __setattr__(self, name, value):
        raise SharedObjectError(f"this explainer is shared by every session and read-only (tried to set {name!r}); "
                                "work on copy.deepcopy(explainer)")

    def __delattr__(self, name):
        raise SharedObjectError("this explainer is shared by every session and read-only")

    def fit(self, *args, **kwargs):
        raise SharedObjectError("this explainer is shared by every session; fit a copy.deepcopy(explainer)")

    def update(self, *args, **kwargs):
        raise SharedObjectError("this explainer is shared by every session; update a copy.deepcopy(explainer)")

    def set_params(self, **params):
        raise SharedObjectError("this explainer is shared by every session and read-only")

    def __deepcopy__(self, memo):
        new = TCREx.__new__(TCREx)
        memo[id(self)] = new
        state = copy.deepcopy(self.__dict__, memo)
        new.__dict__.update(state)
        thaw(new)
        return new

    def __reduce_ex__(self, protocol):  # pickles (and st.cache_data) see a plain TCREx
        return copy.deepcopy(self).__reduce_ex__(protocol)


def freeze(obj: Any, _seen: set | None = None, _depth: int = 0) -> Any:
    """Flag every numpy array reachable from ``obj`` (attributes, containers) read-only; returns ``obj``."""
    return _each_array(obj, _freeze_array, _seen, _depth)


def _freeze_array(a: np.ndarray) -> None:
    if a.dtype != object:
        a.flags.writeable = False


def _thaw_array(a: np.ndarray) -> None:
    if not a.flags.writeable and a.flags.owndata:
        a.flags.writeable = True


def thaw(obj: Any, _seen: set | None = None, _depth: int = 0) -> Any:
    """Make the arrays of a private deep copy writable again (copies of read-only arrays stay read-only)."""
    return _each_array(obj, _thaw_array, _seen, _depth)


def _each_array(obj: Any, apply, seen: set | None, depth: int) -> Any:
    """Call ``apply`` on every NumPy array reachable from ``obj`` through dicts, sequences and tcrex objects
    (frames are skipped: they are handed out as shallow copies, copy-on-write, see the module doc)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 12:
        return obj
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        apply(obj)
        return obj
    if isinstance(obj, (pd.DataFrame, pd.Series, pd.Index, str, bytes, int, float, bool, type(None))):
        return obj
    if isinstance(obj, dict):
        children = obj.values()
    elif isinstance(obj, (list, tuple, set, frozenset)):
        children = obj
    elif hasattr(obj, "__dict__") and type(obj).__module__.startswith("tcrex"):
        children = vars(obj).values()
    else:
        return obj
    for v in children:
        _each_array(v, apply, seen, depth + 1)
    return obj


def share_explainer(ex: TCREx) -> SharedTCREx:
    """Turn a fitted explainer into the read-only shared one (in place; the caller must not keep ``ex``)."""
    freeze(ex)
    ex.__class__ = SharedTCREx
    return ex  # type: ignore[return-value]


# ============================================================================================ what is shared
def is_shared_data(spec) -> bool:
    """Whether a data choice is a bundled sample as bundled (the same for every session)."""
    name = getattr(spec, "name", None)
    return getattr(spec, "kind", None) == "sample" and replace(spec, label=None, categorical=None) == DataSpec(
        "sample", name)


def is_shared_model(spec) -> bool:
    """Models that are the same for every session on a bundled sample: the bundled one and in-app training."""
    return getattr(spec, "kind", None) in ("bundled", "train")


def is_shared_workspace(ws) -> bool:
    return is_shared_data(ws.data.spec) and is_shared_model(ws.model.spec)


# ============================================================================================ data and models
_lock = threading.Lock()


@st.cache_resource(show_spinner="Loading the sample data ...", max_entries=caching.SHARED_SAMPLES)
def _sample_data(name: str):
    frame, label, categorical = sources.load_sample_frame(name)
    spec = sources.DataSpec("sample", name, label=label, categorical=categorical)
    data = sources.describe_sample(sources.prepare_frame(frame, spec, categorical), name)
    data = replace(data, frame=data.frame.copy())  # one private copy; handed out as shallow copies
    freeze(data)
    return data


def sample_data(name: str, spec=None):
    """The bundled sample ``name`` as :class:`ActiveData` (computed once per server; the frame is a shallow
    copy, so writing to it never reaches another session)."""
    data = _sample_data(name)
    return replace(data, frame=data.frame.copy(deep=False), notes=list(data.notes),
                   spec=data.spec if spec is None else replace(spec, label=data.spec.label,
                                                               categorical=data.spec.categorical))


@st.cache_resource(show_spinner="Loading the model ...", max_entries=caching.SHARED_MODELS)
def _model(data_key: str, kind: str, name: str, _data):
    model = sources.bundled_model(_data) if kind == "bundled" else sources.trained_model(_data, name)
    freeze(model)
    return model


def model(data, spec):
    """The bundled model, or the model trained in the app on a bundled sample (trained once per server)."""
    return _model(data.key, spec.kind, spec.name, data)


# ============================================================================================ fits
@st.cache_resource(show_spinner="Fitting the T-CREx explainer (shared by every session) ...",
                   max_entries=caching.SHARED_FITS)
def _fit(key: str, _ws, _params, _build):
    result = _build(_ws, _params, key)
    result.actions(_ws)  # computed once, so no session ever sets the shared result's actions
    share_explainer(result.explainer)
    return result


def fit_result(ws, p, key: str, build):
    """The fit result for a bundled sample and a shared model (one per server and parameter set);
    ``build(ws, p, key)`` makes it the first time (the caller's own fit, so this module needs no import of
    ``tcrex.ui.state.active``).

    The explainer is a read-only :class:`SharedTCREx`; the frames are shallow copies per call."""
    shared = _fit(key, ws, p, build)
    out = copy.copy(shared)
    out.explanations = shared.explanations.copy(deep=False)
    if shared.feature_actions is not None:  # computed before the fit was shared: other sessions read it too
        out.feature_actions = shared.feature_actions.copy(deep=False)
    return out


def lookup(ws, p, fkey: str, *, default, build):
    """The shared fit to start from for ``p`` on ``ws``, or ``None`` when this session must fit its own.

    Shared: a bundled sample with its bundled model or a model trained in the app, and the default surrogate
    parameters (rho, trees, grid cell limit, grower) of ``default``.  Its tau, target and constraints are the
    defaults (the target: the data's favourable outcome); a session that changes them derives a private copy with ``TCREx.update`` (never refitting).
    ``build(ws, params, key)`` fits the shared result the first time."""
    if not is_shared_workspace(ws):
        return None
    base = replace(p, tau=default.tau, target=default.target, constraints=())
    if base != default:
        return None
    key = sources.sha256(fkey, base.tau, repr(base.target), base.constraints)
    return fit_result(ws, base, key, build)


# ============================================================================================ derived once
#: Values derived from shared fits (audits) and the model's outputs on a sample that the server keeps (:data:`caching.SHARED_VALUES`).
_values = caching.LRU(caching.SHARED_VALUES)
_value_locks: dict = {}


def is_shared_result(result) -> bool:
    """Whether a fit result is the one every session shares (its explainer is a :class:`SharedTCREx`)."""
    return isinstance(getattr(result, "explainer", None), SharedTCREx)


def once(result, name: str, key, build):
    """``build()`` computed once per server for a shared fit ``result`` and ``(name, key)``, else ``build()``.

    For the bundled sample every session would otherwise redo the same work on every page run: the default audit
    (seconds). The value is frozen (:func:`freeze`) and must be treated as read-only; concurrent sessions asking
    for the same value wait for the one computing it. At most :data:`tcrex.ui.state.caching.SHARED_VALUES` values are kept."""
    if not is_shared_result(result):
        return build()
    return _once((result.key, name, key), build)


#: Views of shared fits that every session draws the same (figures, the metarule tree, one row's explanation), in a
#: cache of their own (:data:`caching.SHARED_VIEWS`): many of them never push a verified check out of :data:`_values`.
_views = caching.LRU(caching.SHARED_VIEWS)


def view(result, name: str, key, build):
    """:func:`once` for what a page draws of a shared fit ``result`` (a figure, the tree outline, one row's
    explanation): built once per server and handed to every session as it is (frozen, read-only; drawing only reads
    it). Eight sessions opening a page at once built the same figures eight times, one after the other on the one
    interpreter. A private fit gets ``build()``."""
    if not is_shared_result(result):
        return build()
    return _once((result.key, name, key), build, _views)


def has_value(result, name: str, key) -> bool:
    """Whether :func:`once` already holds the value for this shared fit and ``(name, key)``."""
    with _lock:
        return (result.key, name, key) in _values


def model_outputs(data, model, build):
    """The model's outputs on the data (``build()``), once per server for a bundled sample with a shared model
    (every new session asked the model again: 0.5-0.8 s of its first page), else ``build()``."""
    if not (is_shared_data(data.spec) and is_shared_model(model.spec)):
        return build()
    return _once((data.key, model.key, "outputs"), build)


def model_view(data, model, name: str, key, build):
    """:func:`view` for what follows from the data and the model alone (the model's performance on the sample):
    once per server for a bundled sample with a shared model, else ``build()``."""
    if not (is_shared_data(data.spec) and is_shared_model(model.spec)):
        return build()
    return _once((data.key, model.key, name, key), build, _views)


def _once(full: tuple, build, values: caching.LRU | None = None):
    values = _values if values is None else values
    with _lock:
        if full in values:
            return values.lookup(full)
        gate = _value_locks.setdefault(full, threading.Lock())
    with gate:  # one session computes; the others wait for it instead of computing the same value
        with _lock:
            if full in values:
                return values[full]
        try:
            value = freeze(build())
            with _lock:
                values.put(full, value)
        finally:  # a failed build leaves no gate behind: the next session asking computes it
            with _lock:
                _value_locks.pop(full, None)
    return value
