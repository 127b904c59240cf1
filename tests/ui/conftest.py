"""Tests here that run the dashboard script in Streamlit's AppTest (seconds each: every run executes app.py and the
page) are marked ``apptest``: ``make test`` runs them, ``make test-fast`` leaves them out. A module counts as an
AppTest module when it uses ``AppTest`` or the shared ``apptest_kit`` helpers."""
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_USES_APPTEST: dict[Path, bool] = {}


def _uses_apptest(path: Path) -> bool:
    if path not in _USES_APPTEST:
        text = path.read_text(encoding="utf-8")
        _USES_APPTEST[path] = "AppTest" in text or "apptest_kit" in text
    return _USES_APPTEST[path]


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.fspath)).resolve()
        if _HERE in path.parents and _uses_apptest(path):
            item.add_marker(pytest.mark.apptest)
