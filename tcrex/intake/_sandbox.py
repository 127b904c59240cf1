"""Run an uploaded model in a separate worker process with a wall-clock and a memory limit.

A segfault, an endless loop or a memory bomb in a native predictor (XGBoost, ONNX Runtime, scikit-learn's
Cython) then ends the worker, not the app: the caller gets a :class:`tcrex.errors.ModelError` ("the model crashed",
"did not answer in N s", "needed more than M GB while predicting") and the next call starts a fresh worker.
The worker is kept alive between predictions. See docs/security.md.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import threading
import types
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..errors import DataError, ModelError
from ..vocabulary import TASKS
from ._base import LoadedModel, ModelFaultError, UnsafeModelError
from ._spawn import ENV_ENABLED, THREADS_ENV, env_enabled, model_threads, take_worker, worker_env  # noqa: F401
from ._wire import decode

ENV_MEMORY = "TCREX_SANDBOX_MEMORY_GB"
ENV_LOAD_SECONDS = "TCREX_SANDBOX_LOAD_SECONDS"
ENV_PREDICT_SECONDS = "TCREX_SANDBOX_PREDICT_SECONDS"
ENV_THREADS = THREADS_ENV
GB = 1024 ** 3
#: Serialises starting the fork server and the workers (page scripts run in several threads).
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
    #: threads the model may use in the worker; None: ``TCREX_MODEL_THREADS``, else 1 (:func:`model_threads`)
    threads: int | None = None


def sandbox_enabled(sandbox=None) -> bool:
    """The argument when given, else ``TCREX_SANDBOX`` (on unless ``0``/``false``/``no``/``off``)."""
    if sandbox is not None and not isinstance(sandbox, SandboxLimits):
        return bool(sandbox)
    if isinstance(sandbox, SandboxLimits):
        return True
    return env_enabled()


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


#: Set by :func:`warm_up` (the dashboard): workers are then forked from the fork server instead of started as
#: programs. Batch runs (the CLI, pools, Dask) keep starting programs, which daemonic processes may do.
#: ``pid``: the process that asked; a process forked from it (a pool worker started by ``fork``) inherits this dict
#: but not the fork server, which is its parent's child (waiting on it fails with "No child processes").
_FORK_SERVER = {"wanted": False, "pid": None}


def _fork_server_wanted() -> bool:
    """Fork workers from the warm fork server: only when :func:`warm_up` asked for it, in a process that may have
    ``multiprocessing`` children (not a Dask nanny's or a pool's daemonic worker), where fork servers exist, and
    only in the process that asked (not in a child forked from it)."""
    import multiprocessing

    return (_FORK_SERVER["wanted"] and _FORK_SERVER["pid"] == os.getpid()
            and not multiprocessing.current_process().daemon
            and "forkserver" in mp.get_all_start_methods())


def warm_up() -> None:
    """Start the fork server now (it imports :data:`PRELOAD`: seconds), so the first upload does not wait for it;
    from then on this process's model workers are forked from it. Call it from a background thread; idempotent."""
    _FORK_SERVER["wanted"], _FORK_SERVER["pid"] = True, os.getpid()
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


class _Child:
    """The worker process, started with :mod:`subprocess` (see :class:`_Worker`), seen through the few methods of
    ``multiprocessing.Process`` the sandbox uses."""

    def __init__(self, popen: subprocess.Popen):
        self.popen = popen
        self.pid = popen.pid

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    @property
    def exitcode(self):
        return self.popen.poll()  # negative: the signal that ended it, as multiprocessing reports it

    def join(self, timeout=None) -> None:
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        try:
            self.popen.kill()
        except OSError:
            pass


class _Worker:
    """One worker process running one model.

    It is started with :mod:`subprocess` (a fresh interpreter, as ``multiprocessing``'s spawn would start it),
    not with ``multiprocessing``: a daemonic process — a Dask nanny's worker, a ``multiprocessing`` pool worker —
    may not have ``multiprocessing`` children, but it may start programs. The app and the worker talk over a
    socket pair wrapped in ``multiprocessing.connection.Connection`` (pickled requests from the app, JSON and raw
    array bytes back, :mod:`._wire`). The worker sets its own limits before it reads the model file
    (:func:`._worker.main`); the worker also ends itself when the app's process dies (:func:`._worker.serve`).
    """

    def __init__(self, data: bytes, filename: str, options: dict, limits: SandboxLimits, loader):
        self.limits = limits
        if _fork_server_wanted():
            # the dashboard: fork the worker from the warm fork server (libraries already imported)
            ctx = _context()
            from multiprocessing import forkserver

            with _START_LOCK:
                _start_fork_server(forkserver)
            self.conn, child = ctx.Pipe()
            from . import _worker
            # the fork server's environment is the one it started with: send this process's TCREX_* settings now
            env = {k: v for k, v in os.environ.items() if k.startswith("TCREX_")}
            self.proc = ctx.Process(target=_worker.serve, daemon=True, name="tcrex-model-sandbox",
                                    args=(child, env))
            with _START_LOCK:
                # Streamlit runs page scripts as ``__main__``; the worker starts from a bare main module
                main = sys.modules.get("__main__")
                sys.modules["__main__"] = types.ModuleType("__main__")
                try:
                    self.proc.start()
                finally:
                    if main is not None:
                        sys.modules["__main__"] = main
            child.close()
        else:
            # a program (a fresh interpreter; the one started ahead of the model when there is one, _spawn), told
            # this process's import path first
            self.conn, popen = take_worker(limits.threads)
            self.proc = _Child(popen)
        self._grace = [STOP_GRACE_SECONDS]  # read by the finalizer: 0 for a worker known to be hung or broken
        self._finalizer = weakref.finalize(self, _kill, self.proc, self.conn, self._grace)
        try:
            self.conn.send((loader, data, filename, options, int(limits.memory_gb * GB)))
        except (OSError, ValueError):  # the worker died at start-up: reported when the answer is awaited
            pass

    def stop(self, grace: bool = True) -> None:
        """Close the pipe and let the worker end (``grace``), else kill it at once (hung, or already broken)."""
        if not grace:
            self._grace[0] = 0
        self._finalizer()

    def _died(self, what: str) -> ModelError:
        self.proc.join(1)
        code = self.proc.exitcode
        self.stop(grace=False)
        if code is not None and code < 0:
            return ModelFaultError(f"the model crashed while {what} ({_signal_name(code)}); the app is unaffected, "
                              "but this model cannot be used on this data")
        return ModelFaultError(f"the model worker stopped while {what} (exit code {code})")

    def receive(self, seconds: float, what: str) -> bytes:
        if not self.conn.poll(seconds):
            if not self.proc.is_alive():
                raise self._died(what)
            self.stop(grace=False)
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
            self.stop(grace=False)
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


#: Seconds a worker is given to end by itself once its pipe is closed, before it is killed.
STOP_GRACE_SECONDS = 5.0


def _kill(proc, conn, grace) -> None:
    try:
        conn.close()
    except OSError:
        pass
    # A worker waiting for a request reads the closed pipe and returns, so its interpreter shuts down cleanly:
    # killed at once, a model that ran joblib's process pool (a ColumnTransformer with n_jobs) leaves semaphores and
    # memmapping folders behind, and loky's resource tracker prints "leaked semlock/folder objects" warnings on
    # the user's terminal. A busy or hung worker is killed once the grace period is over.
    if grace[0] > 0:
        proc.join(grace[0])
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
        return self._send(op, X)()

    def _send(self, op: str, X):
        """Send one request; returns the function that reads its answer. The worker serves one request at a
        time, so the lock is held from the send until the answer is read (the returned function releases it,
        whatever happens)."""
        self._lock.acquire()
        try:
            if self._worker is None or not self._worker.proc.is_alive():
                self._start()
            worker = self._worker
            try:
                worker.conn.send((op, X))
            except (OSError, ValueError):
                self._worker = None
                raise worker._died("predicting") from None  # noqa: SLF001 - the worker class of this module
        except BaseException:
            self._lock.release()
            raise
        done = []

        def answer() -> np.ndarray:
            if done:
                raise ModelError("internal: a prediction's answer was read twice")
            done.append(True)
            try:
                worker.answer(self.limits.predict_seconds, "predicting")
                head = worker.receive(self.limits.predict_seconds, "predicting")
                payload = worker.receive(self.limits.predict_seconds, "predicting")
            except ModelError:
                if not worker.proc.is_alive():
                    self._worker = None
                raise
            finally:
                self._lock.release()
            return decode(head, payload)
        return answer

    def _predict(self, X):
        return self._call("predict", X)

    def _predict_later(self, X):
        return self._send("predict", X)

    def predict_proba(self, X) -> np.ndarray:
        if not self._has_proba:
            raise ModelError(f"the {self.kind} model does not give class probabilities")
        from ._base import as_frame
        return self._call("predict_proba", self.select(as_frame(X)))

    def __getstate__(self):
        raise TypeError("a sandboxed model cannot be pickled")
