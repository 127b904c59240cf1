"""Rules exports that are valid JSON but hostile in size: a grid of 520 million cells (``many_rules_export``) and
grid tables of gigabytes from 2.6 MB of nested rules (``nested_rules_export``). Used by the engine's hostile-import
tests and by ``benchmarks/suite_timings.py`` (how fast they are refused)."""
from __future__ import annotations

import json

from tcrex import TCREx

from tests.support.data import figure1


def many_rules_export(n_rules=600, n_features=4):
    """600 one-condition rules, 150 per feature at distinct thresholds: a 151^4 = 520 million cell grid."""
    X, y = figure1()
    doc = json.loads(TCREx(rho=0.02, tau=0.9).fit(X, y_pred=y).to_json())
    doc["features"] = [{"name": f"f{j}", "type": "numeric"} for j in range(n_features)]
    rules = []
    for r in range(n_rules):
        j = r % n_features
        rules.append({"id": r, "conditions": {f"f{j}": {"low": None, "high": float(r)}}, "n": 10, "n_target": 10,
                      "feasibility": 0.1, "accuracy": 1.0, "complexity": 1})
    doc["targets"] = [{**doc["targets"][0], "rules": rules, "metarules": [{"id": 0, "rule": 0, "conditions": {},
                                                                           "sparsity": 1, "n_cells": 1}]}]
    doc["n_fit_rows"] = 1000
    return json.dumps(doc)


def nested_rules_export(n_rules=20_000):
    """``n_rules`` nested rules on one numeric feature (-i-1.5, i+1.5]: only 2 n + 1 cells, but n x (2 n + 1)
    table entries (a 2.6 MB file raised MemoryError at 2.5 GB in _grid.py / _solution.py)."""
    X, y = figure1()
    doc = json.loads(TCREx(rho=0.02, tau=0.9).fit(X, y_pred=y).to_json())
    doc["features"] = [{"name": "x", "type": "numeric"}]
    rules = [{"id": i, "conditions": {"x": {"low": -(i + 1.5), "high": i + 1.5}}, "n": 100 + i, "n_target": 100 + i}
             for i in range(n_rules)]
    doc["targets"] = [{**doc["targets"][0], "rules": rules,
                       "metarules": [{"id": 0, "rule": n_rules - 1, "conditions": {}}]}]
    doc["n_fit_rows"] = 10**6
    return json.dumps(doc)
