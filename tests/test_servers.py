"""The suite's one way to start a server on a free port (``tests/support/servers.py``): a port taken between choosing it and
the program's bind is retried on another port, and only the started program listening counts as "serving" --
something else answering on the port does not."""
import socket
import sys

import pytest

from tests.support import servers


def _http_server(port):
    return [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]


@pytest.fixture
def taken_port():
    """A port some other process holds (a listening socket of this test process)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_port_taken_before_the_bind_is_retried_on_another(monkeypatch, tmp_path, taken_port):
    offered = iter([taken_port])
    real = servers.free_port
    monkeypatch.setattr(servers, "free_port", lambda: next(offered, None) or real())
    proc, port = servers.serve_on_free_port(_http_server, tmp_path / "server.log",
                                            ready=lambda p: servers.answers(f"http://127.0.0.1:{p}/"))
    try:
        assert port != taken_port and servers.listens_on(proc, port)
        log = (tmp_path / "server.log").read_text()
        assert f"attempt 1: port {taken_port}" in log and "already in use" in log.lower()
        assert f"attempt 2: port {port}" in log
    finally:
        servers.stop(proc)
    assert proc.poll() is not None


def test_another_process_on_the_port_is_not_mistaken_for_the_server(taken_port, tmp_path):
    import subprocess

    sleeper = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert not servers.listens_on(sleeper, taken_port)  # the port answers, but not from this process
    finally:
        sleeper.communicate("")


def test_a_server_that_fails_for_another_reason_is_reported_with_its_log(tmp_path):
    with pytest.raises(AssertionError, match=r"exited with code 3 while starting(.|\n)*no config here"):
        servers.serve_on_free_port(lambda port: [sys.executable, "-c", "import sys; print('no config here'); "
                                                 "sys.exit(3)"], tmp_path / "server.log")


def test_wait_until_returns_the_condition_and_names_what_never_came():
    assert servers.wait_until(lambda: "here", "a value") == "here"
    with pytest.raises(AssertionError, match="waited 0.2 s for the planted event"):
        servers.wait_until(lambda: None, "the planted event", limit_s=0.2, every_s=0.05)
