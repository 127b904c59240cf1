"""tcrex.outputs.atomic_output: a file appears complete under its final name, or not at all."""
import os
import signal
import subprocess
import sys

import pytest

from tcrex.outputs import atomic_output, is_partial


def test_a_complete_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    out = tmp_path / "result.json"
    out.write_text("old")
    with atomic_output(out, "w") as fh:
        fh.write("new")
        assert out.read_text() == "old"  # the final name holds the old file until the new one is complete
    assert out.read_text() == "new"
    assert os.listdir(tmp_path) == ["result.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "part-0.parquet"
    with pytest.raises(RuntimeError), atomic_output(out) as fh:
        fh.write(b"half")
        raise RuntimeError("the run failed")
    assert os.listdir(tmp_path) == []


def test_a_killed_writer_leaves_only_a_hidden_partial_file(tmp_path):
    out = tmp_path / "part-0.parquet"
    code = ("import sys, time; from tcrex.outputs import atomic_output\n"
            f"with atomic_output({str(out)!r}) as fh:\n"
            "    fh.write(b'x' * 1000); fh.flush(); print('writing', flush=True); sys.stdin.read()\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "writing"
    child.send_signal(signal.SIGKILL)
    child.wait()
    names = os.listdir(tmp_path)
    assert "part-0.parquet" not in names
    assert names and all(is_partial(n) and n.startswith(".") and not n.endswith(".parquet") for n in names)


def test_fsspec_urls_are_written_the_same_way(tmp_path):
    url = f"file://{tmp_path}/out.csv"
    with atomic_output(url, "w") as fh:
        fh.write("a,b\n1,2\n")
    assert (tmp_path / "out.csv").read_text() == "a,b\n1,2\n"
    assert os.listdir(tmp_path) == ["out.csv"]


def test_remove_partials_removes_only_the_leftovers_of_that_file(tmp_path):
    from tcrex.outputs import partial_name, remove_partials
    final = tmp_path / "p1.parquet"
    final.write_bytes(b"whole")
    for name in (partial_name(str(final)), partial_name(str(final)), partial_name(str(tmp_path / "p2.parquet"))):
        open(name, "wb").close()
    assert remove_partials(str(final)) == 2
    assert sorted(p.name for p in tmp_path.iterdir())[1:] == ["p1.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir())[0].startswith(".p2.parquet.partial-")
