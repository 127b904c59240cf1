"""Test support: start a server program on a free loopback port, and wait for events instead of sleeping.

Picking a port by binding port 0, closing the socket and passing the number to a program races with every other
process on the machine (the port can be taken between the close and the program's own bind). A program that binds
for itself cannot be handed the socket, so :func:`serve_on_free_port` retries on a clash instead: it starts the
program, waits until *that program* (or a child of it) listens on the port -- not merely until something answers
there -- and, if the program exits saying the address is in use, starts it again on another port.

:func:`wait_until` is the one polling loop of the suite: it waits for a condition (a file appears, an endpoint
answers, a log line is written), never for a fixed time, and fails naming what it waited for. Its limit is a
generous bound on a hang, not a speed expectation.
"""
from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

#: What the server programs of this suite print when another process holds the port (Streamlit: "Port N is already
#: in use"; Tornado, asyncio and Dask: "[Errno 98] Address already in use").
_CLASH_WORDS = ("already in use", "address in use")


def wait_until(condition: Callable[[], object], what: str, limit_s: float = 120.0, every_s: float = 0.1):
    """Call ``condition`` until it returns something truthy and return that; after ``limit_s`` seconds without it,
    raise ``AssertionError`` naming ``what`` was awaited. ``limit_s`` only bounds a hang: no test result depends
    on how soon the event comes."""
    give_up = time.monotonic() + limit_s
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > give_up:
            raise AssertionError(f"waited {limit_s:g} s for {what}; it never happened")
        time.sleep(every_s)


def free_port() -> int:
    """A port that was free a moment ago. Only :func:`serve_on_free_port` calls it: it retries when the port is
    taken before the program binds it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listens_on(proc: subprocess.Popen, port: int) -> bool:
    """True when ``proc`` or one of its descendants holds a listening TCP socket on ``port``."""
    import psutil

    try:
        root = psutil.Process(proc.pid)
        family = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return False
    for p in family:
        try:
            conns = p.net_connections(kind="tcp")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port for c in conns):
            return True
    return False


def stop(proc: subprocess.Popen, grace_s: float = 20.0) -> None:
    """Terminate ``proc`` and reap it (killed if it does not exit within ``grace_s``)."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return f"(no log at {path})"


def serve_on_free_port(command: Callable[[int], Sequence[str]], log_path: Path, *,
                       ready: Callable[[int], bool] | None = None, attempts: int = 5, limit_s: float = 180.0,
                       **popen_kwargs) -> tuple[subprocess.Popen, int]:
    """Start ``command(port)`` on a free loopback port and return ``(process, port)`` once the process listens on
    the port and ``ready(port)`` (if given, e.g. a health endpoint) is true. Output goes to ``log_path``
    (appended per attempt). A start that fails because the port was taken meanwhile is retried on another port,
    up to ``attempts`` times; any other exit fails with the log's tail. The caller stops the process
    (:func:`stop`)."""
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")
    for attempt in range(1, attempts + 1):
        port = free_port()
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(f"--- attempt {attempt}: port {port}\n")
            log.flush()
            proc = subprocess.Popen(list(command(port)), stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, **popen_kwargs)
        try:
            wait_until(lambda: proc.poll() is not None or (listens_on(proc, port) and (ready is None or ready(port))),
                       f"{command(port)[0]} to serve on port {port} (log: {log_path})", limit_s=limit_s, every_s=0.2)
        except BaseException:
            stop(proc)
            raise
        if proc.poll() is None:
            return proc, port
        text = log_path.read_text(errors="replace").lower()
        last_attempt = text.rsplit("--- attempt", 1)[-1]
        if not any(w in last_attempt for w in _CLASH_WORDS):
            raise AssertionError(f"{command(port)[0]} exited with code {proc.returncode} while starting on port "
                                 f"{port}:\n{tail(log_path)}")
    raise AssertionError(f"{attempts} ports in a row were taken before the server bound them:\n{tail(log_path)}")


def answers(url: str, expect: str | None = None) -> bool:
    """True when ``url`` answers HTTP 200 (directly, whatever ``http_proxy`` says), and its body is ``expect`` if
    given; False while nothing answers there yet."""
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as resp:
            return resp.status == 200 and (expect is None or resp.read().decode() == expect)
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


@contextlib.contextmanager
def postgres_server(password: str | None = None):
    """A PostgreSQL server of the test's own (Debian's binaries; run as the ``postgres`` user when the tests run as
    root, since initdb refuses root) in a temporary folder on a free loopback port; yields its URL and removes
    everything afterwards. With ``password``, connections over TCP need it (scram-sha-256; the URL yielded carries
    it), else every connection is trusted. Skips (fails under ``TCREX_REQUIRE_POSTGRES=1``, set by .ci/run) when PostgreSQL is
    not installed: ``make test`` installs it."""
    import pytest

    initdb = shutil.which("initdb") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))), None)
    if initdb is None:
        message = "PostgreSQL is not installed (make test installs Debian's postgresql when run as root)"
        if os.environ.get("TCREX_REQUIRE_POSTGRES"):
            pytest.fail(message + "; TCREX_REQUIRE_POSTGRES=1 forbids skipping")
        pytest.skip(message)
    initdb = os.path.realpath(initdb)
    pg_ctl = os.path.join(os.path.dirname(initdb), "pg_ctl")
    # Not under pytest's tmp_path: that folder is private to root, and the server runs as another user.
    home = Path(tempfile.mkdtemp(prefix="tcrex-pg-"))
    home.chmod(0o755)
    data = home / "data"
    data.mkdir()
    run_as = []
    if os.geteuid() == 0:
        shutil.chown(data, "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    try:
        auth = ["-A", "trust"]
        if password is not None:
            pwfile = home / "pw"
            pwfile.write_text(password + "\n")
            pwfile.chmod(0o644)
            auth = ["--auth-host=scram-sha-256", "--auth-local=trust", f"--pwfile={pwfile}"]
        subprocess.run(run_as + [initdb, "-D", str(data), *auth, "-U", "postgres"], check=True, capture_output=True)
        for _ in range(5):  # a port taken between the probe and the server's bind: start again on another
            port = free_port()
            started = subprocess.run(run_as + [pg_ctl, "-D", str(data), "-w", "-l", str(data / "log"), "-o",
                                               f"-p {port} -k {data} -c listen_addresses=127.0.0.1", "start"],
                                     capture_output=True)
            if started.returncode == 0:
                break
        else:
            raise AssertionError(f"PostgreSQL did not start: {started.stderr.decode()[-500:]}")
        try:
            user = "postgres" if password is None else f"postgres:{password}"
            yield f"postgresql://{user}@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(run_as + [pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
