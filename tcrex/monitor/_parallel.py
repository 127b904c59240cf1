"""A run's per-person work in one process or on a Dask cluster.

The people are cut into partitions; each is one task (:func:`baseline_part`, :func:`advance_part`) that rebuilds
the explainer from its JSON (:func:`tcrex.distributed.load_rules`, as every ``tcrex`` worker does), loads the model
from its file's bytes through the intake's sandbox once per process and content, and returns the partition's
per-person frame. Only that frame comes back to the caller, who aggregates (the audit and the comparison need every
person once). On Dask the rules, the reference rows and the model's bytes are sent to every worker once
(``Client.scatter(broadcast=True)``); each worker's sandbox starts a model process inside the nanny's worker, as
``tcrex explain --scheduler`` does.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict

import numpy as np
import pandas as pd

from ..distributed import load_rules
from ..errors import TCRExError
from ._errors import MonitorError
from ._people import advance_frame, baseline_frame, normalise
from ._sources import ModelSource, load_version

#: Rows per task on a cluster: a partition's frames (people, previous advice, new advice) stay a few hundred MB.
PARTITION_ROWS = 250_000

_MODELS: OrderedDict = OrderedDict()  # (sha256, pid, threads) -> loaded model, in this process
_MODELS_LOCK = threading.Lock()


def worker_model(data: bytes, filename: str, sha256: str, allow_pickle, threads):
    """The model of these bytes, loaded once per process (a Dask worker serves every partition of a run)."""
    key = (sha256, os.getpid(), threads)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = load_version(ModelSource(data, filename, {"kind": "bytes"}), allow_pickle=allow_pickle,
                                 threads=threads)
            _MODELS[key] = model
            while len(_MODELS) > 2:
                _MODELS.popitem(last=False)
    return model


def _threads_here() -> int | None:
    try:
        from distributed import get_worker  # noqa: PLC0415 - Dask is the optional extra tcrex[dask]
        return int(get_worker().state.nthreads)
    except (ImportError, ValueError, AttributeError):
        return None


def baseline_part(rules: str, reference, X, model_bytes, filename, sha256, spec, label, allow_pickle, threads=None):
    ex = load_rules(rules)
    model = worker_model(model_bytes, filename, sha256, allow_pickle, threads or _threads_here())
    return baseline_frame(ex, X, model, spec, reference, label)


def advance_part(rules: str, reference, X, previous, model_bytes, filename, sha256, spec, label, allow_pickle,
                 threads=None, same_model=False):
    ex = load_rules(rules)
    model = worker_model(model_bytes, filename, sha256, allow_pickle, threads or _threads_here())
    return advance_frame(ex, X, previous, model, spec, reference, label, same_model=same_model)


def partitions(n: int, size: int) -> list[slice]:
    return [slice(a, min(a + size, n)) for a in range(0, max(n, 1), size)] if n else [slice(0, 0)]


def run_parts(fn, shared: dict, parts: list[tuple], scheduler=None, progress=None) -> pd.DataFrame:
    """``fn(**shared, X=..., [previous=...])`` for every partition, in one process or on the Dask cluster at
    ``scheduler`` (an address or a ``distributed.Client``); the frames concatenated in partition order."""
    say = progress or (lambda msg: None)
    if scheduler is None:
        out = []
        for i, part in enumerate(parts):
            out.append(fn(**shared, **part))
            if len(parts) > 1:
                say(f"partition {i + 1}/{len(parts)} done")
        return _stitch(out)
    try:
        from distributed import Client  # noqa: PLC0415 - Dask is the optional extra tcrex[dask]
    except ImportError:
        raise MonitorError("a run on a Dask cluster needs Dask's distributed package (pip install 'tcrex[dask]')") \
            from None
    own = not hasattr(scheduler, "submit")
    try:
        client = Client(scheduler, timeout=30) if own else scheduler
    except (OSError, TimeoutError) as exc:
        raise MonitorError(f"cannot reach the Dask scheduler at {scheduler} ({exc})") from None
    try:
        big = {k: client.scatter(v, broadcast=True) for k, v in shared.items()
               if isinstance(v, (bytes, pd.DataFrame)) and v is not None}
        args = {**shared, **big}
        # each partition's frames are scattered, not embedded in the task graph (Dask warns about large graphs)
        futs = [client.submit(fn, **args, **{k: client.scatter(v) for k, v in part.items()}, pure=False)
                for part in parts]
        out = []
        try:
            for i, f in enumerate(futs):
                try:
                    out.append(f.result())
                except MonitorError:
                    raise
                except Exception as exc:  # noqa: BLE001 - a worker's failure (a refused model, a lost worker)
                    if isinstance(exc, TCRExError):
                        raise
                    raise MonitorError(f"partition {i + 1} of {len(parts)} failed on the cluster "
                                       f"({type(exc).__name__}: {exc})") from None
                say(f"partition {i + 1}/{len(parts)} done on the cluster")
        finally:
            client.cancel(futs)
        return _stitch(out)
    finally:
        if own:
            client.close()


def _stitch(frames: list) -> pd.DataFrame:
    if len(frames) == 1:
        return frames[0]
    out = pd.concat(frames)
    return normalise(out)


def slices_of(X: pd.DataFrame, previous: pd.DataFrame | None, size: int | None = None) -> list[dict]:
    """The partitions' arguments: X's rows (and the previous frame's) of each slice of ``size`` rows (default
    :data:`PARTITION_ROWS`)."""
    parts = []
    for s in partitions(len(X), int(size or PARTITION_ROWS)):
        part = {"X": X.iloc[s]}
        if previous is not None:
            part["previous"] = previous.iloc[s]
        parts.append(part)
    return parts


def ensure_order(frame: pd.DataFrame, n: int) -> pd.DataFrame:
    if not np.array_equal(frame.index.to_numpy(), np.arange(n)):
        frame = frame.sort_index()
    return frame
