"""The sandbox worker: loads one uploaded model and answers prediction requests (runs in a child process).

Requests come from the app (trusted) as pickled tuples; answers go back as JSON headers and raw array bytes
(:mod:`._wire`), so the app never unpickles anything the model could have influenced.
"""
from __future__ import annotations

import json
import os

FAULT_ENV = "TCREX_SANDBOX_FAULT"  # tests only: "segv", "hang" or "memory" when predicting


def _plain(v):
    item = getattr(v, "item", None)
    return item() if callable(item) else str(v)


#: Libraries each format needs, imported before the memory limit is set (see :func:`_preload`).
_FORMAT_MODULES = {"onnx": ("onnx", "onnxruntime"), "xgboost-json": ("xgboost",), "xgboost-ubj": ("xgboost",),
                   "sklearn": ("sklearn.ensemble", "skops.io"), "pickle": ("joblib", "sklearn.ensemble")}


def _preload(fmt: str | None) -> None:
    """Import the libraries the file's format needs before the memory limit applies. RLIMIT_AS counts address
    space, and importing them reserves far more than they use (pyarrow's allocator and OpenBLAS's buffers ~1.6 GB
    for ``tcrex.intake`` alone, ONNX Runtime another 60 MB): set first, a 1.5 GB limit made every ONNX upload fail
    with "failed to map segment" at ``import onnx``. Importing runs no code from the file. ``fmt`` is the format the
    app detected (``load_model`` passes it with the loader's options)."""
    import importlib

    for name in _FORMAT_MODULES.get(fmt or "", ()):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the loader reports a missing library in its own words
            pass


def address_space() -> int:
    """Bytes of address space this process has mapped now (0 when the system does not say)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _set_limits(memory_bytes: int | None) -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not Linux
        return
    if memory_bytes:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        new = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (new, hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _inject_fault() -> None:
    fault = os.environ.get(FAULT_ENV, "")
    if fault == "segv":
        import ctypes
        ctypes.string_at(0)  # a real native fault: read address 0
    elif fault == "hang":
        while True:
            pass
    elif fault == "memory":
        blocks = []
        while True:
            blocks.append(bytearray(256 * 1024 * 1024))


#: What native libraries say when an allocation fails (C++ ``std::bad_alloc``, ONNX Runtime's arena, glibc).
_MEMORY_WORDS = ("bad_alloc", "failed to allocate memory", "bfcarena", "cannot allocate memory", "out of memory",
                 "memoryerror", "unable to allocate")


def _out_of_memory(text: str) -> bool:
    low = text.lower()
    return any(w in low for w in _MEMORY_WORDS)


def _send_error(conn, exc: BaseException, memory: bool = False) -> None:
    from ..errors import TCRExError
    from ._base import short_error

    if memory or isinstance(exc, MemoryError) or _out_of_memory(str(exc)):
        kind, msg = "memory", ""
    elif isinstance(exc, TCRExError):
        kind, msg = type(exc).__name__, str(exc)
    else:
        kind, msg = "error", f"{type(exc).__name__}: {short_error(exc)}"
    conn.send_bytes(json.dumps({"ok": False, "kind": kind, "message": msg}).encode())


def serve(conn) -> None:
    """The worker process's entry (started by :class:`._sandbox._Worker` with :mod:`subprocess`): read the loader
    and the file from the app, watch that the app is alive, then :func:`main`."""
    loader, data, filename, options, memory_bytes = conn.recv()  # from the app (trusted), before any model code
    _exit_with_parent()
    main(conn, loader, data, filename, options, memory_bytes)


def _exit_with_parent(interval: float = 0.5) -> None:
    """End this process when the app's process ends, even while the model is busy (a hang, a long prediction):
    the closed pipe only wakes a worker waiting for a request. A started program is not killed with its parent
    as a daemonic ``multiprocessing`` child is; the parent's id changes when it dies (the orphan is re-parented)."""
    import threading
    import time

    parent = os.getppid()

    def watch():
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="tcrex-watch-parent", daemon=True).start()


def main(conn, loader, data: bytes, filename: str, options: dict, memory_bytes: int | None) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _preload(options.get("fmt"))
    # the model may use ``memory_bytes`` beyond what the libraries have mapped (docs/security.md)
    _set_limits(memory_bytes + address_space() if memory_bytes else memory_bytes)
    try:
        from ._wire import encode

        model = loader(data, filename, **options)
        meta = {"kind": model.kind, "task": model.task, "feature_names": model.feature_names,
                "n_features": model.n_features, "classes": model.classes, "categories": model.categories,
                "feature_kinds": model.feature_kinds, "description": model.description,
                "warnings": model.warnings, "has_proba": callable(getattr(model, "predict_proba", None))}
        conn.send_bytes(json.dumps({"ok": True, "meta": meta}, default=_plain).encode())
    except BaseException as exc:  # noqa: BLE001 - every failure becomes a message
        _send_error(conn, exc)
        return
    del data
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        op, X = request
        if op == "stop":
            return
        try:
            _inject_fault()
            out = model.predict(X) if op == "predict" else model.predict_proba(X)
            head, payload = encode(out)
        except BaseException as exc:  # noqa: BLE001
            _send_error(conn, exc)
            continue
        conn.send_bytes(json.dumps({"ok": True}).encode())
        conn.send_bytes(head)
        conn.send_bytes(payload)
