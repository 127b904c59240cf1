"""The sandbox worker: loads one uploaded model and answers prediction requests (runs in a child process).

Requests come from the app (trusted) as pickled tuples; answers go back as JSON headers and raw array bytes
(:mod:`._wire`), so the app never unpickles anything the model could have influenced.
"""
from __future__ import annotations

import json
import os

FAULT_ENV = "TCREX_SANDBOX_FAULT"  # tests only: "segv", "hang" or "memory" when predicting, "load-memory" loading


def _plain(v):
    item = getattr(v, "item", None)
    return item() if callable(item) else str(v)


#: Libraries each format needs, imported before the memory limit is set (see :func:`_preload`).
_FORMAT_MODULES = {"onnx": ("onnx", "onnxruntime"), "xgboost-json": ("xgboost",), "xgboost-ubj": ("xgboost",),
                   "sklearn": ("sklearn.ensemble", "skops.io"), "pickle": ("joblib", "sklearn.ensemble"),
                   "lightgbm-text": ("lightgbm",), "lightgbm-json": ("lightgbm",), "catboost-cbm": ("catboost",),
                   "catboost-json": ("catboost",)}


#: Libraries a format's library imports only for features the worker never uses, kept out while it is imported:
#: XGBoost imports scikit-learn (~0.9 s of CPU, most of a started worker's imports) only to define its
#: scikit-learn wrappers; the worker calls the bare ``Booster``.
_NOT_NEEDED = {"xgboost": ("sklearn",), "lightgbm": ("sklearn",)}


def _preload(fmt: str | None) -> None:
    """Import the libraries the file's format needs before the memory limit applies. RLIMIT_AS counts address
    space, and importing them reserves far more than they use (pyarrow's allocator and OpenBLAS's buffers ~1.6 GB
    for ``tcrex.intake`` alone, ONNX Runtime another 60 MB): set first, a 1.5 GB limit made every ONNX upload fail
    with "failed to map segment" at ``import onnx``. Importing runs no code from the file. ``fmt`` is the format the
    app detected (``load_model`` passes it with the loader's options)."""
    import importlib
    import sys

    for name in _FORMAT_MODULES.get(fmt or "", ()):
        # a module set to None in sys.modules cannot be imported: the library takes its "not installed" path
        blocked = [m for m in _NOT_NEEDED.get(name, ()) if m not in sys.modules]
        sys.modules.update(dict.fromkeys(blocked))
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the loader reports a missing library in its own words
            pass
        finally:
            for m in blocked:
                sys.modules.pop(m, None)


def _threads_not_processes() -> None:
    """Make threads joblib's default backend in this worker (when the format's libraries loaded joblib): a model's
    ``n_jobs`` (a ColumnTransformer's, set to the worker's share of the cores by the loader) then runs in this
    process's threads. Its default, loky, starts processes that escape this worker's memory limit, and the
    semaphores and memmapping folders they share were reported as "leaked" by loky's resource tracker on the
    user's terminal when the worker ended."""
    import sys

    if "joblib" not in sys.modules:
        return
    from joblib.parallel import ThreadingBackend, register_parallel_backend
    register_parallel_backend("threading", ThreadingBackend, make_default=True)


def import_on_demand(*packages) -> None:
    """Give packages that the worker's boot registered without running their ``__init__`` (``_sandbox._BOOT``)
    their names when first asked for: a name the ``__init__`` imports from one of the package's own modules
    (``from ._data import as_frame``) imports that module only; a submodule is imported as usual; any other name
    runs the whole ``__init__`` once. So ``from .. import as_frame`` in the intake costs pandas, not the engine's
    explainer and scikit-learn, while every name still means what it means in the app."""
    import sys

    for package in packages:
        parent, _, child = package.__name__.rpartition(".")
        if parent in sys.modules:
            setattr(sys.modules[parent], child, package)
        package.__getattr__ = _on_demand(package)


def _on_demand(package):
    import ast
    import importlib
    from importlib.machinery import PathFinder

    with open(package.__spec__.origin, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    sources = {alias.asname or alias.name: (node.module, alias.name) for node in tree.body
               if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module for alias in node.names}
    ran = []

    def __getattr__(name: str):
        if PathFinder.find_spec(name, package.__path__) is not None:
            raise AttributeError(name)  # a submodule: the import system then imports it
        if name in sources:
            module, attr = sources[name]
            value = getattr(importlib.import_module(f"{package.__name__}.{module}"), attr)
        elif not ran:
            ran.append(True)
            package.__spec__.loader.exec_module(package)
            return getattr(package, name)
        else:
            raise AttributeError(f"module {package.__name__!r} has no attribute {name!r}")
        setattr(package, name, value)
        return value
    return __getattr__


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


#: Address space the libraries reserve while loading beyond what the model needs: thread stacks and allocator arenas
#: (ONNX Runtime's session ~140 MB, XGBoost's threads ~50 MB, measured on the bundled models).
LOAD_HEADROOM = 256 * 2**20


def load_limit(n_bytes: int, memory_bytes: int) -> int:
    """Address space loading a file of ``n_bytes`` may add: its memory budget (``_base.memory_budget``, the larger
    of 128 MB and 50 x its size) plus :data:`LOAD_HEADROOM`, at most ``memory_bytes``. A file's sizes are checked
    against the budget where it declares them; this limit bounds what it does not declare (a small JSON parsed into
    a large document, a library's own buffers)."""
    from ._base import memory_budget

    return min(int(memory_bytes), memory_budget(n_bytes) + LOAD_HEADROOM)


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


def _inject_fault(loading: bool = False) -> None:
    fault = os.environ.get(FAULT_ENV, "")
    if loading:
        fault = "memory" if fault == "load-memory" else ""
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


def _send_error(conn, exc: BaseException, memory: bool = False, loading: tuple[int, int] | None = None) -> None:
    """Send ``exc`` to the app as a JSON answer. ``loading``: (file bytes, load limit) while loading, so that a memory
    fault names the file's budget instead of the worker's full limit."""
    from ..errors import TCRExError
    from ._base import _size, budget_words, memory_budget, short_error

    # a loader's own "needs more memory" ModelError keeps the MemoryError it replaced as its context
    ran_out = isinstance(exc, MemoryError) or isinstance(exc.__context__, MemoryError)
    if memory or ran_out or _out_of_memory(str(exc)):
        kind, msg = "memory", ""
        if loading is not None:
            n_bytes, limit = loading
            budget = memory_budget(n_bytes)
            msg = (f"loading the model needed more than {_size(limit)} of memory, the limit for this file: "
                   f"{budget_words(n_bytes, budget)} plus {_size(LOAD_HEADROOM)} for the model libraries, at most "
                   "the sandbox's limit (TCREX_SANDBOX_MEMORY_GB). The file builds far more than it holds; upload the "
                   "model as saved by its library")
    elif isinstance(exc, TCRExError):
        kind, msg = type(exc).__name__, str(exc)
    else:
        kind, msg = "error", f"{type(exc).__name__}: {short_error(exc)}"
    conn.send_bytes(json.dumps({"ok": False, "kind": kind, "message": msg}).encode())


def prepare(fmt: str | None) -> None:
    """A worker started ahead of its model (``_spawn.start_model_worker``): import what loading a file of format
    ``fmt`` needs (the format's reader and libraries, as loading it would after the request) while the app gets
    ready; None: nothing (the request comes at once)."""
    if not fmt:
        return
    # the format's reader (and with it pandas and the intake's base), which loading the file imports
    if fmt.startswith("xgboost"):
        from . import _xgboost  # noqa: F401
    elif fmt == "onnx":
        from . import _onnx  # noqa: F401
    elif fmt == "sklearn":
        from . import _sklearn  # noqa: F401
    elif fmt.startswith("lightgbm"):
        from . import _lightgbm  # noqa: F401
    elif fmt.startswith("catboost"):
        from . import _catboost  # noqa: F401
    _preload(fmt)


def leave() -> None:
    """End the worker program once :func:`serve` has returned: at once (nothing of the model's can be left to
    clean up; the app waits for this process to end, and an interpreter's shutdown with XGBoost, numpy and pandas
    loaded took 0.05-1.4 s, most of a command's time after its last row) unless joblib is loaded, whose process
    pools are shut down cleanly by the interpreter (see ``_sandbox._kill``)."""
    import sys

    if "joblib" in sys.modules:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(0)


def serve(conn, env: dict | None = None) -> None:
    """The worker process's entry (started by :class:`._sandbox._Worker` as a program, or forked from the fork
    server with the app's ``TCREX_*`` settings in ``env``): read the loader and the file from the app, watch that
    the app is alive, then :func:`main`. A worker started ahead of its model whose app never sent one ends here."""
    try:
        request = conn.recv()  # from the app (trusted), before any model code
    except (EOFError, OSError):
        return
    loader, data, filename, options, memory_bytes = request
    _exit_with_parent()
    main(conn, loader, data, filename, options, memory_bytes, env)


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


def main(conn, loader, data: bytes, filename: str, options: dict, memory_bytes: int | None,
         env: dict | None = None) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if env is not None:  # the app's TCREX_* settings now (a forked worker inherits the fork server's, older ones)
        for key in [k for k in os.environ if k.startswith("TCREX_")]:
            if key not in env:
                del os.environ[key]
        os.environ.update(env)
    _preload(options.get("fmt"))
    _threads_not_processes()
    # the model may use ``memory_bytes`` beyond what the libraries have mapped (docs/security.md); while loading, only
    # the file's own budget (``load_limit``), raised to the full limit for predictions once it has loaded
    mapped = address_space()
    loading = (len(data), load_limit(len(data), memory_bytes)) if memory_bytes else None
    _set_limits(mapped + loading[1] if loading else memory_bytes)
    try:
        from ._wire import encode

        _inject_fault(loading=True)
        model = loader(data, filename, **options)
        meta = {"kind": model.kind, "task": model.task, "feature_names": model.feature_names,
                "n_features": model.n_features, "classes": model.classes, "categories": model.categories,
                "feature_kinds": model.feature_kinds, "description": model.description,
                "warnings": model.warnings, "has_proba": callable(getattr(model, "predict_proba", None))}
        answer = json.dumps({"ok": True, "meta": meta}, default=_plain).encode()
    except BaseException as exc:  # noqa: BLE001 - every failure becomes a message
        _send_error(conn, exc, loading=loading)
        return
    del data
    if memory_bytes:
        _set_limits(mapped + memory_bytes)  # soft limit raised back (the hard limit never changed)
    conn.send_bytes(answer)  # after the limit is raised: a prediction sent at once gets the full limit
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
