"""Start the dashboard: ``tcrex ui [streamlit run options]`` or ``python -m tcrex.ui.launch [...]`` (what
``make run`` does).

It is ``streamlit run <app root>/app.py [options]``, run in this process through Streamlit's own CLI, with one
thing set first: Streamlit is told that ``app.py`` is an ``st.navigation`` app. The app root is the source checkout,
or in an installed wheel the copy of ``app.py``, ``pages/``, ``assets/``, ``sample_data/`` and ``.streamlit/``
shipped inside the package (:func:`tcrex.resources.app_root`). Streamlit reads ``.streamlit/config.toml`` from the
current directory; when that has none, the launcher starts from the app root so the dashboard's own settings
(headless, upload limit, no usage statistics) apply.

Why: the repository keeps a top-level ``pages/`` folder (the page scripts live in ``pages/views/``).  When a
``pages/`` folder exists, Streamlit assumes a legacy "pages directory" app until the first ``st.navigation`` call
says otherwise, so a fresh server's first script run builds its navigation from ``pages/*.py`` (there are none),
does not find a deep-linked page such as ``/global_rules`` and shows a "Page not found" modal over the (correct)
page until it is dismissed.  Later sessions are fine.  Upstream: streamlit/streamlit#8860 and #9992.  Plain
``streamlit run app.py`` still works; it only has that spurious modal on the first deep link.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import inspect
import os
import sys
from pathlib import Path

from tcrex.resources import app_root

APP = app_root() / "app.py"


def _limit_malloc_arenas(arenas: int = 2) -> None:
    """Cap glibc's malloc arenas (as ``MALLOC_ARENA_MAX=2`` would) unless the environment already sets it.

    Why: Streamlit runs every script run on its own thread, and glibc gives threads their own arenas (up to 8 per
    core); memory freed in one arena is not reused by another, so after a round of concurrent sessions each arena
    keeps its high-water mark and ``malloc_trim`` cannot return what is still fragmented.  Measured with
    ``benchmarks/load.py`` (8 then 12 sessions, 120 s after close): +12 % / +26 % over the baseline by default,
    +3 % / +5 % with two arenas.  Set before any other thread allocates (first thing in :func:`main`).
    """
    if os.environ.get("MALLOC_ARENA_MAX"):
        return  # glibc read it at start-up
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(_M_ARENA_MAX, arenas)
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to cap
        pass


_M_ARENA_MAX = -8  # glibc's <malloc.h>


def _preload() -> None:
    """Import what the first page needs before the server answers its health check, so the first visitor does
    not wait for it (about 1.5 s on a 2-core machine: pandas, scikit-learn, XGBoost, plotly, the engine), and
    draw one throw-away plotly figure (the first figure loads plotly's template and validators)."""
    # engine and libraries only: the tcrex.ui modules declare Streamlit caches, which want the server's runtime.
    # ``import tcrex`` alone loads no engine module (its names are lazy, for a light CLI): the estimator's modules,
    # the bundled sample, the workspace store and PIL (the logo) are named here, else the first page imported them
    # (~0.3 s of its run on a loaded 2-core machine)
    for name in ("tcrex", "tcrex._engine._explainer", "tcrex.datasets", "tcrex.performance", "tcrex.workspace._store",
                 "tcrex.figures", "tcrex.intake", "tcrex.audit", "tcrex.report", "xgboost",
                 # the engine imports scikit-learn's trees on its first fit only (a light CLI): the first page fits
                 "sklearn.tree", "sklearn.ensemble",
                 "plotly.graph_objects", "plotly.io", "PIL.Image", "PIL.PngImagePlugin"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the app reports its own import errors with context
            pass
    try:  # plotly loads a template and its validators on the first figure (0.3-0.6 s): do it before health too
        import pandas as pd  # noqa: PLC0415 - imported here, before the health check, on purpose

        from tcrex.figures import change_keep_bars  # noqa: PLC0415 - likewise

        change_keep_bars(pd.DataFrame({"warm-up": ["change", "keep"]})).to_json()
    except Exception:  # noqa: BLE001 - only a warm-up
        pass
    # Streamlit's first element of the process asks whether it runs in a REPL (``inspect.stack()``), which finds
    # the source file of every module loaded so far (~0.1-0.2 s of the first page's run); done here, inspect's
    # module cache is filled before the health check and the first run only adds the modules loaded since
    try:
        importlib.import_module("streamlit.web.bootstrap")  # `streamlit run` imports the server next anyway
        inspect.stack()
    except Exception:  # noqa: BLE001 - only a warm-up
        pass


def main(argv: list[str] | None = None) -> None:
    _limit_malloc_arenas()
    # Streamlit's internals are version-gated there: an unsupported Streamlit stops here, saying which to install
    from tcrex.ui.state import st_compat  # noqa: PLC0415 - after the malloc cap, before Streamlit starts any thread

    _preload()
    st_compat.declare_navigation_app()  # what `st.navigation` in app.py sets on the first run anyway
    if not APP.is_file():
        sys.exit(f"tcrex ui: the dashboard's app.py is missing ({APP}); reinstall with pip install 'tcrex[app]'")
    if not (Path.cwd() / ".streamlit" / "config.toml").is_file():
        os.chdir(APP.parent)  # Streamlit reads .streamlit/config.toml from the current directory only
    args = ["run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    sys.argv = ["streamlit", *args]  # as if started as `streamlit run app.py ...`
    st_compat.run_cli(args)


if __name__ == "__main__":
    main()
