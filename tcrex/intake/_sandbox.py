"""Run an uploaded model in a separate worker process with a wall-clock and a memory limit.

A segfault, an endless loop or a memory bomb in a native predictor (XGBoost, ONNX Runtime, scikit-learn's
Cython) then ends the worker, not the app: the caller gets a :class:`tcrex.ModelError` ("the model crashed",
"did not answer in N s", "needed more than M GB while predicting") and the next call starts a fresh worker.
The worker is kept alive between predictions. See docs/security.md.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import sys
import threading
import types
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..errors import DataError, ModelError
from ..vocabulary import TASKS
from ._base import LoadedModel, ModelFaultError, UnsafeModelError
from ._wire import decode

ENV_ENABLED = "TCREX_SANDBOX"
ENV_MEMORY = "TCREX_SANDBOX_MEMORY_GB"
ENV_LOAD_SECONDS = "TCREX_SANDBOX_LOAD_SECONDS"
ENV_PREDICT_SECONDS = "TCREX_SANDBOX_PREDICT_SECONDS"
GB = 1024 ** 3
_START_LOCK = threading.Lock()


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass
class SandboxLimits:
    """Limits for the model worker. Defaults come from the environment when set (``TCREX_SANDBOX_*``)."""

    memory_gb: float = field(default_factory=lambda: _env_float(ENV_MEMORY, 4.0))
    load_seconds: float = field(default_factory=lambda: _env_float(ENV_LOAD_SECONDS, 60.0))
    predict_seconds: float = field(default_factory=lambda: _env_float(ENV_PREDICT_SECONDS, 120.0))


def sandbox_enabled(sandbox=None) -> bool:
    """The argument when given, else ``TCREX_SANDBOX`` (on unless ``0``/``false``/``no``/``off``)."""
    if sandbox is not None and not isinstance(sandbox, SandboxLimits):
        return bool(sandbox)
    if isinstance(sandbox, SandboxLimits):
        return True
    return os.environ.get(ENV_ENABLED, "1").strip().lower() not in {"0", "false", "no", "off"}


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


#: What the fork server imports once; every model worker is forked from it with these loaded. A worker spawned
#: from scratch imported them itself: about 2.3 s of CPU (10-14 s of wall time on a busy 2-core machine) before
#: it read a byte of the model, which made a 0.6 MB skops upload take 11.9 s.
PRELOAD = ("tcrex.intake._worker", "tcrex.intake.models", "sklearn.ensemble", "skops.io", "xgboost")
_CONTEXT = None


def _context():
    """The ``forkserver`` multiprocessing context with :data:`PRELOAD` (one fork server per app process).

    A forked worker starts from the fork server, a clean single-threaded process that only imported libraries
    (never the app's threads or state), and still gets its own memory limit and time limits. ``spawn`` is the
    fallback where there is no fork server (not POSIX)."""
    global _CONTEXT
    with _START_LOCK:
        if _CONTEXT is None:
            try:
                ctx = mp.get_context("forkserver")
                ctx.set_forkserver_preload(list(PRELOAD))
            except ValueError:  # pragma: no cover - no fork server on this platform
                ctx = mp.get_context("spawn")
            _CONTEXT = ctx
        return _CONTEXT


def warm_up() -> None:
    """Start the fork server now (it imports :data:`PRELOAD`: seconds), so the first upload does not wait for it.
    Call it from a background thread; idempotent."""
    ctx = _context()
    if ctx.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    with _START_LOCK:
        _start_fork_server(forkserver)


def _start_fork_server(forkserver) -> None:
    """Start the fork server (caller holds ``_START_LOCK``) with one thread per native library, as the spawned
    worker had (``OMP_NUM_THREADS=1`` is read when XGBoost and OpenBLAS load, which now happens in the server),
    and from a bare main module (the app's ``__main__`` is Streamlit's page script)."""
    main = sys.modules.get("__main__")
    omp = os.environ.get("OMP_NUM_THREADS")
    sys.modules["__main__"] = types.ModuleType("__main__")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        forkserver.ensure_running()
    finally:
        if omp is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = omp
        if main is not None:
            sys.modules["__main__"] = main


class _Worker:
    def __init__(self, data: bytes, filename: str, options: dict, limits: SandboxLimits, loader):
        self.limits = limits
        ctx = _context()
        if ctx.get_start_method() == "forkserver":
            from multiprocessing import forkserver

            with _START_LOCK:
                _start_fork_server(forkserver)
        self.conn, child = ctx.Pipe()
        from . import _worker
        # the fork server's environment is the one it started with: send this process's TCREX_* settings now
        env = {k: v for k, v in os.environ.items() if k.startswith("TCREX_")}
        self.proc = ctx.Process(target=_worker.main, daemon=True, name="tcrex-model-sandbox",
                                args=(child, loader, data, filename, options, int(limits.memory_gb * GB), env))
        with _START_LOCK:
            # Streamlit runs page scripts as ``__main__``; a spawned child would re-run the app script, so the
            # worker starts from a bare main module (it only needs tcrex).
            main = sys.modules.get("__main__")
            sys.modules["__main__"] = types.ModuleType("__main__")
            try:
                self.proc.start()
            finally:
                if main is not None:
                    sys.modules["__main__"] = main
        child.close()
        self._finalizer = weakref.finalize(self, _kill, self.proc, self.conn)

    def stop(self) -> None:
        self._finalizer()

    def _died(self, what: str) -> ModelError:
        self.proc.join(1)
        code = self.proc.exitcode
        self.stop()
        if code is not None and code < 0:
            return ModelFaultError(f"the model crashed while {what} ({_signal_name(code)}); the app is unaffected, "
                              "but this model cannot be used on this data")
        return ModelFaultError(f"the model worker stopped while {what} (exit code {code})")

    def receive(self, seconds: float, what: str) -> bytes:
        if not self.conn.poll(seconds):
            if not self.proc.is_alive():
                raise self._died(what)
            self.stop()
            raise ModelFaultError(f"the model did not answer in {seconds:g} s while {what}; it was stopped")
        try:
            return self.conn.recv_bytes(1 << 31)
        except (EOFError, OSError):
            raise self._died(what) from None

    def answer(self, seconds: float, what: str) -> dict:
        raw = self.receive(seconds, what)
        try:
            msg = json.loads(raw)
            assert isinstance(msg, dict)
        except (ValueError, AssertionError):
            self.stop()
            raise ModelError("the model worker sent a malformed answer") from None
        if not msg.get("ok"):
            kind, text = msg.get("kind"), str(msg.get("message", ""))[:2000]
            if kind == "memory":
                if text:  # the worker names the limit it hit (loading: the file's memory budget)
                    raise ModelFaultError(text)
                raise ModelFaultError(f"the model needed more than {self.limits.memory_gb:g} GB while {what}; use fewer "
                                 "rows or a smaller model")
            if kind == "UnsafeModelError":
                raise UnsafeModelError(text)
            if kind == "DataError":
                raise DataError(text)
            if kind in ("ModelError", "TCRExError"):
                raise ModelError(text)
            raise ModelError(f"the model failed while {what} ({text})")
        return msg


def _kill(proc, conn) -> None:
    try:
        conn.close()
    except OSError:
        pass
    if proc.is_alive():
        proc.kill()
    proc.join(5)


class SandboxedModel(LoadedModel):
    """A :class:`LoadedModel` whose file is loaded and run in a worker process (see module docstring).

    Metadata (task, feature names, classes, ...) is copied from the worker once; ``predict`` and
    ``predict_proba`` send the rows to the worker and read the outputs back as arrays. After a crash, a hang or
    a memory blow-up the worker is restarted at the next call.
    """

    def __init__(self, data: bytes, filename: str, *, loader, options: dict | None = None,
                 limits: SandboxLimits | None = None):
        # ``loader(data, filename, **options)`` loads the file in the worker: a module-level function (pickled by
        # reference for the spawned process), passed in so this module needs no import of the intake's loaders
        self._loader = loader
        self._data, self._filename = data, filename
        self._options = dict(options or {})
        self.limits = limits or SandboxLimits()
        self._lock = threading.Lock()
        self._worker = None
        meta = self._start()
        super().__init__(task=meta["task"], feature_names=meta["feature_names"], n_features=meta["n_features"],
                         classes=meta["classes"], categories=meta["categories"],
                         feature_kinds=meta["feature_kinds"], description=str(meta["description"]),
                         warnings=[str(w) for w in meta["warnings"]])
        self.kind = str(meta["kind"])
        self._has_proba = bool(meta.get("has_proba"))

    def _start(self) -> dict:
        worker = _Worker(self._data, self._filename, self._options, self.limits, self._loader)
        meta = worker.answer(self.limits.load_seconds, "loading")["meta"]
        if not isinstance(meta, dict) or meta.get("task") not in TASKS:
            worker.stop()
            raise ModelError("the model worker sent a malformed answer")
        self._worker = worker
        return meta

    def close(self) -> None:
        """Stop the worker (it is also stopped when the model is garbage-collected)."""
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def _call(self, op: str, X) -> np.ndarray:
        with self._lock:
            if self._worker is None or not self._worker.proc.is_alive():
                self._start()
            worker = self._worker
            try:
                worker.conn.send((op, X))
            except (OSError, ValueError):
                self._worker = None
                raise worker._died("predicting") from None  # noqa: SLF001 - the worker class of this module
            try:
                worker.answer(self.limits.predict_seconds, "predicting")
                head = worker.receive(self.limits.predict_seconds, "predicting")
                payload = worker.receive(self.limits.predict_seconds, "predicting")
            except ModelError:
                if not worker.proc.is_alive():
                    self._worker = None
                raise
            return decode(head, payload)

    def _predict(self, X):
        return self._call("predict", X)

    def predict_proba(self, X) -> np.ndarray:
        if not self._has_proba:
            raise ModelError(f"the {self.kind} model does not give class probabilities")
        from ._base import as_frame
        return self._call("predict_proba", self.select(as_frame(X)))

    def __getstate__(self):
        raise TypeError("a sandboxed model cannot be pickled")
