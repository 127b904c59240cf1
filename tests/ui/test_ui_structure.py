"""Structure of the dashboard code that the whole-tree checks do not cover.

The import rules (no private ``tcrex._*`` module or another package's private name, no import cycle, streamlit
only in the dashboard) are checked for every package, the dashboard included, by ``tests/test_structure.py``.
Here: the pages pass figure builders to ``components.chart`` by name (imported functions), not as strings; session
keys are spelled only in ``tcrex/ui/session.py`` (everything else uses its constants and accessors), and only it
touches ``st.session_state``.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "tcrex" / "ui"


def _files() -> list[Path]:
    return sorted(UI.glob("*.py")) + sorted((ROOT / "pages").rglob("*.py")) + [ROOT / "app.py"]


def test_pages_pass_figure_builders_not_names():
    bad = []
    for path in _files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
                    and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("chart", "build", "audit_chart")
                    and node.args and isinstance(node.args[0], ast.Constant)):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, "figures called by string name:\n" + "\n".join(bad)


# ============================================================================================ session state
SESSION = UI / "session.py"
#: Where a session key could be spelled: the dashboard, its entry points and its tests.
KEY_USERS = [*sorted(UI.glob("*.py")), *sorted((ROOT / "pages").rglob("*.py")), ROOT / "app.py",
             *[p for p in sorted((ROOT / "tests" / "ui").glob("*.py")) if p != Path(__file__).resolve()],
             *sorted((ROOT / "tests" / "e2e").glob("*.py"))]
#: The only module besides session.py that touches a session state object: the Streamlit internal that hands the
#: memory release another session's state.
STATE_ACCESS_ALLOWED = {"session.py", "st_compat.py"}


def declared_keys(source: str) -> dict[str, str]:
    """``{key: constant name}`` of the string constants session.py declares at module level."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            targets = node.targets[0].elts if isinstance(node.targets[0], ast.Tuple) else node.targets
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for target, value in zip(targets, values):
                if isinstance(target, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out[value.value] = target.id
    return out


def _is_session_state(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "session_state"


def session_key_literals(sources: dict[str, str], keys: dict[str, str]) -> list[str]:
    """Literal session keys outside session.py: ``x.session_state["k"]``, ``x.session_state.get("k")`` (and
    ``pop``/``setdefault``), ``"k" in x.session_state``, and any string equal to a key session.py declares."""
    bad = []
    for name, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            key = None
            if isinstance(node, ast.Subscript) and _is_session_state(node.value):
                key = node.slice
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("get", "pop", "setdefault") and _is_session_state(node.func.value)
                  and node.args):
                key = node.args[0]
            elif (isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
                  and any(_is_session_state(c) for c in node.comparators)):
                key = node.left
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                bad.append(f"{name}:{node.lineno}: session key {key.value!r} spelled out")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in keys:
                bad.append(f"{name}:{node.lineno}: {node.value!r} is session.{keys[node.value]}")
    return sorted(set(bad))


def session_state_access(sources: dict[str, str]) -> list[str]:
    """Dashboard code (not tests) that reads a session state object itself instead of through session.py."""
    return [f"{name}:{node.lineno}" for name, source in sources.items()
            for node in ast.walk(ast.parse(source)) if _is_session_state(node)]


def _sources(paths) -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in paths}


def test_session_keys_are_spelled_only_in_session_py():
    keys = declared_keys(SESSION.read_text(encoding="utf-8"))
    assert {"PARAMS", "LAST_FIT", "NOTICE", "SETUP_DATA_CHOICE"} <= set(keys.values())
    bad = session_key_literals(_sources(p for p in KEY_USERS if p != SESSION), keys)
    assert not bad, "use tcrex.ui.session's constants and accessors:\n" + "\n".join(bad)


def test_only_session_py_touches_the_session_state():
    dashboard = [p for p in KEY_USERS if "tests" not in p.relative_to(ROOT).parts]
    bad = session_state_access(_sources(p for p in dashboard if p.name not in STATE_ACCESS_ALLOWED
                                        or p.parent != UI))
    assert not bad, "go through tcrex.ui.session:\n" + "\n".join(bad)


def test_the_session_checks_find_planted_violations():
    keys = {"tcrex.params": "PARAMS"}
    planted = {
        "a.py": 'import streamlit as st\nx = st.session_state["tcrex.other"]\n',
        "b.py": 'def f(at):\n    return at.session_state.get("setup_notice")\n',
        "c.py": 'def f(ss):\n    return "param_tau" in ss.session_state\n',
        "d.py": 'KEY = "tcrex.params"\n',
        "e.py": 'from tcrex.ui import session\nx = session.params()\n',
    }
    found = session_key_literals(planted, keys)
    assert [f.split(":")[0] for f in found] == ["a.py", "b.py", "c.py", "d.py"]
    assert session_state_access(planted) == ["a.py:2", "b.py:2", "c.py:2"]
