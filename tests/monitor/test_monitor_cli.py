"""``tcrex monitor init|run|history`` on real files: the people as a Parquet set (two files), the rules JSON, the
fit rows as reference rows, XGBoost model files. The JSON the CLI writes is the API's record and its figures are
the API's (the session's monitor of the same people through the same versions); exit codes 0 / 3 (an alert) / 2
(bad input); ``--people-out`` writes per person the id, the status and the verified advice as ``explain --verified``
writes it."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from tcrex.cli import main
from tcrex.monitor import STATUSES, Monitor

from tests.support.monitor_case import DEGRADED, ID, POLICY

pytestmark = pytest.mark.slow


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def cli_runs(case, tmp_path_factory):
    """The case's people monitored through the CLI: init (v1), run v2 (retrain), run v3 (degraded)."""
    d = tmp_path_factory.mktemp("monitor-cli")
    store = d / "store"
    policy = [f"--{k.replace('_', '-')}={v}" for k, v in POLICY.items()]
    init = _cli("monitor", "init", "--store", store, "--name", "credit", "--rules", case.folder / "rules.json",
                "--reference-rows", case.reference_file, "--people", case.people_files[0].parent, "--id-column", ID,
                "--model", case.models["v1"], "--version", "v1", "--group", "education", "--group", "sex,education",
                "--n-boot", 400, *policy, "--json", d / "v1.json", "--people-out", d / "people-v1")
    runs = {"v1": init}
    for label in ("v2", "v3"):
        runs[label] = _cli("monitor", "run", "--store", store, "--name", "credit", "--model", case.models[label],
                           "--version", label, "--json", d / f"{label}.json", "--people-out", d / f"people-{label}")
    hist = _cli("monitor", "history", "--store", store, "--name", "credit", "--json", d / "history.json")
    return d, store, runs, hist


def test_exit_codes_say_whether_an_alert_fired(cli_runs):
    _, _, runs, hist = cli_runs
    assert runs["v1"].exit_code == 0, runs["v1"].output
    assert runs["v2"].exit_code == 0, runs["v2"].output
    assert runs["v3"].exit_code == 3, runs["v3"].output  # the degraded version
    assert "ALERT (share_drop): Verified recourse for education = c3" in runs["v3"].output
    assert hist.exit_code == 0, hist.output


def test_the_cli_json_is_the_api_result(cli_runs, monitored):
    d, store, _, _ = cli_runs
    _, api, _ = monitored  # the same people, rules, models and settings through the Python API
    history = Monitor(store).history("credit")
    for run in history.runs:
        doc = json.loads((d / f"{run.version.label}.json").read_text())
        assert doc == json.loads(run.to_json())  # the file holds the stored record
        mine = api[run.version.label]
        assert doc["model_sha256"] == mine.version.model_sha256
        for key in ["n_people", "n_needing", "n_verified"] + [f"n_{s}" for s in STATUSES]:
            assert doc[key] == mine.to_dict()[key], key
        assert doc["groups"] == mine.to_dict()["groups"]
        assert [a["message"] for a in doc["alerts"]] == [a.message for a in mine.alerts]
        assert doc["hashes"]["rules"] == mine.hashes["rules"]
        assert doc["hashes"]["people"] == mine.hashes["people"]  # the same people, read from a Parquet set
    assert json.loads((d / "history.json").read_text()) == json.loads(history.to_json())


def test_people_out_writes_every_person_with_a_status(case, cli_runs):
    d, _, _, _ = cli_runs
    for label in ("v2", "v3"):
        files = sorted((d / f"people-{label}").glob("*.parquet"))
        assert [f.name for f in files] == ["part-a.parquet", "part-b.parquet"]  # one per people file
        frame = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
        assert list(frame[ID]) == list(case.people[ID])
        assert set(frame["status"]) <= set(STATUSES)
        assert {"recourse", "changed", "recommended_rule", "text", "valid", "source"} <= set(frame.columns)
    v3 = pd.concat([pd.read_parquet(f) for f in sorted((d / "people-v3").glob("*.parquet"))], ignore_index=True)
    assert (v3["status"] == "invalidated").any() and (v3["status"] == "kept").any()


def test_init_people_out_is_what_explain_verified_writes_with_the_id(case, cli_runs):
    d, _, _, _ = cli_runs
    out = d / "explained"
    res = _cli("explain", "--rules", case.folder / "rules.json", "--data", case.people_files[0].parent, "--model",
               case.models["v1"], "--verified", "--reference-rows", case.reference_file, "--keep-columns", ID,
               "--out", out)
    assert res.exit_code == 0, res.output
    for f in ("part-a.parquet", "part-b.parquet"):
        explained = pd.read_parquet(out / f)
        mine = pd.read_parquet(d / "people-v1" / f)
        assert list(mine[ID]) == list(explained[ID])
        for col in [c for c in explained.columns if c != ID]:
            a, b = mine[col], explained[col]
            if col == "changed":
                assert [list(x) for x in a] == [list(x) for x in b]
            elif pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
                np.testing.assert_array_equal(a.to_numpy(dtype=float), b.to_numpy(dtype=float), err_msg=col)
            else:
                assert list(a.astype(object).where(a.notna(), None)) == \
                    list(b.astype(object).where(b.notna(), None)), col
        assert set(mine["status"]) == {"baseline"}


def test_bad_input_is_one_line_and_exit_code_2(case, cli_runs, tmp_path):
    d, store, _, _ = cli_runs
    cases = [
        (["monitor", "run", "--store", store, "--name", "nobody", "--model", case.models["v2"], "--version", "x",
          "--json", tmp_path / "x.json"], "no monitor named 'nobody'"),
        (["monitor", "run", "--store", store, "--name", "credit", "--model", case.models["v2"], "--version", "v2",
          "--json", tmp_path / "x.json"], "already has a version labelled 'v2'"),
        (["monitor", "run", "--store", store, "--name", "credit", "--model", tmp_path / "missing.json", "--version",
          "v9", "--json", tmp_path / "x.json"], "does not exist"),
        (["monitor", "init", "--store", tmp_path / "s2", "--name", "m", "--rules", case.folder / "rules.json",
          "--people", case.people_files[0], "--id-column", "nope", "--model", case.models["v1"], "--version",
          "v1"], "no column 'nope' (the id column)"),
        (["monitor", "init", "--store", store, "--name", "credit", "--rules", case.folder / "rules.json",
          "--people", case.people_files[0], "--id-column", ID, "--model", case.models["v1"], "--version", "v1"],
         "a monitor named 'credit' already exists"),
        (["monitor", "run", "--store", store, "--name", "credit", "--model", "models:/credit", "--version", "v9",
          "--json", tmp_path / "x.json"], "not an MLflow registry URI"),
    ]
    for args, words in cases:
        res = _cli(*args)
        assert res.exit_code == 2, (args, res.output)
        assert "error: " in res.output and words in res.output, res.output
        assert "Traceback" not in res.output
    assert not (tmp_path / "x.json").exists()
    assert [r.version.label for r in Monitor(store).history("credit").runs] == ["v1", "v2", "v3"]


def test_dictionary_is_the_data_dictionary_of_every_command(case, tmp_path):
    # The same --dictionary file as `tcrex fit --dictionary`: its labels name the groups, its titles the features.
    book = tmp_path / "dictionary.csv"
    book.write_text("feature,value,label,kind\neducation,,highest education,title\n"
                    f"education,{DEGRADED},university,label\n")
    res = _cli("monitor", "init", "--store", tmp_path / "store", "--name", "m", "--rules", case.folder / "rules.json",
               "--reference-rows", case.reference_file, "--people", case.people_files[0], "--id-column", ID,
               "--model", case.models["v1"], "--version", "v1", "--group", "education", "--n-boot", 50,
               "--dictionary", book, "--json", tmp_path / "v1.json")
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "v1.json").read_text())
    names = json.dumps(doc["groups"])
    assert "university" in names and f"= {DEGRADED}\"" not in names
    stored = Monitor(tmp_path / "store").history("m").runs[0]
    assert stored.hashes["dictionary"]  # the file's bytes are part of what the run used


@pytest.mark.parametrize("option", ["--people", "--dictionary", "--model"])
def test_a_device_or_fifo_as_a_monitor_input_is_refused_before_reading(case, tmp_path, option):
    import os
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # no writer: reading it to its end would wait for ever
    given = {"--people": case.people_files[0], "--dictionary": None, "--model": case.models["v1"]}
    given[option] = fifo
    args = ["monitor", "init", "--store", tmp_path / "store", "--name", "m", "--rules", case.folder / "rules.json",
            "--people", given["--people"], "--id-column", ID, "--model", given["--model"], "--version", "v1"]
    if given["--dictionary"] is not None:
        args += ["--dictionary", given["--dictionary"]]
    res = _cli(*args)
    assert res.exit_code == 2, res.output
    assert "is not a regular file" in res.output and "Traceback" not in res.output
