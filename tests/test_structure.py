"""Structure anyone can rerun: the import graph of tcrex/, pages/ and app.py, built with ast.

Packages, precisely (``package_of``):

* the engine core ``tcrex``: ``tcrex/__init__.py``, the private modules ``tcrex/_*.py`` and the public top-level
  modules that are part of the engine (``text``, ``errors``, ``constraints``, ``vocabulary``, ``compare``,
  ``metrics``, ``datasets``, ``spreadsheet``);
* the audit, ``tcrex.audit``, is the engine's too: a subpackage only to split it by concern (counting, bootstrap,
  wording), so its modules belong to the core;
* every other subpackage is a package of its own: ``tcrex.figures``, ``tcrex.intake``, ``tcrex.distributed``,
  ``tcrex.ui``. The intake is *not* engine: it reads uploads for the dashboard and the CLI, and uses the core's
  public names only (``tcrex``, ``tcrex.errors``, ``tcrex.vocabulary``) like every other outer package;
* the outer top-level modules ``tcrex.cli``, ``tcrex.report`` and ``tcrex.__main__`` are one package each;
* ``pages/`` and ``app.py`` form the package ``app``.

Fails on (a) import cycles (all imports; and, separately, import-time cycles of module-level imports including a
package's own ``__init__``), (b) a module importing another package's private module (a dotted part starting with
``_``) or a private name (``from x import _y``) from another package, (c) a module reading a private attribute
(``obj._name``, ``obj._name()``; not on ``self``/``cls``) that another tcrex package defines and its own package
does not -- within the engine core, that another core module defines and its own module does not: core modules
pass state explicitly (private attributes of third-party objects, e.g. Streamlit's media store, are not tcrex's to
police here), (d) the vocabulary (tasks, feature kinds, statuses) typed again as strings instead of
imported from its owner, (e) streamlit imported by anything but the dashboard, (f) a name in an ``__all__`` that
the module does not define, (g) a public name with two import paths: a public module beside a private twin of the
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

#: top-level modules of tcrex that are outer packages of their own (everything else at the top level is core)
OUTER_MODULES = {"tcrex.cli", "tcrex.report", "tcrex.__main__"}
#: subpackages that are part of the engine core (split by concern, not a package boundary)
CORE_SUBPACKAGES = {"tcrex.audit"}
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


def package_of(mod: str) -> str:
    parts = mod.split(".")
    if parts[0] != "tcrex":
        return "app"  # pages/*, app.py
    if len(parts) == 1:
        return "tcrex"
    if mod in OUTER_MODULES:
        return mod
    if ".".join(parts[:2]) in CORE_SUBPACKAGES:
        return "tcrex"
    if len(parts) >= 3 or mod in _subpackages():
        return ".".join(parts[:2])
    return "tcrex"


def _subpackages() -> set[str]:
    return {_module_name(f) for f in _files() if f.name == "__init__.py" and f.parent != ROOT / "tcrex"}


def _private(mod: str) -> bool:
    return any(p.startswith("_") and not p.startswith("__") for p in mod.split("."))


def _private_name(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


# ------------------------------------------------------------------------------------------------ imports
def _import_nodes(tree: ast.AST, module_level_only: bool = False):
    """Import statements of a module; ``module_level_only`` leaves out those inside functions (run later)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if module_level_only and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
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


def private_imports(sources) -> list[str]:
    """Imports of another package's private module, or of a private name from another package's module."""
    known = set(sources)
    found = []
    for mod, (src, is_package) in sources.items():
        own = package_of(mod)
        for node in _import_nodes(ast.parse(src)):
            if isinstance(node, ast.Import):
                targets = [(a.name, None) for a in node.names]
            else:
                base = _resolve(mod, is_package, node)
                targets = [(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base, a.name) for a in node.names]
            for target, name in targets:
                if target not in known or package_of(target) == own:
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


def _owner(mod: str) -> str:
    """Who may read a private attribute: its package, or within the engine core its module (each core module
    passes state explicitly, never through another module's objects' private members)."""
    own = package_of(mod)
    return mod if own == "tcrex" else own


def private_attribute_uses(sources) -> list[str]:
    """``obj._name`` where ``_name`` is defined only by another tcrex package (by another module, in the core)."""
    by_package: dict[str, set[str]] = {}
    for mod, (src, _) in sources.items():
        by_package.setdefault(_owner(mod), set()).update(_defined_private_names(src))
    found = []
    for mod, (src, _) in sources.items():
        own = _owner(mod)
        others = set().union(*(names for p, names in by_package.items() if p != own)) if len(by_package) > 1 \
            else set()
        for node in ast.walk(ast.parse(src)):
            if not (isinstance(node, ast.Attribute) and _private_name(node.attr)):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if node.attr in others and node.attr not in by_package.get(own, set()):
                where = "module" if own == mod else "package"
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
def test_no_import_cycles():
    cycles = find_cycles(_graph(_tree_sources()))
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
        if package_of(mod) not in ("tcrex.ui", "app") and any(
                m == "streamlit" or m.startswith("streamlit.") for m in _imports(mod, src, pkg)):
            offenders.append(mod)
    assert not offenders, f"modules outside the dashboard importing streamlit: {offenders}"


@pytest.mark.parametrize("module", ["tcrex", "tcrex.vocabulary", "tcrex.errors", "tcrex.constraints", "tcrex.compare",
                                    "tcrex.text", "tcrex.audit", "tcrex.metrics", "tcrex.figures", "tcrex.intake",
                                    "tcrex.intake.data", "tcrex.distributed", "tcrex.datasets"])
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
    """``tcrex --help`` imports ``tcrex.cli``: that must not load scikit-learn, pandas or numpy (issue #38: 2 s and
    215 MB before any command ran); commands import what they need inside their bodies."""
    import subprocess
    import sys
    code = ("import sys, tcrex.cli, tcrex.__main__; "
            "print(sorted(m for m in ('sklearn', 'pandas', 'numpy', 'scipy', 'pyarrow', 'fsspec') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr

def test_packages_are_what_the_docstring_says():
    assert package_of("tcrex._explainer") == package_of("tcrex.text") == package_of("tcrex.audit") == "tcrex"
    assert package_of("tcrex.audit._bootstrap") == "tcrex"
    assert package_of("tcrex.figures._style") == package_of("tcrex.figures") == "tcrex.figures"
    assert package_of("tcrex.intake.data") == "tcrex.intake"
    assert package_of("tcrex.cli") == "tcrex.cli" and package_of("tcrex.report") == "tcrex.report"
    assert package_of("pages.views.individual") == package_of("app") == "app"


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
        "tcrex.figures._style:2 uses ex._require_fitted (private to another package)",
        "tcrex.figures._style:3 uses ex.mgr._lock (private to another package)"]


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


# ------------------------------------------------------------------------------------------------ one owner per job
#: the only module that gives a frame another frame's column dtypes (:func:`tcrex._data.conform_dtypes`): every frame
#: a model sees is conformed by that one rule (never a cast that changes a value)
DTYPE_OWNER = "tcrex._data"
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
    .dtype``, ``X.dtypes``, or a name bound to one) -- the job of :func:`tcrex._data.conform_dtypes`, whose rule (a
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
                    found.append(f"{mod}:{node.lineno} casts to a frame's dtype (use tcrex._data.conform_dtypes)")
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
        tcrex___data='def conform_dtypes(X, like):\n    return X.astype(like.dtypes)\n')  # the owner
    assert conformed_elsewhere(tree) == [
        "tcrex._stability:2 casts to a frame's dtype (use tcrex._data.conform_dtypes)",
        "tcrex.compare:5 casts to a frame's dtype (use tcrex._data.conform_dtypes)"]


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
