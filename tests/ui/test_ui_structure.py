"""Structure of the dashboard code that the whole-tree checks do not cover.

The import rules (no private ``tcrex._*`` module or another package's private name, no import cycle, streamlit
only in the dashboard) are checked for every package, the dashboard included, by ``tests/test_structure.py``.
Here: the pages pass figure builders to ``components.chart`` by name (imported functions), not as strings.
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
