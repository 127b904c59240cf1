"""The layout of tests/ itself: shared helpers live in one package, ``tests/support``, imported one way.

A test module never imports another test module, a ``conftest.py`` or a helper kept beside some tests: what two
test modules share goes to ``tests/support/`` and is imported as ``from tests.support.<module> import <name>``
(``tests`` resolves through ``pythonpath = .`` in pytest.ini, from any directory and in any import mode). Fixtures
stay in ``conftest.py`` files, which pytest finds on its own. :func:`layout_problems` reads every ``.py`` file under
``tests/`` with ast (imports inside functions too) and resolves each import the ways Python could, given the
directories pytest puts on ``sys.path`` (``tests/`` for the root conftest and for packages such as
``tests/engine``, and each test directory without ``__init__.py``); the tests at the end plant violations in a
tiny tree and see them caught.
"""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUPPORT = "support"
STYLE = "from tests.support.<module> import <name>"


def _import_roots(tests: Path) -> list[Path]:
    """Where a bare import inside tests/ can resolve: tests/ itself and every directory under it that is not a
    package (pytest's rootdir-relative ``prepend`` import mode puts each on ``sys.path``)."""
    return [tests] + sorted(d for d in tests.rglob("*") if d.is_dir() and not (d / "__init__.py").exists()
                            and "__pycache__" not in d.parts)


def _resolve(base: Path, dotted: str) -> Path | None:
    """The file ``dotted`` names below ``base`` (a module or a package), if there is one."""
    path = base.joinpath(*dotted.split(".")) if dotted else base
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(node: ast.AST) -> list[tuple[int, str, list[str]]]:
    """(level, module, names) of an import statement; ``import a.b`` gives (0, "a.b", [])."""
    if isinstance(node, ast.Import):
        return [(0, alias.name, []) for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [(node.level, node.module or "", [alias.name for alias in node.names])]
    return []


def _targets(tests: Path, source: Path, level: int, module: str, names: list[str]) -> list[tuple[Path, bool]]:
    """Files under ``tests`` this import can load, each with whether it is spelled ``tests.support...``."""
    found = []
    if level:
        base = source.parent
        for _ in range(level - 1):
            base = base.parent
        bases = [(base, False)]
    else:
        head, _, rest = module.partition(".")
        bases = [(root, False) for root in _import_roots(tests)]
        if head == "tests":  # pythonpath = . makes the repository root importable
            bases = [(tests, rest == SUPPORT or rest.startswith(SUPPORT + "."))]
            module = rest
    for base, styled in bases:
        hit = _resolve(base, module)
        if hit is not None:
            found.append((hit, styled))
        for name in names:  # ``from pkg import module``
            sub = _resolve(base, f"{module}.{name}" if module else name)
            if sub is not None:
                found.append((sub, styled))
    return found


def layout_problems(tests: Path) -> list[str]:
    """Every import under ``tests`` of a file under ``tests`` that is not in ``tests/support``, or of
    ``tests/support`` spelled another way than ``tests.support``."""
    support = tests / SUPPORT
    problems = []
    for source in sorted(tests.rglob("*.py")):
        if "__pycache__" in source.parts:
            continue
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
        for node in ast.walk(tree):
            for level, module, names in _imported(node):
                for target, styled in _targets(tests, source, level, module, names):
                    if target == source or target.name == "__init__.py" and target.parent == tests:
                        continue
                    where = f"{source.relative_to(tests)}:{node.lineno}"
                    what = target.relative_to(tests)
                    if support not in target.parents:
                        kind = "a conftest" if target.name == "conftest.py" else (
                            "a test module" if target.name.startswith("test_") else "a helper outside tests/support")
                        problems.append(f"{where} imports {kind}, {what}: move what is shared to tests/support/")
                    elif not styled:
                        problems.append(f"{where} imports {what} another way: write {STYLE}")
    return sorted(set(problems))


def test_tests_import_shared_code_from_tests_support_only():
    assert layout_problems(TESTS) == []


def test_support_is_a_package_of_helpers_without_tests():
    support = TESTS / SUPPORT
    assert (support / "__init__.py").is_file()
    assert not [p.name for p in support.rglob("test_*.py")], "tests/support holds helpers, not tests"
    assert not (support / "conftest.py").exists(), "fixtures belong in a conftest.py beside the tests"


# ------------------------------------------------------------------------------------------------ planted
def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_planted_imports_of_test_modules_conftests_and_stray_helpers_are_caught(tmp_path):
    tests = _tree(tmp_path / "tests", {
        "conftest.py": "",
        "support/__init__.py": "",
        "support/servers.py": "def stop(p): ...\n",
        "support/browser.py": "from tests.support.servers import stop\n",
        "engine/__init__.py": "",
        "engine/test_verify.py": "def owner_model(Z): ...\n",
        "engine/test_batch.py": "from .test_verify import owner_model\n",
        "e2e/conftest.py": "WAIT = 1\n",
        "e2e/test_pages.py": "def assert_no_errors(page): ...\n",
        "e2e/test_upload.py": ("from e2e.test_pages import assert_no_errors\n"
                               "def test_x():\n    from conftest import WAIT\n"),
        "e2e/test_compare.py": "from test_pages import assert_no_errors\n",
        "ui/kit.py": "def goto(at, page): ...\n",
        "ui/test_app.py": "from kit import goto\nimport tests.support.servers\n",
        "test_wheel.py": "from support.servers import stop\nfrom tests.support import servers\n",
        "test_ok.py": "from tests.support.servers import stop\nfrom tests.support.browser import stop as s\n",
    })
    problems = layout_problems(tests)
    assert problems == sorted([
        "e2e/test_compare.py:1 imports a test module, e2e/test_pages.py: move what is shared to tests/support/",
        "e2e/test_upload.py:1 imports a test module, e2e/test_pages.py: move what is shared to tests/support/",
        # a bare ``conftest`` is whichever conftest was imported last: both are reported
        "e2e/test_upload.py:3 imports a conftest, conftest.py: move what is shared to tests/support/",
        "e2e/test_upload.py:3 imports a conftest, e2e/conftest.py: move what is shared to tests/support/",
        "engine/test_batch.py:1 imports a test module, engine/test_verify.py: move what is shared to tests/support/",
        "test_wheel.py:1 imports support/servers.py another way: write " + STYLE,
        "ui/test_app.py:1 imports a helper outside tests/support, ui/kit.py: move what is shared to tests/support/",
    ]), problems
