"""Structure anyone can rerun: the import graph of tcrex/, pages/ and app.py, built with ast.

**Layers come from the folders** (``layer_of``; ``docs/architecture.md`` draws them):

* the face ``tcrex`` (``tcrex/__init__.py``): the public names of the engine only, loaded lazily;
* the engine: every module file at the root of ``tcrex/`` (its public modules: ``text``, ``errors``,
  ``vocabulary``, ``constraints``, ``codebook``, ``metrics``, ...) and every private folder there
  (``tcrex/_engine/``, split by stage: ``base``, ``fitting``, ``explaining``, ``recourse``, ``serialization``);
* every public folder ``tcrex/NAME/`` is a layer of its own, ``tcrex.NAME``: the population layer
  (``tcrex.population``), the audit, the comparison, the outer packages (``intake``, ``figures``, ``distributed``,
  ``workspace``, ``report``, ``cli``) and the dashboard (``tcrex.ui``);
* ``tcrex/__main__.py`` (what ``python -m tcrex`` runs) is the program: it may import anything;
* ``pages/`` and ``app.py`` form the layer ``app`` (the dashboard's pages).

A new file at the root is engine, a new folder a new outer layer: nothing here lists modules.

Fails on (a) import cycles (all imports; and, separately, import-time cycles of module-level imports including a
package's own ``__init__``; ``if TYPE_CHECKING:`` blocks do not run), (b) a layer importing a layer it may not
(``MAY_IMPORT``: the engine imports no other layer; the population layer only the engine's public names; the
audit and the comparison the engine's public names and the population layer, never each other; the face the
engine only), (b') an arrow from a lower tier back up (``TIERS``: engine and face < population < audit, compare <
outer packages < front ends < pages and program; type-checking and function-level imports included), (c) the engine's stages importing a later stage (``STAGES``), (d) a module importing
another layer's private module (a dotted part starting with ``_``) or a private name (``from x import _y``), (e) a
module reading a private attribute (``obj._name``, ``obj._name()``; not on ``self``/``cls``) that another layer
defines and its own does not -- within the engine, that another engine module defines and its own module does not:
engine modules pass state explicitly (private attributes of third-party objects, e.g. Streamlit's media store, are
not tcrex's to police here), (f) the vocabulary (tasks, feature kinds, statuses) typed again as strings instead of
imported from its owner, (g) streamlit imported by anything but the dashboard, (h) a name in an ``__all__`` that
the module does not define, (i) a public name with two import paths: a public module beside a private twin of the
same name (``x.py`` and ``_x.py``), or one object listed in the ``__all__`` of two public modules (see
``docs/engine.md``, "One import path per public name"). The checkers run on a mapping ``module -> source`` (or
``module -> namespace``) so that the tests at the end can plant violations in tiny synthetic sources and see them
caught.
"""
from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from tcrex.vocabulary import FEATURE_KINDS, STATUSES, TASKS

ROOT = Path(__file__).resolve().parents[1]

FACE, ENGINE, PROGRAM, APP = "tcrex", "engine", "program", "app"
POPULATION, AUDIT, COMPARE, DASHBOARD = "tcrex.population", "tcrex.audit", "tcrex.compare", "tcrex.ui"
#: Which other layers a layer may import. A layer not named here (an outer package, the dashboard, the pages, the
#: program) may import any layer; the ones named may import only these (the private-import check below adds: only
#: their public names, except the face, which re-exports the engine's private modules).
MAY_IMPORT = {
    ENGINE: set(),
    POPULATION: {FACE, ENGINE},
    AUDIT: {FACE, ENGINE, POPULATION},
    COMPARE: {FACE, ENGINE, POPULATION},
    FACE: {ENGINE},
}
#: The tiers, lowest first: a module imports only its own tier and lower ones. A layer not listed is an outer package
#: (``OUTER``): the readers, figures, distributed runs, the workspace, the monitor, the report. The front ends (the
#: command line, which can start the dashboard, and the dashboard) come above them; the pages and ``python -m tcrex``
#: on top.
OUTER = "outer package"
TIERS = ({FACE, ENGINE}, {POPULATION}, {AUDIT, COMPARE}, {OUTER}, {"tcrex.cli", DASHBOARD}, {APP, PROGRAM})
#: The engine's stages (``tcrex/_engine/<stage>/``) in order: a stage imports only itself and earlier ones; the
#: facade ``tcrex._engine._explainer`` comes after them all. Every folder of ``tcrex/_engine/`` must be listed.
STAGES = ("base", "fitting", "explaining", "recourse", "serialization")
#: the only module that may spell the vocabulary out
VOCABULARY_OWNER = "tcrex.vocabulary"
VOCABULARY = set(STATUSES) | set(TASKS) | set(FEATURE_KINDS)


# ------------------------------------------------------------------------------------------------ sources
def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _files():
    files = list((ROOT / "tcrex").rglob("*.py")) + list((ROOT / "pages").rglob("*.py"))
    if (ROOT / "app.py").exists():
        files.append(ROOT / "app.py")
    return [f for f in files if "__pycache__" not in f.parts]


def _tree_sources() -> dict[str, tuple[str, bool]]:
    """module name -> (source text, is a package ``__init__``) for the whole tree."""
    return {_module_name(f): (f.read_text(encoding="utf-8"), f.name == "__init__.py") for f in _files()}


def _folders(sources) -> set[str]:
    """``tcrex.NAME`` for every folder directly under ``tcrex/`` (a package, or the parent of a module)."""
    out = {m for m, (_, pkg) in sources.items() if pkg and m.count(".") == 1}
    out |= {".".join(m.split(".")[:2]) for m in sources if m.startswith("tcrex.") and m.count(".") >= 2}
    return out


def layer_of(mod: str, sources=None) -> str:
    """The layer of a module, read from where its file is (see the module docstring)."""
    parts = mod.split(".")
    if parts[0] != "tcrex":
        return APP  # pages/*, app.py
    if len(parts) == 1:
        return FACE
    top = parts[1]
    if top.startswith("__"):
        return PROGRAM  # __main__
    if f"tcrex.{top}" not in _folders(_tree_sources() if sources is None else sources) or top.startswith("_"):
        return ENGINE  # a module at the root, or a private folder of the root
    return f"tcrex.{top}"


def stage_of(mod: str) -> int | None:
    """Position of an engine module's stage (``tcrex._engine.<stage>...``); the facade after every stage."""
    parts = mod.split(".")
    if parts[:2] != ["tcrex", "_engine"] or len(parts) < 3:
        return None
    return STAGES.index(parts[2]) if parts[2] in STAGES else len(STAGES)


def _private(mod: str) -> bool:
    return any(p.startswith("_") and not p.startswith("__") for p in mod.split("."))


def _private_name(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _privacy_owner(layer: str) -> str:
    """Who may import a layer's private modules: the layer itself; the face and the engine are one package (the face
    re-exports the engine's private modules)."""
    return ENGINE if layer == FACE else layer


# ------------------------------------------------------------------------------------------------ imports
def _type_checking(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): imports for type checkers, never run."""
    return isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _import_nodes(tree: ast.AST, module_level_only: bool = False):
    """Import statements of a module; ``module_level_only`` leaves out those inside functions (run later) and under
    ``if TYPE_CHECKING:`` (never run): what importing the module runs."""
    todo = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if module_level_only and (isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                                      or _type_checking(child)):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            todo.append(child)


def _resolve(mod: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = mod if is_package else mod.rpartition(".")[0]
    base = package.split(".")
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(mod: str, source: str, is_package: bool, module_level_only: bool = False) -> set[str]:
    """Absolute names of the modules ``mod`` imports (function-level imports too, unless ``module_level_only``)."""
    out = set()
    for node in _import_nodes(ast.parse(source), module_level_only):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        else:
            prefix = _resolve(mod, is_package, node)
            out.add(prefix)
            out.update(f"{prefix}.{a.name}" for a in node.names)  # `from pkg import submodule`
    return out


def _graph(sources, module_level_only: bool = False) -> dict[str, set[str]]:
    known = set(sources)
    return {m: {d for d in _imports(m, src, pkg, module_level_only) if d in known and d != m}
            for m, (src, pkg) in sources.items()}


def find_cycles(graph: dict[str, set[str]], skip_package_edges: bool = True) -> list[list[str]]:
    """Import circles. ``skip_package_edges``: a package importing its own submodules (``__init__`` re-exports)
    is not a cycle; edges into a package ``__init__`` from its submodules are kept, they make real circles."""
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if skip_package_edges and nxt.startswith(node + "."):
                continue
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [])
    return cycles


def _targets(mod: str, is_package: bool, node, known) -> list[tuple[str, str | None]]:
    """(module, imported name or None) of one import statement."""
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    base = _resolve(mod, is_package, node)
    return [(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base, a.name) for a in node.names]


def layer_imports(sources) -> list[str]:
    """Imports of a layer its own layer may not import (``MAY_IMPORT``), function-level ones too."""
    known = set(sources)
    found = []
    for mod, (src, is_package) in sources.items():
        own = layer_of(mod, sources)
        if own not in MAY_IMPORT:
            continue
        for node in _import_nodes(ast.parse(src)):
            for target, _ in _targets(mod, is_package, node, known):
                other = layer_of(target, sources) if target in known else None
                if other is not None and other != own and other not in MAY_IMPORT[own]:
                    found.append(f"{mod}:{node.lineno} ({own}) imports {target} ({other})")
    return sorted(set(found))


def tier_of(layer: str) -> int:
    """Position of a layer in ``TIERS`` (an unlisted layer is an outer package)."""
    return next((i for i, tier in enumerate(TIERS) if layer in tier), next(i for i, t in enumerate(TIERS) if OUTER in t))


def upward_imports(sources) -> list[str]:
    """Imports from a lower tier up (``TIERS``), read statically: module-level, function-level and ``if
    TYPE_CHECKING:`` imports alike (a type checker follows those too)."""
    known = set(sources)
    found = []
    for mod, (src, is_package) in sources.items():
        own = layer_of(mod, sources)
        for node in _import_nodes(ast.parse(src)):
            for target, _ in _targets(mod, is_package, node, known):
                if target not in known:
                    continue
                other = layer_of(target, sources)
                if tier_of(other) > tier_of(own):
                    found.append(f"{mod}:{node.lineno} ({own}) imports {target} ({other}), a higher tier")
    return sorted(set(found))


def stage_imports(sources) -> list[str]:
    """Engine modules importing a later stage (``STAGES``), or a stage folder ``STAGES`` does not name."""
    known = set(sources)
    found = sorted(f"{m} is in a stage STAGES does not list" for m in sources
                   if m.startswith("tcrex._engine.") and len(m.split(".")) > 3 and m.split(".")[2] not in STAGES)
    for mod, (src, is_package) in sources.items():
        here = stage_of(mod)
        if here is None:
            continue
        for node in _import_nodes(ast.parse(src)):
            for target, _ in _targets(mod, is_package, node, known):
                there = stage_of(target) if target in known else None
                if there is not None and there > here:
                    found.append(f"{mod}:{node.lineno} imports the later stage {target}")
    return sorted(set(found))


def private_imports(sources) -> list[str]:
    """Imports of another layer's private module, or of a private name from another layer's module."""
    known = set(sources)
    found = []
    for mod, (src, is_package) in sources.items():
        own = _privacy_owner(layer_of(mod, sources))
        for node in _import_nodes(ast.parse(src)):
            for target, name in _targets(mod, is_package, node, known):
                if target not in known or _privacy_owner(layer_of(target, sources)) == own:
                    continue
                if _private(target):
                    found.append(f"{mod}:{node.lineno} imports private module {target}")
                elif name is not None and _private_name(name) and target.rsplit(".", 1)[-1] != name:
                    found.append(f"{mod}:{node.lineno} imports private name {name} from {target}")
    return sorted(set(found))


# ------------------------------------------------------------------------------------------------ private attributes
def _defined_private_names(source: str) -> set[str]:
    """Private names a module defines: functions, classes, module/class assignments and ``self._x = ...``."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name):
                        out.add(sub.id)
                    elif isinstance(sub, ast.Attribute):
                        out.add(sub.attr)
    return {n for n in out if _private_name(n)}


def _owner(mod: str, sources) -> str:
    """Who may read a private attribute: its layer, or within the engine (and the face) its module (each engine
    module passes state explicitly, never through another module's objects' private members)."""
    own = layer_of(mod, sources)
    return mod if own in (FACE, ENGINE) else own


def private_attribute_uses(sources) -> list[str]:
    """``obj._name`` where ``_name`` is defined only by another tcrex layer (by another module, in the engine)."""
    by_package: dict[str, set[str]] = {}
    for mod, (src, _) in sources.items():
        by_package.setdefault(_owner(mod, sources), set()).update(_defined_private_names(src))
    found = []
    for mod, (src, _) in sources.items():
        own = _owner(mod, sources)
        others = set().union(*(names for p, names in by_package.items() if p != own)) if len(by_package) > 1 \
            else set()
        for node in ast.walk(ast.parse(src)):
            if not (isinstance(node, ast.Attribute) and _private_name(node.attr)):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr in others and node.attr not in by_package.get(own, set()):
                where = "module" if own == mod else "layer"
                found.append(f"{mod}:{node.lineno} uses {ast.unparse(node)} (private to another {where})")
    return sorted(found)


# ------------------------------------------------------------------------------------------------ vocabulary
def typed_vocabulary(sources) -> list[str]:
    """The vocabulary spelled out: a status/task/kind string compared with, tested for membership (``in``,
    ``isin``), looped over, used as a key or assigned."""
    found = []

    def words(node) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in VOCABULARY:
            return [node.value]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [w for e in node.elts for w in words(e)]
        if isinstance(node, ast.IfExp):
            return words(node.body) + words(node.orelse)
        return []

    for mod, (src, _) in sources.items():
        if mod == VOCABULARY_OWNER:
            continue
        for node in ast.walk(ast.parse(src)):
            hits = []
            if isinstance(node, ast.Compare):
                hits = [w for part in [node.left, *node.comparators] for w in words(part)]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                hits = words(node.value)
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "isin":
                hits = [w for a in node.args for w in words(a)]
            elif isinstance(node, ast.Subscript):
                hits = words(node.slice)
            elif isinstance(node, (ast.For, ast.comprehension)):
                hits = words(node.iter)
            if hits:
                found.append(f"{mod}:{node.lineno} types {sorted(set(hits))}")
    return sorted(found)


# ------------------------------------------------------------------------------------------------ one import path
def private_twins(sources) -> list[str]:
    """A public module with a private module of the same name beside it (``pkg.x`` and ``pkg._x``): a shim over a
    twin gives one name two homes; the owner module is the public one."""
    return sorted(f"{mod} is the private twin of {mod.rpartition('.')[0]}.{mod.rpartition('.')[2][1:]}"
                  for mod in sources
                  if _private_name(mod.rpartition(".")[2])
                  and f"{mod.rpartition('.')[0]}.{mod.rpartition('.')[2][1:]}" in sources)


def duplicate_public_paths(namespaces) -> list[str]:
    """One object listed under one name in the ``__all__`` of two public modules (``module name -> module``)."""
    homes: dict[tuple[str, int], list[str]] = {}
    for mod, namespace in namespaces.items():
        for name in getattr(namespace, "__all__", ()):
            homes.setdefault((name, id(getattr(namespace, name))), []).append(mod)
    return sorted(f"{name} is exported by {', '.join(sorted(mods))}"
                  for (name, _), mods in homes.items() if len(mods) > 1)


def _public_faces() -> dict[str, object]:
    """``tcrex``, its public top-level modules and the faces (``__init__``) of its subpackages, imported."""
    names = {m for m in _tree_sources() if m.startswith("tcrex") and m.count(".") <= 1 and not _private(m)}
    return {m: importlib.import_module(m) for m in sorted(names - {"tcrex.__main__"})}


# ------------------------------------------------------------------------------------------------ the tree
def layer_graph(sources) -> dict[str, set[str]]:
    """layer -> the other layers its modules import (all imports, type-checking ones included). A package's edge to
    its own submodule is skipped by :func:`find_cycles`; here ``tcrex`` -> ``tcrex.compare`` is an arrow between two
    layers, so a circle through the face and an outer layer shows."""
    out: dict[str, set[str]] = {}
    for mod, deps in _graph(sources).items():
        own = layer_of(mod, sources)
        out.setdefault(own, set()).update(layer_of(d, sources) for d in deps if layer_of(d, sources) != own)
    return out


def test_no_import_cycles():
    tree = _tree_sources()
    cycles = find_cycles(_graph(tree)) + find_cycles(layer_graph(tree), skip_package_edges=False)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_import_time_cycles_through_package_inits():
    """Module-level imports only, package ``__init__`` edges included: what runs when a module is imported (the
    outer packages import ``from tcrex import ...``, so the core must never import them at module level)."""
    cycles = find_cycles(_graph(_tree_sources(), module_level_only=True), skip_package_edges=False)
    assert not cycles, "import-time cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_private_imports_across_packages():
    found = private_imports(_tree_sources())
    assert not found, "private modules or names of another package imported (add a public name):\n" + \
        "\n".join(found)


def test_no_private_attributes_of_other_packages():
    found = private_attribute_uses(_tree_sources())
    assert not found, "private attributes of another package used (use its public API):\n" + "\n".join(found)


def test_vocabulary_is_imported_not_typed():
    found = typed_vocabulary(_tree_sources())
    assert not found, f"vocabulary typed again (import it from {VOCABULARY_OWNER}):\n" + \
        "\n".join(found)


def test_no_private_twins_of_public_modules():
    found = private_twins(_tree_sources())
    assert not found, "public modules over private twins (make the owner module the public one):\n" + \
        "\n".join(found)


def test_one_public_path_per_name():
    found = duplicate_public_paths(_public_faces())
    assert not found, "names with two public import paths (export each from its owner only):\n" + "\n".join(found)


def test_only_the_dashboard_imports_streamlit():
    offenders = []
    for mod, (src, pkg) in _tree_sources().items():
        if layer_of(mod) not in (DASHBOARD, APP) and any(
                m == "streamlit" or m.startswith("streamlit.") for m in _imports(mod, src, pkg)):
            offenders.append(mod)
    assert not offenders, f"modules outside the dashboard importing streamlit: {offenders}"


@pytest.mark.parametrize("module", ["tcrex", "tcrex.vocabulary", "tcrex.errors", "tcrex.constraints", "tcrex.compare",
                                    "tcrex.text", "tcrex.audit", "tcrex.metrics", "tcrex.figures", "tcrex.intake",
                                    "tcrex.intake.data", "tcrex.distributed", "tcrex.datasets",
                                    "tcrex.population", "tcrex.report", "tcrex.cli"])
def test_every_name_in_all_exists(module):
    m = importlib.import_module(module)
    missing = [n for n in getattr(m, "__all__", []) if not hasattr(m, n)]
    assert not missing, f"{module}.__all__ names what it does not define: {missing}"


def test_the_package_face_loads_its_names_on_demand_from_their_owners():
    """``tcrex/__init__.py`` loads its names lazily (PEP 562): each name of ``__all__`` is one its lazy table or the
    module defines, is the object of the private module the table names (as the eager imports gave), and the
    table says the same as the ``TYPE_CHECKING`` imports the import graph above is built from."""
    import tcrex
    lazy = tcrex._LAZY  # noqa: SLF001 - the face's own table, checked here
    assert set(tcrex.__all__) == set(lazy) | {"__version__"}
    for name, module in lazy.items():
        owner = importlib.import_module(module, "tcrex")
        assert getattr(tcrex, name) is getattr(owner, name), name
    declared = {}
    for node in _import_nodes(ast.parse((ROOT / "tcrex" / "__init__.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            declared.update({a.name: f".{node.module}" for a in node.names})
    assert declared == lazy
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        tcrex.not_a_name  # noqa: B018


def test_the_command_line_starts_without_the_heavy_libraries():
    """``tcrex --help`` imports ``tcrex.cli``: that must not load scikit-learn, pandas or numpy (2 s and
    215 MB before any command ran); commands import what they need inside their bodies."""
    import subprocess
    import sys
    code = ("import sys, tcrex.cli, tcrex.__main__; "
            "print(sorted(m for m in ('sklearn', 'pandas', 'numpy', 'scipy', 'pyarrow', 'fsspec') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr

def test_layers_come_from_the_folders():
    assert layer_of("tcrex") == FACE
    assert layer_of("tcrex._engine._explainer") == layer_of("tcrex._engine.fitting._surrogate") == ENGINE
    assert layer_of("tcrex.text") == layer_of("tcrex.constraints") == layer_of("tcrex.metrics") == ENGINE
    assert layer_of("tcrex.population._groups") == layer_of("tcrex.population") == POPULATION
    assert layer_of("tcrex.audit._bootstrap") == AUDIT and layer_of("tcrex.compare._result") == COMPARE
    assert layer_of("tcrex.figures._style") == layer_of("tcrex.figures") == "tcrex.figures"
    assert layer_of("tcrex.intake.data") == "tcrex.intake"
    assert layer_of("tcrex.cli._common") == "tcrex.cli" and layer_of("tcrex.report") == "tcrex.report"
    assert layer_of("tcrex.ui.state") == DASHBOARD and layer_of("tcrex.__main__") == PROGRAM
    assert layer_of("pages.views.individual") == layer_of("app") == APP
    # the root holds the face, the engine's public modules, __main__ and folders: nothing else to classify
    engine_folders = {f.name for f in (ROOT / "tcrex" / "_engine").iterdir() if (f / "__init__.py").exists()}
    assert engine_folders == set(STAGES), "a stage folder STAGES does not order (or a stage that is gone)"


def test_layers_import_only_what_they_may():
    found = layer_imports(_tree_sources())
    assert not found, "a layer importing one it may not (see MAY_IMPORT and docs/architecture.md):\n" + \
        "\n".join(found)


def test_no_import_from_a_lower_tier_up():
    found = upward_imports(_tree_sources())
    assert not found, "an import from a lower tier up (see TIERS and docs/architecture.md):\n" + "\n".join(found)


def test_engine_stages_import_only_earlier_stages():
    found = stage_imports(_tree_sources())
    assert not found, "an engine stage importing a later one (see STAGES):\n" + "\n".join(found)


def test_import_tcrex_loads_neither_the_audit_nor_the_comparison():
    """The face is lazy and lists the engine only: ``import tcrex`` and the estimator load neither ``tcrex.audit``,
    ``tcrex.compare`` nor the population layer, and ``rule_stability`` has one path, ``tcrex.compare``."""
    import subprocess
    import sys
    code = ("import sys, tcrex; from tcrex import TCREx; "
            "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith(('tcrex.audit', 'tcrex.compare', "
            "'tcrex.population'))})); print(hasattr(tcrex, 'rule_stability')); import tcrex.compare; "
            "print(tcrex.compare.rule_stability.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == ["[]", "False", "tcrex.compare._stability"], out.stdout + out.stderr


# ------------------------------------------------------------------------------------------------ the checkers fail
def _synthetic(**modules) -> dict[str, tuple[str, bool]]:
    """Tiny trees: ``tcrex__figures__init`` -> ``tcrex.figures`` (a package), ``tcrex___data`` -> ``tcrex._data``."""
    out = {}
    for key, source in modules.items():
        name = key.replace("___", "._").replace("__", ".")
        is_package = name.endswith(".init")
        out[name[:-5] if is_package else name] = (source, is_package)
    return out


def test_checker_finds_a_planted_cycle():
    tree = _synthetic(tcrex__figures__a="from . import b\n", tcrex__figures__b="from .a import x\n")
    assert find_cycles(_graph(tree)) == [["tcrex.figures.a", "tcrex.figures.b", "tcrex.figures.a"]]
    # an import-time cycle through a package __init__ (core importing an outer package that imports the core)
    tree = _synthetic(tcrex__init="from ._core import f\n", tcrex___core="from .intake import g\n",
                      tcrex__intake__init="from .. import f\n")
    assert find_cycles(_graph(tree, module_level_only=True), skip_package_edges=False)
    assert not find_cycles(_graph(_synthetic(tcrex__init="from ._core import f\n",
                                             tcrex___core="def f():\n    from .intake import g\n",
                                             tcrex__intake__init="from .. import f\n"), module_level_only=True),
                           skip_package_edges=False)
    # the face re-exporting an outer layer that imports the face: a circle, though tcrex.compare is "inside" tcrex
    tree = _synthetic(tcrex__init="if TYPE_CHECKING:\n    from .compare import rule_stability\n",
                      tcrex__compare__init="from ._stability import rule_stability\n",
                      tcrex__compare___stability="from ..population import p\n",
                      tcrex__population__init="from .. import TCREx\n")
    assert find_cycles(layer_graph(tree), skip_package_edges=False) == [
        ["tcrex", "tcrex.compare", "tcrex.population", "tcrex"]]
    assert not find_cycles(_graph(tree))  # module by module, the package's re-export edge hides it


def test_checker_finds_planted_upward_imports():
    tree = _synthetic(
        tcrex__init="if TYPE_CHECKING:\n    from .compare import rule_stability\n",  # type-checking: caught
        tcrex___engine__init="", tcrex__text="def f():\n    from .figures import g\n",  # function-level: caught
        tcrex__population__init="from .. import TCREx\nfrom ..audit import a\n",
        tcrex__audit__init="from ..population import p\n", tcrex__compare__init="from ..population import p\n",
        tcrex__figures__init="from ..compare import c\nfrom ..report import r\n",  # outer to outer: one tier
        tcrex__report__init="from ..ui import u\n", tcrex__ui__init="from ..cli import main\nfrom ..figures import g\n",
        tcrex__cli__init="from ..ui import launch\n", tcrex____main__="from .cli import main\n",
        pages__p="from tcrex.ui import u\n")
    assert upward_imports(tree) == [
        "tcrex.population:2 (tcrex.population) imports tcrex.audit (tcrex.audit), a higher tier",
        "tcrex.report:1 (tcrex.report) imports tcrex.ui (tcrex.ui), a higher tier",
        "tcrex.text:2 (engine) imports tcrex.figures (tcrex.figures), a higher tier",
        "tcrex:2 (tcrex) imports tcrex.compare (tcrex.compare), a higher tier"]


def test_checker_finds_planted_private_imports():
    tree = _synthetic(tcrex___errors="class E(Exception): pass\n", tcrex__errors="from .errors import E\n",
                      tcrex__figures___style="from .._errors import E\n_helper = 1\n",
                      tcrex__figures__init="from ._style import _helper\n",  # its own package: allowed
                      tcrex__cli="from .figures._style import _helper\nfrom .errors import E\n",
                      tcrex__report="from .figures import _helper\n")
    found = private_imports(tree)
    assert found == ["tcrex.cli:1 imports private module tcrex.figures._style",
                     "tcrex.figures._style:1 imports private module tcrex._errors",
                     "tcrex.report:1 imports private name _helper from tcrex.figures"]


def test_checkers_find_a_planted_second_import_path():
    from types import SimpleNamespace

    tree = _synthetic(tcrex___errors="class E(Exception): pass\n", tcrex__errors="from .errors import E\n",
                      tcrex__figures___style="x = 1\n", tcrex__figures__style="", tcrex__figures___tree="y = 1\n")
    assert private_twins(tree) == ["tcrex._errors is the private twin of tcrex.errors",
                                   "tcrex.figures._style is the private twin of tcrex.figures.style"]

    class E(Exception):
        pass

    faces = {"tcrex": SimpleNamespace(__all__=["E", "f"], E=E, f=len),
             "tcrex.errors": SimpleNamespace(__all__=["E"], E=E),
             "tcrex.text": SimpleNamespace(__all__=["f"], f=print)}  # same name, another object: not a second path
    assert duplicate_public_paths(faces) == ["E is exported by tcrex, tcrex.errors"]


def test_checker_finds_a_planted_private_attribute_call():
    tree = _synthetic(tcrex___explainer="class TCREx:\n    def _require_fitted(self): pass\n"
                                        "    def f(self): self._require_fitted()\n",
                      tcrex__figures___style="def solution(ex):\n    ex._require_fitted()\n    return ex.mgr._lock\n",
                      tcrex__ui__page="import threading\n_lock = threading.Lock()\ndef f(m):\n    return m._lock\n",
                      # within the core: another module's object's private member
                      tcrex___verify="def points(ex, enc):\n    return ex._require_fitted()\n")
    assert private_attribute_uses(tree) == [
        "tcrex._verify:2 uses ex._require_fitted (private to another module)",
        "tcrex.figures._style:2 uses ex._require_fitted (private to another layer)",
        "tcrex.figures._style:3 uses ex.mgr._lock (private to another layer)"]


def test_checker_finds_typed_vocabulary():
    tree = _synthetic(tcrex__figures__a='SCORED = ("ok", "already_in_rule")\n'
                                        'def f(s, ex):\n    return s == "no_rule" or ex.task_ in ["regression"]\n',
                      tcrex__metrics='import numpy as np\ndef g(s, c):\n    return np.isin(s, ["ok"]), c["no_rule"]\n'
                                     'for st in ("ok", "no_rule"):\n    kind = "numeric" if st else "categorical"\n',
                      tcrex__vocabulary='OK = "ok"\n', tcrex__intake___worker='send({"ok": True})\n')
    assert typed_vocabulary(tree) == [
        "tcrex.figures.a:1 types ['already_in_rule', 'ok']", "tcrex.figures.a:3 types ['no_rule']",
        "tcrex.figures.a:3 types ['regression']", "tcrex.metrics:3 types ['no_rule']",
        "tcrex.metrics:3 types ['ok']", "tcrex.metrics:4 types ['no_rule', 'ok']",
        "tcrex.metrics:5 types ['categorical', 'numeric']"]


def test_layers_of_a_synthetic_tree_come_from_its_folders():
    tree = _synthetic(tcrex__init="", tcrex__text="", tcrex___engine__fitting___grid="", tcrex__newpkg__init="",
                      tcrex__newpkg___part="", tcrex__report__init="", tcrex__loose="")
    assert layer_of("tcrex.text", tree) == layer_of("tcrex.loose", tree) == ENGINE  # files at the root
    assert layer_of("tcrex._engine.fitting._grid", tree) == ENGINE  # a private folder of the root
    assert layer_of("tcrex.newpkg._part", tree) == "tcrex.newpkg"  # a new folder: a new layer, listed nowhere
    assert layer_of("tcrex.report", tree) == "tcrex.report"


def test_checker_finds_planted_layer_violations():
    tree = _synthetic(
        tcrex__init="if TYPE_CHECKING:\n    from ._engine._x import f\n    from .compare._s import g\n"
                    "    from .figures import h\n",  # the face: the engine only
        tcrex___engine__init="", tcrex___engine___x="from ..population import p\nfrom .. import f\n",
        tcrex__text="def t():\n    from .compare import c\n",  # an engine module, function-level: caught too
        tcrex__population__init="from ..audit import a\nfrom .. import f\n",
        tcrex__audit__init="from ..compare import c\nfrom ..population import p\nfrom .. import f\n",
        tcrex__compare__init="from ..audit import a\nfrom ..population import p\nfrom ..text import t\n",
        tcrex__compare___s="from ..figures import h\n",
        tcrex__figures__init="from ..audit import a\nfrom ..compare import c\nfrom ..ui import u\n",  # outer: free
        tcrex__ui__init="")
    assert layer_imports(tree) == [
        "tcrex._engine._x:1 (engine) imports tcrex.population (tcrex.population)",
        "tcrex._engine._x:2 (engine) imports tcrex (tcrex)",
        "tcrex.audit:1 (tcrex.audit) imports tcrex.compare (tcrex.compare)",
        "tcrex.compare._s:1 (tcrex.compare) imports tcrex.figures (tcrex.figures)",
        "tcrex.compare:1 (tcrex.compare) imports tcrex.audit (tcrex.audit)",
        "tcrex.population:1 (tcrex.population) imports tcrex.audit (tcrex.audit)",
        "tcrex.text:2 (engine) imports tcrex.compare (tcrex.compare)",
        "tcrex:3 (tcrex) imports tcrex.compare._s (tcrex.compare)",
        "tcrex:4 (tcrex) imports tcrex.figures (tcrex.figures)"]


def test_checker_finds_planted_private_imports_across_layers():
    """The audit, the comparison and the population layer reach the engine through its public names only; the face
    re-exports the engine's private modules (one package with the engine), never another layer's."""
    tree = _synthetic(tcrex__init="from ._engine._x import f\nfrom .compare._s import g\n",
                      tcrex___engine__init="", tcrex___engine___x="f = 1\n", tcrex__text="from ._engine._x import f\n",
                      tcrex__population__init="from .._engine._x import f\n",
                      tcrex__audit__init="from ..population._groups import p\nfrom .. import f\n",
                      tcrex__population___groups="p = 1\n", tcrex__compare__init="from ._s import g\n",
                      tcrex__compare___s="from .._engine import _x\n")
    assert private_imports(tree) == [
        "tcrex.audit:1 imports private module tcrex.population._groups",
        "tcrex.compare._s:1 imports private module tcrex._engine._x",
        "tcrex.population:1 imports private module tcrex._engine._x",
        "tcrex:2 imports private module tcrex.compare._s"]


def test_checker_finds_a_planted_later_stage_import():
    tree = _synthetic(tcrex___engine__init="", tcrex___engine__base___data="from ..fitting._grid import Grid\n",
                      tcrex___engine__fitting___grid="from ..base._data import x\n",
                      tcrex___engine__recourse___search="from ..explaining._lookup import y\n",
                      tcrex___engine__explaining___lookup="def f():\n    from .._explainer import TCREx\n",
                      tcrex___engine___explainer="from .recourse._search import z\n",
                      tcrex___engine__extras___misc="")
    assert stage_imports(tree) == [
        "tcrex._engine.base._data:1 imports the later stage tcrex._engine.fitting._grid",
        "tcrex._engine.explaining._lookup:2 imports the later stage tcrex._engine._explainer",
        "tcrex._engine.extras._misc is in a stage STAGES does not list"]


# ------------------------------------------------------------------------------------------------ one owner per job
#: the only module that gives a frame another frame's column dtypes (:func:`tcrex.conform_dtypes`): every frame
#: a model sees is conformed by that one rule (never a cast that changes a value)
DTYPE_OWNER = "tcrex._engine.base._data"
#: the only module that words a target, a class or a value label (:mod:`tcrex.text`)
WORDING_OWNER = "tcrex.text"
#: how a target is worded: "output > 5", "output above 5", "output ≤ 5", "output in (1, 2]", "7 or better"
TARGET_WORDS = re.compile(r"\boutput (above|below|at or below|at least|at most|[<>≤≥=]|in [({])")
ORDERED_WORDS = re.compile(r"^\s*or (better|lower|worse|higher)\b")


def _dtype_reads(func: ast.AST) -> set[str]:
    """Names a function binds to a dtype read from a frame (``dtype = X[c].dtype``, ``for c, d in X.dtypes.items()``)."""
    names = set()
    for node in ast.walk(func):
        targets, value = [], None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, (ast.For, ast.comprehension)):
            targets, value = [node.target], node.iter
        if value is not None and _reads_dtype(value, set()):
            for t in targets:
                names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _reads_dtype(node: ast.AST, names: set[str]) -> bool:
    """Whether ``node`` reads a frame's dtypes: ``X[c].dtype`` (a column's), ``X.dtypes``, or a name bound to one."""
    return any((isinstance(n, ast.Attribute) and (n.attr == "dtypes" or
                                                   (n.attr == "dtype" and isinstance(n.value, ast.Subscript)))) or
               (isinstance(n, ast.Name) and n.id in names) for n in ast.walk(node))


def conformed_elsewhere(sources) -> list[str]:
    """A frame given another frame's dtypes outside the owner: ``.astype(...)`` to a dtype read from a frame (``X[c]
    .dtype``, ``X.dtypes``, or a name bound to one) -- the job of :func:`tcrex.conform_dtypes`, whose rule (a
    cast never changes a value) every model call must follow."""
    found = []
    for mod, (src, _) in sources.items():
        if mod == DTYPE_OWNER:
            continue
        tree = ast.parse(src)
        scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))] or [tree]
        seen = set()
        for scope in [tree, *scopes]:
            names = _dtype_reads(scope)
            for node in ast.walk(scope):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "astype" \
                        and any(_reads_dtype(a, names) for a in [*node.args, *(k.value for k in node.keywords)]) \
                        and node.lineno not in seen:
                    seen.add(node.lineno)
                    found.append(f"{mod}:{node.lineno} casts to a frame's dtype (use tcrex.conform_dtypes)")
    return sorted(found)


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            out.add(id(body[0].value))
    return out


def reworded_targets(sources) -> list[str]:
    """A target worded outside :mod:`tcrex.text`: a string (not a docstring) saying "output > …", "output above …",
    "output ≤ …", "output in (…"; or an f-string that puts "or better" / "or lower" after a value."""
    found = []
    for mod, (src, _) in sources.items():
        if mod == WORDING_OWNER:
            continue
        tree = ast.parse(src)
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                    and TARGET_WORDS.search(node.value):
                found.append(f"{mod}:{node.lineno} words a target (use tcrex.text.target_text / target_spec_text)")
            elif isinstance(node, ast.JoinedStr):
                parts = node.values
                for before, part in zip(parts, parts[1:]):
                    if isinstance(before, ast.FormattedValue) and isinstance(part, ast.Constant) \
                            and ORDERED_WORDS.search(str(part.value)):
                        found.append(f"{mod}:{node.lineno} words an ordered target (use tcrex.text.ordered_text)")
    return sorted(set(found))


#: the only module that measures a model (:mod:`tcrex.performance`: :func:`~tcrex.performance.score`,
#: :func:`~tcrex.performance.model_performance`)
METRIC_OWNER = "tcrex.performance"
#: names that hold a sum of squares in a hand-written R² (``1 - ss_res / ss_tot``)
SQUARES_NAMES = re.compile(r"^(ss_?\w*|sse|sst|rss|tss)$")


def _squares(node: ast.AST) -> bool:
    """A sum of squares: ``... ** 2``, a ``sum``/``var`` call, or a name that says so (``ss_res``)."""
    return any((isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)) or
               (isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", "")) in ("sum", "var")) or
               (isinstance(n, ast.Name) and SQUARES_NAMES.match(n.id)) for n in ast.walk(node))


def _share_equal(node: ast.AST) -> bool:
    """``mean(a == b)`` / ``(a == b).mean()`` / ``average(a == b)`` of two values (not against a constant): an accuracy."""
    if not isinstance(node, ast.Call):
        return False
    name = getattr(node.func, "attr", getattr(node.func, "id", ""))
    if name not in ("mean", "average"):
        return False
    args = node.args[:1] if node.args else [node.func.value] if isinstance(node.func, ast.Attribute) else []
    return any(isinstance(a, ast.Compare) and any(isinstance(o, ast.Eq) for o in a.ops)
               and not any(isinstance(x, ast.Constant) for x in [a.left, *a.comparators]) for a in args)


def handwritten_metrics(sources) -> list[str]:
    """A model measured outside :mod:`tcrex.performance`: ``sklearn.metrics`` imported, an R² written out (``1 -
    ss_res / ss_tot``) or an accuracy written out (``np.mean(pred == y)``)."""
    found = []
    for mod, (src, _) in sources.items():
        if mod == METRIC_OWNER:
            continue
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sklearn.metrics") or \
                    isinstance(node, ast.ImportFrom) and node.module == "sklearn" and \
                    any(a.name == "metrics" for a in node.names) or \
                    isinstance(node, ast.Import) and any(a.name.startswith("sklearn.metrics") for a in node.names):
                found.append(f"{mod}:{node.lineno} imports sklearn.metrics (use tcrex.performance.score)")
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and isinstance(node.left, ast.Constant) \
                    and node.left.value == 1 and isinstance(node.right, ast.BinOp) \
                    and isinstance(node.right.op, ast.Div) and _squares(node.right):
                found.append(f"{mod}:{node.lineno} writes R² out (use tcrex.performance.score)")
            elif _share_equal(node):
                found.append(f"{mod}:{node.lineno} writes an accuracy out (use tcrex.performance.score)")
    return sorted(set(found))


def test_models_are_measured_by_one_owner():
    found = handwritten_metrics(_tree_sources())
    assert not found, "a model measured outside tcrex.performance:\n" + "\n".join(found)


def test_checker_finds_planted_handwritten_metrics():
    tree = _synthetic(
        tcrex__ui__state__training="import numpy as np\ndef f(y, pred):\n    ss_res = np.sum((y - pred) ** 2)\n"
                                   "    ss_tot = float(np.sum((y - y.mean()) ** 2)) or 1.0\n"
                                   "    return 1.0 - ss_res / ss_tot, np.mean(pred == y)\n",
        tcrex__ui__state__sources="def g(t, p):\n    return 1 - ((t - p) ** 2).sum() / ((t - t.mean()) ** 2).sum(), "
                                  "(p.astype(str) == t.astype(str)).mean()\n",
        tcrex__datasets="from sklearn.metrics import accuracy_score\n",
        tcrex__cli___x="from sklearn import metrics\nimport sklearn.metrics\n",
        tcrex__intake___enc="def h(b, n, k):\n    return (b == 0).mean(axis=0), 1 - n / k\n",  # not a model's figure
        tcrex__performance="from sklearn.metrics import r2_score\ndef score(t, p):\n    return (t == p).mean()\n")
    assert handwritten_metrics(tree) == [
        "tcrex.cli._x:1 imports sklearn.metrics (use tcrex.performance.score)",
        "tcrex.cli._x:2 imports sklearn.metrics (use tcrex.performance.score)",
        "tcrex.datasets:1 imports sklearn.metrics (use tcrex.performance.score)",
        "tcrex.ui.state.sources:2 writes R² out (use tcrex.performance.score)",
        "tcrex.ui.state.sources:2 writes an accuracy out (use tcrex.performance.score)",
        "tcrex.ui.state.training:5 writes R² out (use tcrex.performance.score)",
        "tcrex.ui.state.training:5 writes an accuracy out (use tcrex.performance.score)"]


def test_frames_are_conformed_by_one_owner():
    found = conformed_elsewhere(_tree_sources())
    assert not found, "a frame's dtypes set outside the owner:\n" + "\n".join(found)


def test_targets_are_worded_by_one_owner():
    found = reworded_targets(_tree_sources())
    assert not found, "a target worded outside tcrex.text:\n" + "\n".join(found)


def test_checker_finds_a_planted_dtype_cast():
    tree = _synthetic(
        tcrex__compare='def with_dtypes_of(points, X):\n    out = points.copy()\n    for c in X.columns:\n'
                       '        dtype = X[c].dtype\n        out[c] = out[c].astype(dtype)\n    return out\n',
        tcrex___stability='def f(rows, Xf, model):\n    return model.predict(rows.astype(Xf.dtypes.to_dict()))\n',
        tcrex__figures__a='def g(s, y):\n    return s.astype(float), s.astype("category"), s.astype(y.dtype)\n',  # no frame's
        tcrex___engine__base___data='def conform_dtypes(X, like):\n    return X.astype(like.dtypes)\n')  # the owner
    assert conformed_elsewhere(tree) == [
        "tcrex._stability:2 casts to a frame's dtype (use tcrex.conform_dtypes)",
        "tcrex.compare:5 casts to a frame's dtype (use tcrex.conform_dtypes)"]


def test_checker_finds_a_planted_target_wording():
    tree = _synthetic(
        tcrex__ui__state='def name(low, high, b):\n    if high is None:\n        return f"output above {low}"\n'
                         '    return f"{b} or lower" if b else "output > " + str(low)\n',
        tcrex___targets='def describe(self):\n    """The outcome: "output > 5.818"."""\n'
                        '    return f"output ≤ {self.high}"\n',
        tcrex__figures__a='TITLE = "Model output over the rows"\nLABEL = f"{n} rules or more"\n',  # not a target
        tcrex__text='def interval_text(low):\n    return f"output > {low}"\n')  # the owner
    assert reworded_targets(tree) == [
        "tcrex._targets:3 words a target (use tcrex.text.target_text / target_spec_text)",
        "tcrex.ui.state:3 words a target (use tcrex.text.target_text / target_spec_text)",
        "tcrex.ui.state:4 words a target (use tcrex.text.target_text / target_spec_text)",
        "tcrex.ui.state:4 words an ordered target (use tcrex.text.ordered_text)"]
