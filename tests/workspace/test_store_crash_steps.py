"""The store survives a crash at any instant: a real writer process, paused at each step of a save and of an upload
(the store's own step hook, :attr:`WorkspaceStore.on_step`), is killed there with SIGKILL; the store then opens,
its check is clean, the workspace holds either the old or the new state, never a row pointing at nothing, and an
orphan file left behind is collected. A restore that meets a missing upload opens the workspace with the rest."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tcrex.workspace import SAVE_STEPS, UPLOAD_STEPS, WorkspaceStore

pytestmark = pytest.mark.slow

# The writer prints each step it reaches and waits there for a line on stdin (the parent answers "go" to pass a
# step, or kills it with SIGKILL while it waits at the chosen one).
_WRITER = r"""
import sys
from tcrex.workspace import WorkspaceStore

store = WorkspaceStore(sys.argv[1])
ws_id, action = sys.argv[2], sys.argv[3]

def pause(step):
    print(step, flush=True)
    sys.stdin.readline()

store.on_step = pause
if action == "save":
    store.save(ws_id, {"title": "after", "n": 2})
else:
    store.put_blob(ws_id, b"new-upload," * 20000, "second.csv")
print("done", flush=True)
"""

OLD_UPLOAD = b"a,b\n1,2\n"
NEW_UPLOAD = b"new-upload," * 20000


def _writer(folder, ws_id, action):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-c", _WRITER, str(folder), ws_id, action], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)


def _run_to(proc, stop_at: str) -> list[str]:
    """Let the writer pass every step before ``stop_at``; kill it with SIGKILL while it waits at ``stop_at``."""
    seen = []
    for line in proc.stdout:
        step = line.strip()
        seen.append(step)
        if step == stop_at:
            proc.send_signal(signal.SIGKILL)
            break
        proc.stdin.write("go\n")
        proc.stdin.flush()
    proc.wait()
    proc.stdout.close()
    proc.stdin.close()
    return seen


def _fresh(tmp_path, name):
    folder = tmp_path / name
    store = WorkspaceStore(str(folder))
    ws = store.create({"title": "before", "n": 1})
    digest = store.put_blob(ws.id, OLD_UPLOAD, "first.csv")
    return folder, ws, digest


@pytest.mark.parametrize("step", SAVE_STEPS)
def test_a_writer_killed_at_any_step_of_a_save_leaves_the_old_or_the_new_settings(tmp_path, step):
    folder, ws, digest = _fresh(tmp_path, "state")
    proc = _writer(folder, ws.id, "save")
    seen = _run_to(proc, step)
    assert seen[-1] == step and proc.returncode == -signal.SIGKILL  # really killed there, not finished
    store = WorkspaceStore(str(folder))
    health = store.check()
    assert health.ok, (health.damaged, health.notes)
    again = store.open(ws.id)
    expected = {"title": "after", "n": 2} if step == "save:committed" else {"title": "before", "n": 1}
    assert again.settings == expected
    assert store.get_blob(ws.id, digest) == OLD_UPLOAD


@pytest.mark.parametrize("step", UPLOAD_STEPS)
def test_a_writer_killed_at_any_step_of_an_upload_leaves_an_openable_workspace(tmp_path, step):
    folder, ws, digest = _fresh(tmp_path, "state")
    proc = _writer(folder, ws.id, "upload")
    seen = _run_to(proc, step)
    assert seen[-1] == step and proc.returncode == -signal.SIGKILL
    assert seen == list(UPLOAD_STEPS[:UPLOAD_STEPS.index(step) + 1])  # every step before it was passed, in order
    store = WorkspaceStore(str(folder))
    health = store.check()
    assert health.ok, (health.damaged, health.notes)
    again = store.open(ws.id)
    assert again.settings == {"title": "before", "n": 1}
    committed = step == "upload:committed"
    assert len(again.blobs) == (2 if committed else 1)
    for held in again.blobs:  # every row names a complete file
        assert store.get_blob(ws.id, held) in (OLD_UPLOAD, NEW_UPLOAD)
    files = {p.name for p in (folder / "blobs").rglob("*") if p.is_file()}
    removed = store.collect_orphans(grace_s=0)
    left = {p.name for p in (folder / "blobs").rglob("*") if p.is_file()}
    assert left == set(again.blobs)  # the orphan (a finished or a half-written file) is gone, held files stay
    assert set(removed) == files - left
    if step in ("upload:file-partial", "upload:file-written", "upload:row-written"):
        assert removed  # the kill left something behind, and it was collected
    # The upload can simply be made again.
    assert store.get_blob(ws.id, store.put_blob(ws.id, NEW_UPLOAD, "second.csv")) == NEW_UPLOAD


def test_a_young_orphan_is_kept_for_an_upload_that_may_be_in_flight(tmp_path):
    folder, ws, _ = _fresh(tmp_path, "state")
    proc = _writer(folder, ws.id, "upload")
    _run_to(proc, "upload:file-written")
    store = WorkspaceStore(str(folder))
    assert store.collect_orphans() == []  # within the default grace of an hour: maybe another process's upload
    assert len([p for p in (folder / "blobs").rglob("*") if p.is_file()]) == 2


def test_a_restore_that_meets_a_missing_upload_opens_the_rest_and_names_it(tmp_path):
    from tcrex.ui.state import workspace

    store = WorkspaceStore(str(tmp_path / "state"))
    ws = store.create({"title": "loans"})
    kept = store.put_blob(ws.id, b"x,y\n1,0\n", "loans.csv")
    lost = store.put_blob(ws.id, b'{"learner": {}}', "model.json")
    os.unlink(tmp_path / "state" / "blobs" / lost[:2] / lost)
    opened = store.open(ws.id)
    blobs, missing = workspace.stored_uploads(store, ws.id, opened.blobs)
    assert missing == ["model.json"]
    assert list(blobs.values()) == [b"x,y\n1,0\n"] and kept in opened.blobs
    text = workspace.missing_text(missing)
    assert "model.json" in text and "upload" in text
