"""Damaged rules exports and oversized parameters, generated here: ``TCREx.from_json`` checks every parameter with
the estimator's own rule, refuses counts that are not whole numbers and a grid larger than ``max_cells`` before
building anything, naming the field; the hard caps on ``n_trees``, ``max_cells`` and the number of classes are
refusals, not warnings."""
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tcrex import TCREx
from tcrex.errors import ModelError, ParameterError, SchemaError, TCRExError
from tcrex._engine.base._outputs import MAX_TARGET_CLASSES
from tcrex._engine.base._params import MAX_CELLS, MAX_TREES, check_parameter
from tcrex.intake import validate_params

from tests.support.data import figure1, mixed
from tests.support.hostile_exports import many_rules_export, nested_rules_export

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def export():
    X, y = mixed()
    ex = TCREx(rho=0.03, tau=0.85).fit(X, y_pred=y)
    return ex.to_json(), X, y


def _edit(text, fn):
    doc = json.loads(text)
    fn(doc)
    return json.dumps(doc)


def _set(path, value):
    def fn(doc):
        node = doc
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
    return fn


PARAMS = {"rho": ["abc", 5, 0, -0.1, None, [0.02], True], "tau": [[1], "0.9", 1.5, 0], "n_trees": [-3, 0, 1.5, "12", True,
          MAX_TREES + 1], "max_cells": [1.5, "100000", -1, 0, MAX_CELLS + 1], "grower": ["fast", 3],
          "random_state": ["x", -1, 1.5, 2**40], "target": [{"a": 1}, [[1]], float("inf")]}


@pytest.mark.parametrize("name,value", [(n, v) for n, vs in PARAMS.items() for v in vs])
def test_every_parameter_is_checked_and_named(export, name, value):
    text, _, _ = export
    bad = _edit(text, _set(["params", name], value)) if not (isinstance(value, float) and not np.isfinite(value)) \
        else text.replace('"target": null', '"target": Infinity')
    with pytest.raises(SchemaError, match=rf"params\.{name}"):
        TCREx.from_json(bad)


COUNTS = {
    "n-text": (["targets", 0, "rules", 0, "n"], "12", r"targets\[0\]\.rules\[0\]\.n must be a whole number"),
    "n-fraction": (["targets", 0, "rules", 0, "n"], 12.7, r"targets\[0\]\.rules\[0\]\.n must be a whole number"),
    "n-bool": (["targets", 0, "rules", 0, "n"], True, r"rules\[0\]\.n must be a whole number"),
    "n-zero": (["targets", 0, "rules", 0, "n"], 0, r"rules\[0\]\.n = 0 is out of range"),
    "n-target-text": (["targets", 0, "rules", 1, "n_target"], "3", r"rules\[1\]\.n_target must be a whole"),
    "n-target-above-n": (["targets", 0, "rules", 0, "n_target"], 10**9, r"rules\[0\]\.n_target = 1000000000 is out"),
    "metarule-rule-text": (["targets", 1, "metarules", 0, "rule"], "0", r"targets\[1\]\.metarules\[0\]\.rule must"),
    "metarule-rule-fraction": (["targets", 1, "metarules", 0, "rule"], 0.5, r"metarules\[0\]\.rule must"),
    "metarule-rule-unknown": (["targets", 1, "metarules", 0, "rule"], 999, r"metarules\[0\]\.rule = 999 is out"),
    "n-cells-text": (["targets", 0, "n_cells"], "x", r"targets\[0\]\.n_cells must be a whole number"),
    "metarule-n-cells": (["targets", 0, "metarules", 0, "n_cells"], -2, r"metarules\[0\]\.n_cells = -2 is out"),
    "sparsity": (["targets", 0, "metarules", 0, "sparsity"], "1", r"metarules\[0\]\.sparsity must"),
    "rules-not-a-list": (["targets", 0, "rules"], {"0": {}}, r"targets\[0\]\.rules must be a list"),
    "targets-not-a-list": (["targets"], "all", r"targets must be a list"),
    "rule-not-an-object": (["targets", 0, "rules", 0], 7, r"rule 0 must be an object"),
}


@pytest.mark.parametrize("case", list(COUNTS))
def test_counts_must_be_whole_numbers_in_range(export, case):
    path, value, pattern = COUNTS[case]
    with pytest.raises(SchemaError, match=pattern):
        TCREx.from_json(_edit(export[0], _set(path, value)))


def test_valid_export_and_version_1_still_load(export):
    text, X, y = export
    back = TCREx.from_json(text)
    pd.testing.assert_frame_equal(back.explain(X, y_pred=y), TCREx.from_json(back.to_json()).explain(X, y_pred=y))
    doc = json.loads(text)  # version 1: no n_target (from accuracy), no constraints
    doc["version"] = 1
    doc["params"].pop("constraints")
    for t in doc["targets"]:
        for r in t["rules"]:
            r.pop("n_target")
    v1 = TCREx.from_json(json.dumps(doc))
    pd.testing.assert_frame_equal(v1.explain(X, y_pred=y), back.explain(X, y_pred=y))


#: Loads the export from stdin in a child process with a 2 GB address space; prints the outcome and the peak of
#: what Python and numpy allocated while loading (tracemalloc), in MB: a refusal "before anything is built" holds
#: the parsed JSON and the rule bounds, never the grid. (How fast the refusal comes is a benchmark,
#: ``benchmarks/suite_timings.py``, not a test.)
GRID_SCRIPT = r"""
import resource, sys, tracemalloc
resource.setrlimit(resource.RLIMIT_AS, (2 * 1024 ** 3, resource.RLIM_INFINITY))
sys.path.insert(0, sys.argv[1])
from tcrex import TCREx
from tcrex.errors import TCRExError
text = sys.stdin.read()
tracemalloc.start()
try:
    TCREx.from_json(text)
    print("loaded")
except TCRExError as exc:
    print(type(exc).__name__, round(tracemalloc.get_traced_memory()[1] / 2 ** 20, 1), exc)
"""
#: Far below the refused grids (GBs), above what parsing a 600-rule or 20,000-rule export takes.
REFUSAL_PEAK_MB = 100


@pytest.mark.slow  # builds a near-limit grid: `make test`, not `make test-fast`
def test_grid_size_is_checked_before_anything_is_built(tmp_path):
    """Before: numpy raised a raw MemoryError (or the machine swapped) building 520 million cells. Now: refused from
    the rules' thresholds, in a child process with a 2 GB address space, having allocated next to nothing."""
    script = tmp_path / "grid.py"
    script.write_text(GRID_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(REPO)], input=many_rules_export(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-1500:]
    kind, peak_mb, message = proc.stdout.split(" ", 2)
    assert kind == "SchemaError", proc.stdout
    assert float(peak_mb) < REFUSAL_PEAK_MB, proc.stdout
    assert "span a grid of 519,885,601 cells, above the export's max_cells = 100,000" in message


def test_grid_memory_is_checked_before_anything_per_cell_is_built(tmp_path):
    """The cell count (40,001) is far below max_cells, but the cell-by-rule tables are not: refused from the
    grid's axes, in a child process with a 2 GB address space, naming the limit and how to raise it."""
    script = tmp_path / "grid.py"
    script.write_text(GRID_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(REPO)], input=nested_rules_export(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-1500:]
    kind, peak_mb, message = proc.stdout.split(" ", 2)
    assert kind == "SchemaError", proc.stdout
    assert float(peak_mb) < REFUSAL_PEAK_MB, proc.stdout
    assert re.search(r"the 20,000 rules of target .* span a grid of 40,001 cells \(40001\) whose cell-by-rule "
                     r"tables would need about 3\.\d GB to rebuild, above the limit of 256 MB for a rules export",
                     message), message
    assert "max_grid_bytes" in message


def test_the_grid_memory_estimate_bounds_what_solving_takes():
    """A smaller nested export loads when the limit allows it, and the estimate is at or above what numpy takes
    (tracemalloc counts numpy's allocations) and within 2x of it, so the limit refuses what it says it refuses."""
    import tracemalloc

    text = nested_rules_export(1500)
    with pytest.raises(SchemaError, match=r"need about (\d+) MB") as ei:
        TCREx.from_json(text, max_grid_bytes=2**20)
    estimate = int(re.search(r"need about (\d+) MB", str(ei.value)).group(1)) * 2**20
    tracemalloc.start()
    try:
        ex = TCREx.from_json(text, max_grid_bytes=estimate + 2**20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ex.targets_[0].grid.n_cells == 3001
    assert peak <= estimate + 2**20 and estimate < 2 * peak + 2**20, (peak, estimate)


def test_too_many_rule_bounds_are_refused_before_allocating():
    X, y = figure1()
    doc = json.loads(TCREx(rho=0.02, tau=0.9).fit(X, y_pred=y).to_json())
    doc["features"] = [{"name": "c", "type": "categorical", "categories": [f"k{i}" for i in range(100_000)]}]
    doc["targets"][0]["rules"] = [{"id": r, "conditions": {}, "n": 1, "n_target": 1} for r in range(200)]
    with pytest.raises(SchemaError, match=r"200 rules over 1 features and 100,000 categories are more than"):
        TCREx.from_json(json.dumps(doc))


# ---------------------------------------------------------------------------------------------- hard caps
@pytest.mark.parametrize("name,value", [("n_trees", MAX_TREES + 1), ("n_trees", 10**9), ("max_cells", MAX_CELLS + 1),
                                        ("max_cells", 10**15)])
def test_size_parameters_above_their_cap_are_refused(name, value):
    with pytest.raises(ParameterError, match=rf"{name} = [\d,]+ is above the limit of"):
        check_parameter(name, value)
    X, y = figure1()
    with pytest.raises(ParameterError, match="above the limit"):
        TCREx(**{name: value}).fit(X, y_pred=y)
    rep = validate_params(0.02, 0.9, **{name: value})
    assert not rep.ok and any("above the limit" in e for e in rep.errors), rep.errors
    check_parameter(name, MAX_TREES if name == "n_trees" else MAX_CELLS)  # the cap itself is allowed


def test_a_label_with_thousands_of_classes_is_refused_at_once():
    """4,000 classes ran for more than 25 s before (one target, grid and metarule tree per class). Now refused
    while reading the outputs, before the surrogate is grown (the fit's own progress steps say how far it got)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=8000), "b": rng.normal(size=8000)})
    y = np.array([f"c{i}" for i in rng.integers(0, 4000, 8000)])
    steps = []
    with pytest.raises(ModelError, match=rf"hold [\d,]+ classes; T-CREx explains at most {MAX_TARGET_CLASSES:,}"):
        TCREx(rho=0.0002).fit(X, y_pred=y, progress=lambda step, fraction: steps.append(step))
    assert steps == ["model outputs"], steps
    grown = []  # the same data with two classes goes on to grow the surrogate: the progress steps can tell
    TCREx(rho=0.0002).fit(X, y_pred=(X.a > 0).to_numpy().astype(int), progress=lambda step, f: grown.append(step))
    assert grown[:2] == ["model outputs", "surrogate"], grown


def test_the_class_cap_is_one_owner():
    """The XGBoost intake's num_class check and rules exports refuse by the same number."""
    from tcrex.intake import _xgboost

    assert _xgboost.MAX_CLASSES == MAX_TARGET_CLASSES
    X, y = figure1()
    doc = json.loads(TCREx(rho=0.02, tau=0.9).fit(X, y_pred=y).to_json())
    doc["classes"] = list(range(MAX_TARGET_CLASSES + 1))
    with pytest.raises(SchemaError, match="classes lists 1,001 classes"):
        TCREx.from_json(json.dumps(doc))
    assert issubclass(SchemaError, TCRExError)
