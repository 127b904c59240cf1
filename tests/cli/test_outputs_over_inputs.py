"""No output over an input: every command compares its output paths with every input before opening anything,
and refuses with one ``error:`` line naming both; the input is left byte for byte as it was."""
import json
import os

import pytest
from click.testing import CliRunner

from tcrex import TCREx
from tcrex.cli import main
from tcrex.datasets import make_loans


@pytest.fixture()
def user(tmp_path):
    """A user's folder: data (Parquet and CSV) in ``d/``, rules and a codebook beside it."""
    X = make_loans(300, random_state=5)
    X["score"] = X.pop("approved")
    (tmp_path / "d").mkdir()
    X.to_parquet(tmp_path / "d" / "x.parquet", index=False)
    X.to_csv(tmp_path / "d.csv", index=False)
    ex = TCREx(rho=0.05).fit(X.drop(columns=["score"]), y_pred=X["score"].to_numpy())
    (tmp_path / "rules.json").write_text(ex.to_json())
    (tmp_path / "labels.csv").write_text("feature,value,label\npurpose,car,a car\n")
    return tmp_path


def _snapshot(root):
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _refused(root, *args, names=()):
    before = _snapshot(root)
    res = CliRunner().invoke(main, list(args))
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.output
    for name in names:
        assert name in lines[0], (name, lines[0])
    assert "Traceback" not in res.output and "Errno" not in res.output
    assert _snapshot(root) == before  # nothing written, nothing removed
    return lines[0]


def _explain(u, out, data=None, *more):
    return ("explain", "--rules", str(u / "rules.json"), "--data", str(data or u / "d"), "--y-pred-column",
            "score", "--out", str(out), *more)


def test_explain_into_its_own_data_folder_is_refused_and_the_data_kept(user):
    line = _refused(user, *_explain(user, user / "d"), names=("--out", "--data", str(user / "d")))
    assert "is the folder of the input" in line


def test_explain_of_a_file_into_its_folder_is_refused(user):
    _refused(user, *_explain(user, user / "d", user / "d" / "x.parquet"), names=("--out", str(user / "d" / "x.parquet")))
    _refused(user, *_explain(user, user / "d", user / "d" / "*.parquet"), names=("--out", "--data"))


def test_explain_into_a_subfolder_of_its_data_is_refused(user):
    _refused(user, *_explain(user, user / "d" / "out"), names=("is inside the folder of the input",))


def test_explain_onto_the_rules_file_is_one_error_line_not_an_errno(user):
    line = _refused(user, *_explain(user, user / "rules.json"), names=("--rules", str(user / "rules.json")))
    assert "is the input" in line


def test_fit_and_audit_onto_their_data_are_refused(user):
    data = str(user / "d.csv")
    _refused(user, "fit", "--data", data, "--y-pred-column", "score", "--out", data, names=("--out", "--data", data))
    _refused(user, "audit", "--rules", str(user / "rules.json"), "--data", data, "--y-pred-column", "score",
             "--group-column", "purpose", "--out", data, names=("--data",))
    _refused(user, "fit", "--data", str(user / "d"), "--y-pred-column", "score", "--out",
             str(user / "d" / "rules.json"), names=("is inside the folder of the input",))
    _refused(user, "suggest-constraints", data, "--out", data, names=("--data",))


def test_a_glob_of_data_refuses_an_output_it_would_read_next_time(user):
    _refused(user, "fit", "--data", str(user / "d" / "*"), "--y-pred-column", "score", "--out",
             str(user / "d" / "rules.json"), names=("would be read as data",))
    res = CliRunner().invoke(main, ["fit", "--data", str(user / "d" / "*.parquet"), "--y-pred-column", "score",
                                    "--rho", "0.05", "--out", str(user / "d" / "rules2.json")])
    assert res.exit_code == 0, res.output  # *.parquet never reads a .json


def test_every_other_input_is_protected_too(user):
    _refused(user, *_explain(user, user / "labels.csv"), "--value-labels", str(user / "labels.csv"),
             names=("--value-labels",))
    _refused(user, "fit", "--data", str(user / "d.csv"), "--y-pred-column", "score", "--value-labels",
             str(user / "labels.csv"), "--out", str(user / "labels.csv"), names=("--value-labels",))
    (user / "ref").mkdir()
    (user / "ref" / "r.parquet").write_bytes((user / "d" / "x.parquet").read_bytes())
    _refused(user, "audit", "--rules", str(user / "rules.json"), "--data", str(user / "d.csv"), "--model",
             str(user / "rules.json"), "--group-column", "purpose", "--reference-rows", str(user / "ref"),
             "--out", str(user / "ref" / "audit.json"), names=("--reference-rows",))


def test_a_symbolic_link_to_an_input_is_the_input(user):
    os.symlink(user / "d", user / "link")
    _refused(user, *_explain(user, user / "link"), names=("--data",))
    os.symlink(user / "d.csv", user / "d2.csv")
    _refused(user, "fit", "--data", str(user / "d.csv"), "--y-pred-column", "score", "--out", str(user / "d2.csv"),
             names=("--data",))


def test_relative_paths_are_compared_resolved(user, monkeypatch):
    monkeypatch.chdir(user)
    _refused(user, "fit", "--data", "d.csv", "--y-pred-column", "score", "--out", "./sub/../d.csv",
             names=(f"--data {user / 'd.csv'}",))


def test_a_folder_beside_the_inputs_is_fine_and_memory_outputs_are_warned(user):
    res = CliRunner().invoke(main, list(_explain(user, user / "out")))
    assert res.exit_code == 0, res.output
    assert (user / "out" / "x.parquet").is_file()
    res = CliRunner().invoke(main, list(_explain(user, "memory://tcrex-test-out")))
    assert res.exit_code == 0, res.output
    assert "warning: --out memory://tcrex-test-out is held in this process's memory" in res.output


def test_an_output_that_lives_beside_the_rules_in_an_explain_folder_is_fine(user):
    """An output folder holding the rules file (not data, not Parquet) writes nothing over it."""
    res = CliRunner().invoke(main, list(_explain(user, user)))
    assert res.exit_code == 0, res.output
    assert json.loads((user / "rules.json").read_text())
