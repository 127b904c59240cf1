"""Starting the model sandbox's worker program (standard library only: a command can start it before it imports
pandas or the engine).

:class:`._sandbox._Worker` starts the worker as a program (a fresh interpreter) talking over a socket pair; the
program first learns this process's import path. :func:`start_model_worker` starts one such program ahead of the
model's load (``tcrex explain --model`` in one process calls it before anything else): the worker imports its
libraries while this process imports the engine, and the next worker the sandbox needs with the same settings is
that one (:func:`take_worker`), told what to load as any other. Nothing about the worker changes: it is the same
program, and it reads no model before the load request, whose libraries it imports, as always, before its memory
limit is set.
"""
from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import threading

from ..errors import ModelError

#: The model's share of the cores, set in the worker's environment (:func:`worker_env`).
THREADS_ENV = "TCREX_MODEL_THREADS"
ENV_ENABLED = "TCREX_SANDBOX"

#: What the worker process runs first: take this process's import path from the pipe (so it imports the same
#: tcrex), then serve. Only the app writes to that pipe before the worker answers, so unpickling it is safe.
#: ``tcrex`` and ``tcrex.intake`` are registered without running their ``__init__`` (which import the whole engine
#: and, through the explainer, scikit-learn: ~1 s of CPU); :func:`._worker.import_on_demand` then gives them their
#: names one module at a time, so the worker imports only what loading and calling the model needs. A second
#: argument names the format whose libraries to import at once (a worker started ahead of its model: they load
#: while it waits for the load request; the request's own format is imported again, a no-op, or in addition).
_BOOT = ("import importlib.util, sys\n"
         "from multiprocessing.connection import Connection\n"
         "conn = Connection(int(sys.argv[1]))\n"
         "sys.path[:] = conn.recv()\n"
         "for name in ('tcrex', 'tcrex.intake'):\n"
         "    sys.modules[name] = importlib.util.module_from_spec(importlib.util.find_spec(name))\n"
         "from tcrex.intake._worker import import_on_demand, serve, prepare, leave\n"
         "import_on_demand(sys.modules['tcrex'], sys.modules['tcrex.intake'])\n"
         "prepare(sys.argv[2] if len(sys.argv) > 2 else None)\n"
         "serve(conn)\n"
         "leave()\n")

#: Formats a worker started ahead of its model prepares for, by the file's extension (a wrong guess costs only time:
#: the load request's own format is imported then).
_FORMAT_BY_EXTENSION = {".json": "xgboost-json", ".ubj": "xgboost-ubj", ".onnx": "onnx", ".skops": "sklearn",
                        ".txt": "lightgbm-text", ".cbm": "catboost-cbm"}

#: Socket buffer asked for (the kernel caps it at net.core.wmem_max/rmem_max). A batch of 262,144 rows is ~13 MB
#: pickled; with the default ~200 KB buffers it crossed in ~65 write/read turns, each waiting for the other
#: process to be scheduled, which on a loaded machine adds up.
SOCKET_BUFFER = 4 * 1024 * 1024

#: The worker started ahead of its model (at most one): its connection, process, environment, import path and the
#: process that started it (a process forked from it cannot use it).
_SPARE: dict = {}
_SPARE_LOCK = threading.Lock()


def env_enabled() -> bool:
    """``TCREX_SANDBOX`` (on unless ``0``/``false``/``no``/``off``)."""
    return os.environ.get(ENV_ENABLED, "1").strip().lower() not in {"0", "false", "no", "off"}


def model_threads() -> int:
    """Threads the model may use: ``TCREX_MODEL_THREADS`` when set (the CLI sets it per pool or Dask worker so
    workers and model threads share the cores), else 1 (a dashboard serves several people on the same cores)."""
    try:
        return max(1, int(os.environ.get(THREADS_ENV, "1")))
    except ValueError:
        return 1


def worker_env(threads: int | None = None) -> dict:
    """The environment of a worker process: this one's, with the model's thread count (``OMP_NUM_THREADS``, read
    by XGBoost and scikit-learn's OpenMP code; ONNX Runtime is told the same number through ``TCREX_MODEL_THREADS``)
    set from ``threads`` or :data:`THREADS_ENV` (default 1)."""
    env = dict(os.environ)
    n = threads if threads is not None else model_threads()
    env["OMP_NUM_THREADS"] = env[THREADS_ENV] = str(max(1, int(n)))
    return env


def _python() -> str:
    exe = sys.executable or getattr(sys, "_base_executable", None)
    if not exe:
        raise ModelError("cannot start the model worker: this Python does not know its own executable "
                         "(sys.executable is empty)")
    return exe


def _widen(sock: socket.socket) -> None:
    for opt in (socket.SO_SNDBUF, socket.SO_RCVBUF):
        try:
            sock.setsockopt(socket.SOL_SOCKET, opt, SOCKET_BUFFER)
        except OSError:  # pragma: no cover - the default buffer still works, only slower
            pass


def _start(env: dict, fmt: str | None = None):
    """Start the worker program; returns its connection and ``subprocess.Popen`` once it has been sent this
    process's import path."""
    from multiprocessing.connection import Connection

    ours, theirs = socket.socketpair()
    for sock in (ours, theirs):
        _widen(sock)
    conn = Connection(ours.detach())
    fd = theirs.detach()
    try:
        popen = subprocess.Popen([_python(), "-c", _BOOT, str(fd), *([fmt] if fmt else [])], pass_fds=(fd,),
                                 close_fds=True, stdin=subprocess.DEVNULL, env=env)
    except OSError as exc:
        conn.close()
        raise ModelError(f"cannot start the model worker ({exc})") from None
    finally:
        os.close(fd)
    try:
        conn.send(list(sys.path))
    except (OSError, ValueError):  # the worker died at start-up: reported when its answer is awaited
        pass
    return conn, popen


def start_model_worker(filename: str, threads: int | None = None) -> None:
    """Start the sandbox worker for a model file named ``filename`` now, to be used by the next model this process
    loads in the sandbox with ``threads`` (the same as ``SandboxLimits(threads=...)``). It prepares the libraries of
    the format the file's extension names. Does nothing when the sandbox is off, for a format the sandbox does not
    start a worker for (a pickle, refused unless allowed), or when a worker is waiting already. A worker never used
    ends when this process does (its pipe closes)."""
    fmt = _FORMAT_BY_EXTENSION.get(os.path.splitext(str(filename))[1].lower())
    if fmt is None or not env_enabled():
        return
    with _SPARE_LOCK:
        if _SPARE:
            return
        env = worker_env(threads)
        try:
            conn, popen = _start(env, fmt)
        except ModelError:
            return  # the load starts its own worker and says what is wrong
        _SPARE.update(conn=conn, popen=popen, env=env, path=list(sys.path), pid=os.getpid())


def take_worker(threads: int | None = None):
    """The worker started ahead (:func:`start_model_worker`) when it was started by this process with the same
    environment and import path and is still running, else a new one: its connection and ``subprocess.Popen``."""
    env = worker_env(threads)
    with _SPARE_LOCK:
        spare = dict(_SPARE)
        _SPARE.clear()
    if spare:
        if (spare["pid"] == os.getpid() and spare["env"] == env and spare["path"] == list(sys.path)
                and spare["popen"].poll() is None):
            return spare["conn"], spare["popen"]
        if spare["pid"] == os.getpid():
            _drop(spare)
    return _start(env)


def _drop(spare: dict) -> None:
    """Let an unused worker go: its pipe closed, it ends by itself."""
    try:
        spare["conn"].close()
    except OSError:
        pass


@atexit.register
def _drop_unused() -> None:
    with _SPARE_LOCK:
        if _SPARE and _SPARE["pid"] == os.getpid():
            _drop(_SPARE)
        _SPARE.clear()
