"""Where the dashboard's files are: a source checkout, or the copy a wheel ships inside the package.

A checkout keeps ``app.py``, ``pages/``, ``assets/``, ``sample_data/`` and ``.streamlit/`` at the repository root,
beside ``tcrex/``. A wheel (``pip install 'tcrex[app]'``) carries the same files, with the same relative layout,
in ``tcrex/_app/`` (copied there at build time by ``setup.py``; the checkout never holds that folder), so
``app.py`` finds its pages, logo and the bundled sample the same way in both. Used by :mod:`tcrex.datasets` (the
sample) and :mod:`tcrex.ui.launch` (``app.py``).
"""
from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
CHECKOUT_DIR = PACKAGE_DIR.parent
BUNDLE_DIR = PACKAGE_DIR / "_app"  # what a wheel ships (see setup.py: BUNDLED)


def app_root() -> Path:
    """The folder holding ``app.py``, ``pages/``, ``assets/``, ``sample_data/`` and ``.streamlit/``: the source
    checkout when ``tcrex`` is imported from one (an editable install included), else the wheel's bundle."""
    if (CHECKOUT_DIR / "app.py").is_file() and (CHECKOUT_DIR / "pages" / "views").is_dir():
        return CHECKOUT_DIR
    if (BUNDLE_DIR / "app.py").is_file():
        return BUNDLE_DIR
    return CHECKOUT_DIR  # neither: whoever opens a file there reports it by its full path
