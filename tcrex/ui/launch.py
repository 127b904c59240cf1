"""Start the dashboard: ``python -m tcrex.ui.launch [streamlit run options]`` (what ``make run`` does).

It is ``streamlit run <repo>/app.py [options]``, run in this process through Streamlit's own CLI, with one thing
set first: Streamlit is told that ``app.py`` is an ``st.navigation`` app.

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
import os
import sys
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app.py"


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
    import importlib

    # engine and libraries only: the tcrex.ui modules declare Streamlit caches, which want the server's runtime
    for name in ("tcrex", "tcrex.figures", "tcrex.intake", "tcrex.audit", "tcrex.report", "xgboost",
                 "plotly.graph_objects", "plotly.io"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the app reports its own import errors with context
            pass
    try:  # plotly loads a template and its validators on the first figure (0.3-0.6 s): do it before health too
        import pandas as pd

        from tcrex.figures import change_keep_bars

        change_keep_bars(pd.DataFrame({"warm-up": ["change", "keep"]})).to_json()
    except Exception:  # noqa: BLE001 - only a warm-up
        pass


def main(argv: list[str] | None = None) -> None:
    _limit_malloc_arenas()
    _preload()
    try:  # what `st.navigation` in app.py sets on the first run anyway; set it before that run
        from streamlit.runtime.pages_manager import PagesManager

        if hasattr(PagesManager, "uses_pages_directory"):  # a future Streamlit without it just starts
            PagesManager.uses_pages_directory = False
    except ImportError:
        pass
    from streamlit.web import cli

    args = ["run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    sys.argv = ["streamlit", *args]  # as if started as `streamlit run app.py ...`
    cli.main(args=args, prog_name="streamlit")


if __name__ == "__main__":
    main()
