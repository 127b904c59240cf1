"""Broken workspace archives and stores under faults get a message saying what is wrong and what to do, never a
traceback: damaged (bad CRC), forged sizes, encrypted, unknown compression, settings nested too deeply; a state
folder that is a file, a link loop, read-only or on a full disk; PostgreSQL with a wrong password, no server, an
unknown user, a dropped connection; a NUL byte in an upload's name.

Real zip archives (built with zipfile, then edited byte by byte as a forger would), real SQLite files, real
file systems (a small tmpfs, mounted when the tests run as root; skipped otherwise), a real PostgreSQL server.
"""
from __future__ import annotations

import gc
import io
import json
import os
import struct
import subprocess
import zipfile

import pytest
from click.testing import CliRunner

from tcrex.cli import main
from tcrex.errors import StoreError
from tcrex.workspace import (StoreUnavailable, WorkspaceError, WorkspaceStore, export_workspace, import_workspace)

from tests.support.servers import free_port, postgres_server

UPLOAD = b"age,income\n" + b"".join(b"%d,%d\n" % (20 + i % 50, 1000 * i) for i in range(400))


@pytest.fixture
def store(tmp_path):
    return WorkspaceStore(str(tmp_path / "state"))


@pytest.fixture
def archive(store):
    """A sound workspace archive, its manifest and the name of its one upload."""
    ws = store.create({"page": "audit", "params": {"tau": 0.9}})
    store.put_blob(ws.id, UPLOAD, "people.csv")
    data = export_workspace(store, ws.id)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        manifest = zf.read("workspace.json")
        (member,) = [n for n in zf.namelist() if n.startswith("files/")]
    return data, manifest, member


def _stored(members: dict) -> bytearray:
    """A zip of ``members`` stored uncompressed (so their bytes can be edited in place)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        for name, content in members.items():
            z.writestr(name, content)
    return bytearray(buf.getvalue())


def _headers(data: bytearray):
    """(offset, kind) of every local ("local") and central ("central") header."""
    for sig, kind in ((b"PK\x03\x04", "local"), (b"PK\x01\x02", "central")):
        at = data.find(sig)
        while at >= 0:
            yield at, kind
            at = data.find(sig, at + 4)


def _set_u16(data, at, value):
    data[at:at + 2] = struct.pack("<H", value)


def test_a_sound_archive_still_imports(store, archive):
    ws = import_workspace(store, archive[0])
    assert ws.settings["page"] == "audit" and [n for n, _ in ws.blobs.values()] == ["people.csv"]


def _bad_crc_upload(archive):
    _, manifest, member = archive
    data = _stored({"workspace.json": manifest, member: UPLOAD})
    at = data.find(UPLOAD[40:80])
    data[at] ^= 0x01  # one bit of the upload flipped: its CRC no longer matches
    return bytes(data)


def _bad_crc_manifest(archive):
    _, manifest, member = archive
    data = _stored({"workspace.json": manifest, member: UPLOAD})
    at = data.find(b'"format"')
    data[at + 2] ^= 0x01
    return bytes(data)


def _unknown_compression(archive):
    _, manifest, member = archive
    data = _stored({"workspace.json": manifest, member: UPLOAD})
    for at, kind in _headers(data):
        _set_u16(data, at + (8 if kind == "local" else 10), 99)  # method 99 (AES, or anything unknown)
    return bytes(data)


def _encrypted(archive):
    _, manifest, member = archive
    data = _stored({"workspace.json": manifest, member: UPLOAD})
    for at, kind in _headers(data):
        flags_at = at + (6 if kind == "local" else 8)
        _set_u16(data, flags_at, struct.unpack("<H", data[flags_at:flags_at + 2])[0] | 0x1)
    return bytes(data)


def _forged_size(archive):
    """The upload's directory and manifest declare 800 bytes; the member really holds 10 MB of deflated data."""
    _, manifest, member = archive
    doc = json.loads(manifest)
    doc["files"][0]["size"] = 800
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("workspace.json", json.dumps(doc))
        z.writestr(member, b"0" * (10 * 2 ** 20))
    data = bytearray(buf.getvalue())
    for at, kind in _headers(data):
        name_len = struct.unpack("<H", data[at + (26 if kind == "local" else 28):][:2])[0]
        name = bytes(data[at + (30 if kind == "local" else 46):][:name_len])
        if name.startswith(b"files/"):
            size_at = at + (22 if kind == "local" else 24)
            data[size_at:size_at + 4] = struct.pack("<I", 800)
    return bytes(data)


def _deeply_nested(archive):
    _, manifest, member = archive
    text = manifest.decode()
    deep = text.replace('"settings": {', '"settings": {"deep": ' + "[" * 100_000 + "]" * 100_000 + ", ", 1)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("workspace.json", deep)
        z.writestr(member, UPLOAD)
    return buf.getvalue()


BROKEN = {
    "bad CRC in an upload": (_bad_crc_upload, r"the upload 'people.csv' is damaged .*export the workspace again"),
    "bad CRC in workspace.json": (_bad_crc_manifest, r"workspace.json is damaged"),
    "unknown compression": (_unknown_compression, r"compressed with a method .* \(zip method 99\)"),
    "encryption": (_encrypted, r"is encrypted in the workspace file; export the workspace again without a password"),
    "forged sizes": (_forged_size, r"the upload 'people.csv' is damaged .*sizes are forged"),
    "deeply nested settings": (_deeply_nested, r"nests lists or objects more than 64 levels deep"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_archive_is_refused_with_what_is_wrong(store, archive, case):
    build, message = BROKEN[case]
    with pytest.raises(WorkspaceError, match=message):
        import_workspace(store, build(archive))
    assert store.recent() == [] or all(s.title != "audit" for s in store.recent())  # no half-imported workspace


@pytest.mark.parametrize("case", ["bad CRC in an upload", "encryption", "deeply nested settings"])
def test_tcrex_workspace_import_prints_one_error_line_naming_the_file(tmp_path, archive, case, monkeypatch):
    monkeypatch.setenv("TCREX_STATE_DIR", str(tmp_path / "other-state"))
    path = tmp_path / "broken.zip"
    path.write_bytes(BROKEN[case][0](archive))
    res = CliRunner().invoke(main, ["workspace", "import", str(path)], catch_exceptions=False)
    assert res.exit_code == 2
    assert res.output.startswith(f"error: {path}: ") and "Traceback" not in res.output


def test_an_archive_from_a_device_or_a_pipe_is_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setenv("TCREX_STATE_DIR", str(tmp_path / "state"))
    fifo = tmp_path / "workspace.zip"
    os.mkfifo(fifo)  # opened for reading without a writer, a FIFO would block for ever
    for path in ("/dev/zero", str(fifo)):
        res = CliRunner().invoke(main, ["workspace", "import", path], catch_exceptions=False)
        assert res.exit_code == 2 and "is not a regular file" in res.output and path in res.output


def test_an_archive_larger_than_the_servers_budget_is_refused_without_reading_it_all(tmp_path, monkeypatch):
    monkeypatch.setenv("TCREX_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("TCREX_WORKSPACE_MAX_MB", "1")
    big = tmp_path / "big.zip"
    with open(big, "wb") as fh:
        fh.truncate(50 * 2 ** 20)  # sparse: 50 MB declared, nothing written
    res = CliRunner().invoke(main, ["workspace", "import", str(big)], catch_exceptions=False)
    assert res.exit_code == 2 and "is larger than" in res.output and "TCREX_WORKSPACE_MAX_MB" in res.output


# ------------------------------------------------------------------ the state folder
def test_a_state_folder_that_is_a_file_is_said_so(tmp_path):
    path = tmp_path / "state"
    path.write_text("not a folder")
    with pytest.raises(StoreUnavailable, match=r"state already exists and is not a folder; give a folder"):
        WorkspaceStore(str(path))
    with pytest.raises(StoreUnavailable, match=r"is not a folder"):
        WorkspaceStore(str(path / "inner"))


def test_a_state_folder_in_a_loop_of_links_is_said_so(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    for path in (tmp_path / "a", tmp_path / "a" / "state"):
        with pytest.raises(StoreUnavailable, match=r"symbolic link that leads nowhere"):
            WorkspaceStore(str(path))


def test_the_cli_says_what_is_wrong_with_the_state_folder(tmp_path, archive, monkeypatch):
    (tmp_path / "state-file").write_text("a file")
    monkeypatch.setenv("TCREX_STATE_DIR", str(tmp_path / "state-file"))
    (tmp_path / "w.zip").write_bytes(archive[0])
    res = CliRunner().invoke(main, ["workspace", "import", str(tmp_path / "w.zip")], catch_exceptions=False)
    assert res.exit_code == 2 and res.output.startswith("error: the workspace store cannot be used:")


@pytest.fixture
def tmpfs(tmp_path):
    """A 1 MB tmpfs of the test's own (mounted as root; skipped where mounting is not allowed)."""
    point = tmp_path / "fs"
    point.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(point)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()[:200]}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def test_a_read_only_state_folder_is_said_so_and_never_moved_aside(tmpfs):
    db = WorkspaceStore(str(tmpfs))
    db.create({"kept": True})
    del db
    gc.collect()  # its SQLite connection closed: a file system with an open writable file cannot become read-only
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    with pytest.raises(StoreUnavailable, match=r"read-only; make the state folder writable"):
        WorkspaceStore(str(tmpfs))
    with pytest.raises(StoreUnavailable, match=r"read-only file system; choose a location on a writable disk"):
        WorkspaceStore(str(tmpfs / "new"))
    assert "workspaces.sqlite" in os.listdir(tmpfs)
    assert not [n for n in os.listdir(tmpfs) if "damaged" in n]  # a sound store is not taken for a damaged one


def test_a_full_disk_is_said_so_on_start_and_on_upload(tmpfs):
    db = WorkspaceStore(str(tmpfs / "state"))
    ws = db.create({"page": "home"})
    with open(tmpfs / "filler", "wb") as fh:  # the disk fills up while the server runs
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    with pytest.raises(StoreUnavailable, match=r"the disk is full; free some space"):
        db.put_blob(ws.id, os.urandom(200_000), "people.csv")
    with pytest.raises(StoreUnavailable, match=r"disk is full"):
        WorkspaceStore(str(tmpfs / "another"))
    assert isinstance(StoreUnavailable("x"), StoreError) and isinstance(StoreUnavailable("x"), WorkspaceError)


def test_a_nul_byte_in_a_file_name_is_refused_by_name(store):
    ws = store.create()
    with pytest.raises(WorkspaceError, match=r"holds a NUL byte or another control character; rename the file"):
        store.put_blob(ws.id, UPLOAD, "people\x00.csv")
    assert store.open(ws.id).blobs == {}


# ------------------------------------------------------------------ PostgreSQL
@pytest.mark.cluster
def test_postgresql_with_no_server_is_said_so_without_the_password(tmp_path):
    url = f"postgresql://alice:s3cret@127.0.0.1:{free_port()}/tcrex"
    with pytest.raises(StoreUnavailable, match=r"is not reachable .* start the PostgreSQL server") as caught:
        WorkspaceStore(url, blobs=str(tmp_path / "blobs"))
    assert "s3cret" not in str(caught.value) and "alice:***@127.0.0.1" in str(caught.value)


@pytest.mark.cluster
def test_postgresql_with_a_wrong_password_is_said_so(tmp_path):
    with postgres_server(password="right-one") as url:
        assert WorkspaceStore(url, blobs=str(tmp_path / "blobs")).create().id  # the right password works
        wrong = url.replace("right-one", "wrong-one")
        with pytest.raises(StoreUnavailable, match=r"refused the password; check the user name and password") as e:
            WorkspaceStore(wrong, blobs=str(tmp_path / "blobs"))
        assert "wrong-one" not in str(e.value)


@pytest.mark.cluster
def test_postgresql_dropped_connection_unknown_user_and_nul_bytes(tmp_path):
    with postgres_server() as url:
        blobs = str(tmp_path / "blobs")
        db = WorkspaceStore(url, blobs=blobs)
        ws = db.create({"n": 0})
        with WorkspaceStore(url, blobs=blobs).transaction() as tx:  # another session ends this one's connection
            tx.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                       "AND datname = current_database()")
        with pytest.raises(StoreUnavailable, match=r"lost the connection .* try again"):
            db.save(ws.id, {"n": 1})
        assert db.save(ws.id, {"n": 2}) == 1  # the next action connects again
        with pytest.raises(WorkspaceError, match=r"NUL byte"):
            db.put_blob(ws.id, UPLOAD, "a\x00b.csv")
        with pytest.raises(StoreUnavailable, match=r"does not know this user"):
            WorkspaceStore(url.replace("postgres@", "nobody@"), blobs=blobs)
