"""Structure of the dashboard code that the whole-tree checks do not cover.

The import rules (no private ``tcrex._*`` module or another package's private name, no import cycle, streamlit
only in the dashboard) are checked for every package, the dashboard included, by ``tests/test_structure.py``.
Here: the dashboard is three rooms -- ``tcrex/ui/state/`` (session keys, caches, shared server work, memory,
sources, the active data and model, the saved workspace), ``tcrex/ui/widgets/`` (what several pages draw) and
``tcrex/ui/pages/`` (one helper module per page of ``pages/views/``, named as the page) -- and imports go one way,
pages -> widgets -> state; no import hides inside a function (a cycle is broken, not dodged) except the few
deliberate lazy imports of heavy optional libraries in :data:`LAZY_IMPORTS`; the pages pass figure builders to
``components.chart`` by name (imported functions), not as strings; session keys are spelled only in
``tcrex/ui/state/session.py`` (everything else uses its constants and accessors), and only it touches
``st.session_state``.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "tcrex" / "ui"


def _files() -> list[Path]:
    return sorted(UI.rglob("*.py")) + sorted((ROOT / "pages").rglob("*.py")) + [ROOT / "app.py"]


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
SESSION = UI / "state" / "session.py"
#: Where a session key could be spelled: the dashboard, its entry points and its tests.
KEY_USERS = [*sorted(UI.rglob("*.py")), *sorted((ROOT / "pages").rglob("*.py")), ROOT / "app.py",
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
    assert not bad, "use tcrex.ui.state.session's constants and accessors:\n" + "\n".join(bad)


def test_only_session_py_touches_the_session_state():
    dashboard = [p for p in KEY_USERS if "tests" not in p.relative_to(ROOT).parts]
    bad = session_state_access(_sources(p for p in dashboard if p.name not in STATE_ACCESS_ALLOWED
                                        or p.parent != UI / "state"))
    assert not bad, "go through tcrex.ui.state.session:\n" + "\n".join(bad)


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


# ============================================================================================ three rooms
#: The rooms, lowest first: a module may import its own room and the rooms below it, never one above.
ROOMS = ("state", "widgets", "pages")
#: Modules of tcrex/ui outside the rooms: the package itself and the launcher (``python -m tcrex.ui.launch``).
OUTSIDE_ROOMS = {"__init__.py", "launch.py"}
#: The only imports inside a function in the dashboard: deliberate lazy imports, ``(file, imported module): why``.
LAZY_IMPORTS = {
    ("tcrex/ui/launch.py", "tcrex.ui.state.st_compat"):
        "imports Streamlit after the malloc arena cap is set, before Streamlit starts any thread",
    ("tcrex/ui/launch.py", "pandas"): "warm-up before the health check answers (the first figure's template)",
    ("tcrex/ui/launch.py", "tcrex.figures"): "warm-up before the health check answers (plotly's validators)",
    ("tcrex/ui/state/training.py", "xgboost"): "heavy: imported when an XGBoost model is trained in the app",
    ("tcrex/ui/state/training.py", "sklearn.ensemble"): "heavy: imported when a random forest is trained",
    ("tcrex/ui/state/training.py", "sklearn.linear_model"): "heavy: imported when a linear model is trained",
    ("tcrex/ui/state/training.py", "sklearn.pipeline"): "likewise, for the linear model's scaler pipeline",
    ("tcrex/ui/state/training.py", "sklearn.preprocessing"): "likewise, for the linear model's scaler pipeline",
}


def _module(path: str) -> str:
    """``tcrex/ui/state/session.py`` -> ``tcrex.ui.state.session``; ``pages/views/home.py`` -> ``pages.views.home``."""
    parts = list(Path(path).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Absolute names a statement imports (``from . import a`` gives the package's ``a``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not node.level:
        return [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
    package = _module(path).split(".")
    package = package if Path(path).name == "__init__.py" else package[:-1]
    base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
    return [base] + [f"{base}.{a.name}" for a in node.names]


def function_level_imports(sources: dict[str, str], allowed=LAZY_IMPORTS) -> list[str]:
    """Imports inside a function (or a lambda) that :data:`LAZY_IMPORTS` does not list with a reason."""
    bad = []
    for path, source in sources.items():
        for fn in ast.walk(ast.parse(source)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    names = _imported(path, node)
                    if not any((path, name) in allowed for name in names):
                        bad.append(f"{path}:{node.lineno} imports {names[-1]} inside a function")
    return sorted(set(bad))


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["tcrex", "ui"] and len(parts) > 2 and parts[2] in ROOMS else None


def room_violations(sources: dict[str, str]) -> list[str]:
    """An import from a room into a room above it (state -> widgets or pages, widgets -> pages)."""
    bad = []
    for path, source in sources.items():
        own = _room(_module(path))
        if own is None:
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _imported(path, node):
                    other = _room(name)
                    if other is not None and ROOMS.index(other) > ROOMS.index(own):
                        bad.append(f"{path}:{node.lineno} ({own}) imports {name} ({other})")
                        break
    return sorted(set(bad))


def _dashboard_sources() -> dict[str, str]:
    return _sources(_files())


def test_no_import_inside_a_function_but_the_deliberate_lazy_ones():
    bad = function_level_imports(_dashboard_sources())
    assert not bad, ("import at module level (break a cycle by moving code to its room, not by hiding the "
                     "import), or add a deliberate lazy import of a heavy optional library to LAZY_IMPORTS with "
                     "its reason:\n" + "\n".join(bad))
    sources = _dashboard_sources()
    used = {(path, name) for path, source in sources.items()
            for fn in ast.walk(ast.parse(source)) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))
            for name in _imported(path, node)}
    assert set(LAZY_IMPORTS) <= used, f"allowed lazy imports that no longer exist: {set(LAZY_IMPORTS) - used}"


def test_imports_go_pages_to_widgets_to_state():
    bad = room_violations(_dashboard_sources())
    assert not bad, "state never imports widgets or pages; widgets never import pages:\n" + "\n".join(bad)


def test_every_dashboard_module_lives_in_a_room_and_page_helpers_are_named_as_pages():
    loose = sorted(p.name for p in UI.glob("*.py") if p.name not in OUTSIDE_ROOMS)
    assert not loose, f"tcrex/ui/ holds only the rooms and the launcher: move {loose} into one"
    assert sorted(p.name for p in UI.iterdir() if p.is_dir() and p.name != "__pycache__") == sorted(ROOMS)
    views = {p.stem for p in (ROOT / "pages" / "views").glob("*.py")}
    helpers = {p.stem for p in (UI / "pages").glob("*.py")} - {"__init__"}
    assert helpers <= views, f"page helpers not named as a page of pages/views/: {sorted(helpers - views)}"


def test_the_room_checks_find_planted_violations():
    planted = {
        "tcrex/ui/state/a.py": "from ..widgets import components\n",  # state -> widgets
        "tcrex/ui/state/b.py": "def f():\n    from tcrex.ui.pages import audit\n    return audit\n",  # both
        "tcrex/ui/widgets/c.py": "from tcrex.ui.pages.export import x\n",  # widgets -> pages
        "tcrex/ui/widgets/d.py": "from ..state import session\nfrom . import page\n",  # fine
        "tcrex/ui/pages/e.py": "from ..widgets import page\nfrom ..state.active import DataAndModel\n",  # fine
        "pages/views/f.py": "import streamlit as st\nrun = lambda: __import__('x')\n"
                            "def g():\n    import json\n    return json\n",  # a function-level import
        "tcrex/ui/state/training.py": "def t():\n    import xgboost\n    return xgboost\n",  # allowed lazy
    }
    assert room_violations(planted) == ["tcrex/ui/state/a.py:1 (state) imports tcrex.ui.widgets (widgets)",
                                        "tcrex/ui/state/b.py:2 (state) imports tcrex.ui.pages (pages)",
                                        "tcrex/ui/widgets/c.py:1 (widgets) imports tcrex.ui.pages.export (pages)"]
    assert function_level_imports(planted) == ["pages/views/f.py:4 imports json inside a function",
                                               "tcrex/ui/state/b.py:2 imports tcrex.ui.pages.audit inside a function"]


# ============================================================================================ background checks
#: The one module that runs and holds the dashboard's background checks (``Check`` records in one registry).
CHECKS_MODULE = "tcrex/ui/state/checks.py"
#: Module-level stores of the state room that are not background work: ``(file, name): why``.
STORES_ALLOWED = {
    ("tcrex/ui/state/memory.py", "_sessions"): "the sessions the memory watcher tracks, by session id",
    ("tcrex/ui/state/shared.py", "_value_locks"): "the gate of each shared value being built (gone once built)",
}


def _empty_store(value) -> bool:
    """``{}``, ``set()``, ``dict()``: a store filled at run time (a table written out, ``{"a": 1}``, is not)."""
    return (isinstance(value, ast.Dict) and not value.keys) or \
        (isinstance(value, ast.Call) and ast.unparse(value.func) in ("dict", "set") and not value.args)


def background_stores(sources: dict[str, str]) -> list[str]:
    """Background work held outside its one record: a thread pool's ``submit`` in the state room but in
    :data:`CHECKS_MODULE` (a future kept in a dict of its own), a string key into a fit result's cache
    (``result.cache["verified"]``), a module-level dict or set in the state room that holds futures, events or
    counts by key (``_SHARED_CHECKS = {}``), or a fragment polling at a number written in place
    (``st.fragment(run_every=0.5)``: a constant named for its reason, never tuned to a machine)."""
    bad = []
    for path, source in sources.items():
        state = path.startswith("tcrex/ui/state/")
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if state and path != CHECKS_MODULE and isinstance(node, ast.Call) \
                    and isinstance(node.func, ast.Attribute) and node.func.attr == "submit":
                bad.append(f"{path}:{node.lineno} submits background work (ask tcrex.ui.state.checks.REGISTRY)")
            elif isinstance(node, ast.Attribute) and node.attr == "cache" and ast.unparse(node.value) != "st":
                bad.append(f"{path}:{node.lineno} reads a cache by string key (a typed field or a Check)")
            elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("fragment"):
                for kw in node.keywords:
                    if kw.arg == "run_every" and isinstance(kw.value, ast.Constant):
                        bad.append(f"{path}:{node.lineno} polls every {kw.value.value} s written in place")
        if state and path != CHECKS_MODULE:
            for node in tree.body:
                names = [ast.unparse(t) for t in (node.targets if isinstance(node, ast.Assign) else [node.target])] \
                    if isinstance(node, (ast.Assign, ast.AnnAssign)) else []
                if names and _empty_store(node.value) and not all((path, n) in STORES_ALLOWED for n in names):
                    bad.append(f"{path}:{node.lineno} keeps a module-level store (use a Check or a caching.LRU)")
    return sorted(bad)


def test_background_checks_have_one_record():
    bad = background_stores(_sources(p for p in _files() if p.name != "caching.py"))
    assert not bad, "background checks live in tcrex/ui/state/checks.py:\n" + "\n".join(bad)


def test_the_background_check_rules_find_planted_violations():
    planted = {
        "tcrex/ui/state/verification.py": (
            "import streamlit as st\n_SHARED_CHECKS: dict = {}\n_POLLS = dict()\nNAMES = {'a': 1}\n"
            "def f(result, pool):\n    result.cache['verifying'] = pool.submit(g)\n    return result.cache.get('x')\n"
            "@st.fragment(run_every=0.5)\ndef g():\n    pass\n"),
        "tcrex/ui/state/checks.py": "_checks = {}\ndef h(pool):\n    return pool.submit(h)\n",  # the owner
        "tcrex/ui/widgets/poll.py": "import streamlit as st\nEVERY = 0.5\n@st.fragment(run_every=EVERY)\n"
                                    "def p():\n    st.cache_data.clear()\n",  # a named constant; Streamlit's cache
    }
    assert background_stores(planted) == [
        "tcrex/ui/state/verification.py:2 keeps a module-level store (use a Check or a caching.LRU)",
        "tcrex/ui/state/verification.py:3 keeps a module-level store (use a Check or a caching.LRU)",
        "tcrex/ui/state/verification.py:6 reads a cache by string key (a typed field or a Check)",
        "tcrex/ui/state/verification.py:6 submits background work (ask tcrex.ui.state.checks.REGISTRY)",
        "tcrex/ui/state/verification.py:7 reads a cache by string key (a typed field or a Check)",
        "tcrex/ui/state/verification.py:8 polls every 0.5 s written in place"]
