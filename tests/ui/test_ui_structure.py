"""Structure of the dashboard code, checked from its import graph (no Streamlit run needed).

* ``tcrex/ui``, ``pages`` and ``app.py`` import no private ``tcrex._*`` module (public names only);
* the ``tcrex.ui`` modules import each other without a cycle (at module level or inside functions);
* the pages pass figure builders to ``components.chart`` by name (imported functions), not as strings.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UI = ROOT / "tcrex" / "ui"
#: private modules the dashboard may still import (to be moved to a public path by the engine)
ALLOWED_PRIVATE: set[str] = set()


def _files() -> list[Path]:
    return sorted(UI.glob("*.py")) + sorted((ROOT / "pages").rglob("*.py")) + [ROOT / "app.py"]


def _imports(path: Path) -> list[tuple[str, int]]:
    """Every module an import statement in ``path`` names (``from a import b`` gives ``a`` and ``a.b``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = "tcrex.ui" if path.parent == UI else ""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            out.append((base, node.lineno))
            out += [(f"{base}.{a.name}", node.lineno) for a in node.names]
    return out


def test_dashboard_imports_no_private_tcrex_module():
    bad = []
    for path in _files():
        for name, line in _imports(path):
            parts = name.split(".")
            if parts[0] != "tcrex":
                continue
            private = next((".".join(parts[: i + 1]) for i, p in enumerate(parts) if p.startswith("_")), None)
            if private and private not in ALLOWED_PRIVATE:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not bad, "private tcrex modules imported outside the engine:\n" + "\n".join(bad)


def _ui_graph() -> dict[str, set[str]]:
    modules = {f"tcrex.ui.{p.stem}": p for p in UI.glob("*.py") if p.stem != "__init__"}
    return {m: {n for n, _ in _imports(p) if n in modules and n != m} for m, p in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node, path):
        state[node] = "active"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "active":
                found.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_ui_modules_have_no_import_cycle():
    graph = _ui_graph()
    assert "tcrex.ui.constraints" in graph["tcrex.ui.sidebar"]  # the graph sees imports at all
    assert not _cycles(graph), f"import cycles in tcrex.ui: {_cycles(graph)}"


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_pages_pass_figure_builders_not_names():
    bad = []
    for path in _files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
                    and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("chart", "build", "audit_chart")
                    and node.args and isinstance(node.args[0], ast.Constant)):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, "figures called by string name:\n" + "\n".join(bad)
