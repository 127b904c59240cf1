"""What the dashboard caches, where, and how much: the one place that says it.

Two kinds of place, chosen by whether a value may differ between sessions:

**Server-wide, keyed on content** -- the same for every session, computed once per server process, read-only
(:mod:`tcrex.ui.state.shared` freezes what it hands out):

=====================================  =======================================  ===========================
what                                   where                                    entries (least recently
                                                                                used out first)
=====================================  =======================================  ===========================
bundled sample as ``ActiveData``       ``shared._sample_data`` (cache_resource)  :data:`SHARED_SAMPLES`
bundled / in-app model on a sample     ``shared._model`` (cache_resource)        :data:`SHARED_MODELS`
fits on a sample with default          ``shared._fit`` (cache_resource)          :data:`SHARED_FITS`
surrogate parameters
the background checks of advice on     ``checks.REGISTRY`` (an :class:`LRU` of    :data:`CHECKS`
the model (every row's verified point  :class:`~tcrex.ui.state.checks.Check`
and its effectiveness), of shared and  records, keyed on the fit's content and
private fits alike                     the model)
values derived from a shared fit       ``shared.once`` (an :class:`LRU`)          :data:`SHARED_VALUES`
(audits), the model's outputs on a
sample
what every session draws of a shared   ``shared.view`` (an :class:`LRU`)          :data:`SHARED_VIEWS`
fit (figures, the tree, a row's
explanation), the model's performance
a sample read with other choices       ``active._sample`` (cache_data)           :data:`SAMPLE_FRAMES`
an upload parsed, by its SHA-256       ``active.parse_upload`` (cache_data)      :data:`PARSED_UPLOADS`
a parsed table prepared for a choice   ``active._prepared`` (cache_data)         :data:`PREPARED_DATA`
=====================================  =======================================  ===========================

The upload caches are cleared when a session that uploaded is released (:mod:`tcrex.ui.state.memory`).

**Per session** -- anything built from an upload or from parameters the user changed:

* models: ``st.cache_resource(scope="session")`` in :mod:`tcrex.ui.state.active` (trained :data:`TRAINED_MODELS`,
  uploaded :data:`UPLOADED_MODELS`, bundled on other data :data:`BUNDLED_MODELS`); Streamlit drops them when the
  browser disconnects;
* everything else: named :class:`LRU` caches in the session state (:data:`tcrex.ui.state.session.CACHES`), reached
  through :func:`session_lru`, sized by :data:`SESSION_LRU_SIZES`; the memory budget
  (:func:`tcrex.ui.state.memory.enforce_budget`) evicts from them too, oldest first;
* the kept uploads per slot (:data:`KEPT_UPLOADS`, an :class:`LRU` that never evicts the active upload);
* per fit: a :class:`~tcrex.ui.state.active.FitResult` holds what is derived from one fit in typed fields (every
  row's feature actions, the metarule trees drawn); it lives and dies with its fit in the ``"results"`` LRU, and a
  shared fit's are computed before it is shared. Its check on the model is not kept with it but in
  ``checks.REGISTRY`` (above): one record per fit content and model for the whole server.

**Per object** -- :func:`derived`: what is built from one object (the audit's figures from an audit result, which
may be shared by every session) is kept until that object is collected.

Every hand-made least-recently-used store is an :class:`LRU`.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Collection, Hashable

from . import session

# --------------------------------------------------------------------------------------------- server-wide
SHARED_SAMPLES = 8
SHARED_MODELS = 8
SHARED_FITS = 8
SHARED_VALUES = 32
#: Background checks held (:data:`tcrex.ui.state.checks.REGISTRY`): each holds up to ``verification.MAX_VERIFY_ROWS``
#: checked points.
CHECKS = 32
#: Kept apart from :data:`SHARED_VALUES`, so that the many small views never push out a value that took seconds.
SHARED_VIEWS = 64
SAMPLE_FRAMES = 8
PARSED_UPLOADS = 4
PREPARED_DATA = 8

# --------------------------------------------------------------------------------------------- per session
TRAINED_MODELS = 6
UPLOADED_MODELS = 4
BUNDLED_MODELS = 4
#: Uploads kept per slot besides the active one (a new upload is reviewed while the active data stays usable).
KEPT_UPLOADS = 3
#: Entries of each named session LRU: ``results`` (fit results per parameter set), ``bases`` (grown surrogates per
#: data, model and surrogate parameters: a tau, target or constraint change updates a copy), ``outputs`` (the
#: model's outputs per data and model), ``performance`` (model performance per favourable class), ``audits``,
#: ``comparisons`` and ``model_b`` (the Compare page's second model).
SESSION_LRU_SIZES = {"results": 6, "bases": 3, "outputs": 3, "performance": 3, "audits": 6, "comparisons": 4,
                     "model_b": 3, "grid_previews": 8, "monitor_models": 2,
                     "dictionary_suggestions": 3}


class LRU(OrderedDict):
    """A dict that keeps its ``max_entries`` most recently used entries, oldest first in iteration order.

    Reads through :meth:`lookup` or :meth:`get_or_build` count as a use; plain ``lru[key]`` does not (the memory
    accounting reads entries without refreshing them).

    Safe to share between threads: a session's page run, the builder of its download (on a thread of Streamlit's)
    and the memory accounting reach the same LRU at once, and the server-wide one (:mod:`tcrex.ui.state.shared`) is
    reached by every session. Its own methods hold a lock; :meth:`keys_oldest_first` is the way to walk it (a
    ``for`` loop over it can meet another thread's change). ``build`` runs outside the lock."""

    def __init__(self, max_entries: int = 4, *args, **kwargs):
        self._lock = threading.RLock()
        super().__init__(*args, **kwargs)
        self.max_entries = max_entries

    def __reduce__(self):
        return type(self), (self.max_entries, self.items_oldest_first())

    def keys_oldest_first(self) -> list:
        with self._lock:
            return list(OrderedDict.keys(self))

    def items_oldest_first(self) -> list:
        with self._lock:
            return list(OrderedDict.items(self))

    def lookup(self, key: Hashable, default: Any = None) -> Any:
        """The value for ``key`` (now the most recently used), or ``default``."""
        with self._lock:
            if key not in self:
                return default
            self.move_to_end(key)
            return self[key]

    def put(self, key: Hashable, value: Any, keep: Collection = ()) -> Any:
        """Store ``value`` as the most recently used entry, then evict the oldest beyond ``max_entries`` (never
        ``key`` or an entry in ``keep``). Returns ``value``."""
        with self._lock:
            self[key] = value
            self.move_to_end(key)
            spare = {key, *keep}
            for old in [k for k in OrderedDict.keys(self) if k not in spare][: max(0, len(self) - self.max_entries)]:
                del self[old]
        return value

    def discard(self, key: Hashable) -> Any:
        """Remove ``key``; its value, or None when it is not (or no longer) there."""
        with self._lock:
            return self.pop(key, None)

    def get_or_build(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The value for ``key``, built (and stored) on a miss (two threads missing at once may both build; the
        last one stored is kept)."""
        missing = object()
        found = self.lookup(key, missing)
        if found is not missing:
            return found
        return self.put(key, build())


def session_lru(name: str, state=None) -> LRU:
    """The session's LRU called ``name`` (sized by :data:`SESSION_LRU_SIZES`), created empty on first use."""
    caches = session.caches(state)
    lru = caches.get(name)
    if not isinstance(lru, LRU):
        lru = caches[name] = LRU(SESSION_LRU_SIZES[name], lru or {})
    return lru


def cached(name: str, key: Hashable, build: Callable[[], Any]) -> Any:
    """``build()`` once per session and ``key`` in the session LRU ``name``."""
    return session_lru(name).get_or_build(key, build)


_derived: dict[int, tuple[weakref.ref, dict]] = {}
_derived_lock = threading.Lock()


def derived(owner: Any, key: Hashable, build: Callable[[], Any]) -> Any:
    """``build()`` once per ``owner`` object and ``key``, kept until ``owner`` is garbage collected (an owner that
    cannot be weakly referenced gets ``build()`` every time). The value is shared: treat it as read-only."""
    with _derived_lock:
        entry = _derived.get(id(owner))
        if entry is not None and entry[0]() is owner and key in entry[1]:
            return entry[1][key]
    value = build()
    try:
        ref = weakref.ref(owner)
    except TypeError:  # not weakly referenceable: nothing to keep
        return value
    with _derived_lock:
        entry = _derived.get(id(owner))
        if entry is None or entry[0]() is not owner:
            entry = _derived[id(owner)] = (ref, {})
            weakref.finalize(owner, _forget, id(owner), ref)
        entry[1][key] = value
    return value


def _forget(ident: int, ref: weakref.ref) -> None:
    with _derived_lock:
        if ident in _derived and _derived[ident][0] is ref:
            del _derived[ident]
