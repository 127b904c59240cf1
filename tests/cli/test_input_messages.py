"""Inputs the CLI cannot use get one ``error:`` line naming the file, the problem and what to do: devices and FIFOs
are refused before a byte is read (``--value-labels /dev/zero`` once grew memory by gigabytes), a file larger than
its budget is refused after reading at most budget + 1 bytes, ``--data`` URLs whose fsspec extra is missing are said
so, ``simplecache::`` chains are read as given, and nested Parquet columns used as features are refused by name.

Real files, a real FIFO, real Parquet files written by pyarrow, the real ``tcrex`` command group.
"""
from __future__ import annotations

import os
import threading

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from tcrex.cli import main
from tcrex.errors import InputFileError
from tcrex.inputs import read_bounded


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def table(tmp_path):
    """A small table whose score decides the outcome: 'approved' is the label column."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"months": rng.integers(1, 60, 600), "amount": rng.normal(5000, 1500, 600).round(2),
                       "region": rng.choice(["north", "south", "east"], 600)})
    df["approved"] = ((df.months > 20) & (df.amount < 6000)).astype(int)
    path = tmp_path / "people.csv"
    df.to_csv(path, index=False)
    return df, path


def test_read_bounded_reads_at_most_its_budget_plus_one_byte(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 1000)
    assert read_bounded(path, 1000) == b"x" * 1000
    with pytest.raises(InputFileError, match=r"the file .*f.bin is larger than 999 bytes, the most accepted"):
        read_bounded(path, 999)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: open(fifo, "wb").write(b"y" * 10_000_000), daemon=True)
    writer.start()  # a writer that never stops would hold a reader that reads to the end for ever
    with pytest.raises(InputFileError, match=r"is not a regular file"):
        read_bounded(fifo, 100)
    os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # let the writer finish
    with pytest.raises(InputFileError, match=r"is a folder, not a file"):
        read_bounded(tmp_path, 100)
    with pytest.raises(InputFileError, match=r"does not exist; check the path"):
        read_bounded(tmp_path / "missing.json", 100)


@pytest.mark.parametrize("option", ["--value-labels", "--model", "--rules"])
def test_a_device_given_as_an_input_file_is_refused_before_reading(table, tmp_path, option):
    _, data = table
    if option == "--rules":  # the rules file of explain
        res = _run("explain", "--data", data, "--y-pred-column", "approved", "--rules", "/dev/zero",
                   "--out", tmp_path / "out")
    elif option == "--model":
        res = _run("fit", "--data", data, "--model", "/dev/zero", "--out", tmp_path / "rules.json")
    else:
        res = _run("fit", "--data", data, "--y-pred-column", "approved", "--target", "1", option, "/dev/zero",
                   "--out", tmp_path / "rules.json")
    assert res.exit_code == 2, res.output
    assert res.output.startswith("error: ") and "/dev/zero is not a regular file" in res.output
    assert not (tmp_path / "rules.json").exists()


def test_a_codebook_larger_than_its_budget_is_refused(table, tmp_path):
    _, data = table
    big = tmp_path / "codebook.csv"
    with open(big, "wb") as fh:
        fh.truncate(64 * 2 ** 20)  # sparse: large on paper, costs no disk
    res = _run("fit", "--data", data, "--y-pred-column", "approved", "--target", "1", "--value-labels", big,
               "--out", tmp_path / "rules.json")
    assert res.exit_code == 2 and f"the codebook {big} is larger than 5 MB" in res.output


def test_an_http_url_without_fsspecs_extra_is_said_so(table, tmp_path):
    import importlib.util
    if importlib.util.find_spec("aiohttp") is not None:
        pytest.skip("aiohttp is installed here: HTTP URLs are readable")
    res = _run("fit", "--data", "http://127.0.0.1:9/people.csv", "--y-pred-column", "approved", "--target", "1",
               "--out", tmp_path / "rules.json")
    assert res.exit_code == 2
    assert res.output.startswith("error: http://127.0.0.1:9/people.csv: this kind of address cannot be read")
    assert "aiohttp" in res.output


def test_an_unknown_protocol_is_said_so(table, tmp_path):
    res = _run("fit", "--data", "nosuch://bucket/people.csv", "--y-pred-column", "approved", "--target", "1",
               "--out", tmp_path / "rules.json")
    assert res.exit_code == 2 and "not a path or URL that can be read" in res.output


def test_a_simplecache_chain_reads_the_file_it_names(table, tmp_path):
    df, data = table
    res = _run("fit", "--data", f"simplecache::file://{data}", "--y-pred-column", "approved", "--target", "1",
               "--out", tmp_path / "rules.json")
    assert res.exit_code == 0, res.output
    plain = _run("fit", "--data", data, "--y-pred-column", "approved", "--target", "1",
                 "--out", tmp_path / "plain.json")
    assert plain.exit_code == 0
    import json
    rules = [json.loads((tmp_path / n).read_text())["targets"] for n in ("rules.json", "plain.json")]
    assert rules[0] == rules[1] and rules[0]


def _nested(df, tmp_path, name, column, values):
    t = pa.Table.from_pandas(df, preserve_index=False)
    t = t.append_column(column, pa.array(values)) if column not in df else t.set_column(
        list(df.columns).index(column), column, pa.array(values))
    path = tmp_path / name
    pq.write_table(t, path)
    return path


def test_nested_parquet_features_are_refused_by_name_and_unused_ones_ignored(table, tmp_path):
    df, _ = table
    structs = _nested(df, tmp_path, "structs.parquet", "extra", [{"k": i} for i in range(len(df))])
    res = _run("fit", "--data", structs, "--y-pred-column", "approved", "--target", "1",
               "--out", tmp_path / "rules.json")
    assert res.exit_code == 2
    assert f"error: {structs}: column(s) 'extra' hold nested values (lists, structs or maps)" in res.output
    ok = _run("fit", "--data", structs, "--y-pred-column", "approved", "--target", "1", "--drop-column", "extra",
              "--out", tmp_path / "rules.json")
    assert ok.exit_code == 0, ok.output
    # explain: the rules' features are looked at; a nested column that is no feature is left alone
    lists = _nested(df, tmp_path, "lists.parquet", "months", [[v] for v in df.months])
    res = _run("explain", "--data", lists, "--y-pred-column", "approved", "--rules", tmp_path / "rules.json",
               "--out", tmp_path / "out")
    assert res.exit_code == 2 and "column(s) 'months' hold nested values" in res.output
    res = _run("explain", "--data", structs, "--y-pred-column", "approved", "--rules", tmp_path / "rules.json",
               "--out", tmp_path / "out2")
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("raised, code, words", [
    (TypeError("unsupported operand"), 1, "error: unexpected TypeError: unsupported operand. This is a fault in tcrex"),
    (AttributeError("'NoneType' object has no attribute 'x'"), 1, "error: unexpected AttributeError"),
    (MemoryError(), 2, "error: the command ran out of memory; give it fewer rows at a time"),
    (RecursionError("maximum recursion depth exceeded"), 2, "error: an input is nested too deeply"),
])
def test_an_error_no_check_foresaw_is_one_line_and_never_a_traceback(table, tmp_path, monkeypatch, raised, code,
                                                                       words):
    # The engine's own fit raising what no check of the CLI names: the fault is planted, the command is real.
    import tcrex

    def broken_fit(self, *a, **k):
        raise raised
    monkeypatch.setattr(tcrex.TCREx, "fit", broken_fit)
    _, data = table
    out = tmp_path / "rules.json"
    res = CliRunner().invoke(main, ["fit", "--data", str(data), "--y-pred-column", "approved", "--target", "1",
                                    "--out", str(out)])
    assert res.exit_code == code, res.output
    last = res.output.splitlines()[-1]  # after the progress lines ("read 600 rows")
    assert last.startswith(words), res.output
    assert "Traceback" not in res.output and sum(line.startswith("error:") for line in res.output.splitlines()) == 1
    assert isinstance(res.exception, SystemExit)
    assert not out.exists()


def test_tcrex_debug_shows_the_traceback_of_an_unforeseen_error(table, tmp_path, monkeypatch):
    import tcrex

    def broken_fit(self, *a, **k):
        raise TypeError("unsupported operand")
    monkeypatch.setattr(tcrex.TCREx, "fit", broken_fit)
    monkeypatch.setenv("TCREX_DEBUG", "1")
    _, data = table
    res = CliRunner().invoke(main, ["fit", "--data", str(data), "--y-pred-column", "approved", "--target", "1",
                                    "--out", str(tmp_path / "rules.json")])
    assert isinstance(res.exception, TypeError) and res.exit_code == 1
