"""The Streamlit internals the dashboard uses, all in tcrex/ui/state/st_compat.py, checked against the installed Streamlit.

A Streamlit release that moves one of them must fail here (and at the dashboard's start, with the same message),
never silently: no module outside st_compat imports from Streamlit's private modules.
"""
import ast
from pathlib import Path

import pytest
import streamlit

from tcrex.ui.state import st_compat

ROOT = Path(__file__).resolve().parents[2]


def test_installed_streamlit_is_supported_and_every_internal_resolves():
    st_compat.check()  # raises UnsupportedStreamlit naming the missing internal
    assert st_compat.parse_version(streamlit.__version__) >= st_compat.SUPPORTED[0]
    for name in ("_calculate_file_id", "_Runtime", "_get_script_run_ctx", "_PagesManager", "_cli_main"):
        assert getattr(st_compat, name) is not None, name


@pytest.mark.parametrize("version", ["1.49.2", "0.89.0", "2.0.0", "2.3.1rc1", "3.0"])
def test_unsupported_versions_are_refused_with_what_to_install(version):
    with pytest.raises(st_compat.UnsupportedStreamlit, match=r"streamlit>=1\.50,<2\.0"):
        st_compat.check_version(version)


@pytest.mark.parametrize("version", ["1.50.0", "1.67.0", "1.99.9"])
def test_supported_versions_pass(version):
    st_compat.check_version(version)


def test_a_missing_internal_is_named():
    with pytest.raises(st_compat.UnsupportedStreamlit, match="streamlit.runtime.Runtime.no_such_method"):
        st_compat._resolve("streamlit.runtime", "Runtime", "no_such_method")
    with pytest.raises(st_compat.UnsupportedStreamlit, match="no module streamlit.no_such_module"):
        st_compat._resolve("streamlit.no_such_module", "x")


def test_the_gate_matches_the_declared_requirement():
    """requirements.txt and the app extra allow exactly the versions st_compat supports."""
    (a, b), (c, d) = st_compat.SUPPORTED
    bound = f"streamlit>={a}.{b},<{c}"
    assert bound in (ROOT / "requirements.txt").read_text()
    assert f'"{bound}"' in (ROOT / "pyproject.toml").read_text()


def test_no_other_module_reaches_into_streamlit_internals():
    """Only st_compat imports streamlit.runtime / streamlit.web or reads Streamlit's private names."""
    offenders = []
    for path in sorted([*ROOT.glob("tcrex/**/*.py"), ROOT / "app.py", *ROOT.glob("pages/**/*.py")]):
        if path.name == "st_compat.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name.startswith(("streamlit.runtime", "streamlit.web", "streamlit.elements")):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
            if isinstance(node, ast.Attribute) and node.attr in ("fragment_ids_this_run", "uses_pages_directory",
                                                                 "uploaded_file_mgr", "media_file_mgr"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} reads .{node.attr}")
    assert not offenders, offenders
