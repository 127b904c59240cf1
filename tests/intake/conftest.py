import pytest


@pytest.fixture(autouse=True)
def _in_process_models(monkeypatch, request):
    """The format validators are tested in-process (fast); test_sandbox.py tests the worker process itself."""
    if "sandbox" not in request.node.fspath.basename:
        monkeypatch.setenv("TCREX_SANDBOX", "0")
