"""The speed expectations the test suite used to assert (tests never assert a time), as ratios against a
baseline run in the same process.

    .venv/bin/python benchmarks/suite_timings.py              # every measure, median of 5
    .venv/bin/python benchmarks/suite_timings.py --repeat 3 --only audit classes

Each line prints the measured median, the baseline's median and their ratio, with the target the tests used to
hold (absolute seconds on the developers' machine) restated as the ratio to look for:

* ``audit``: ``tcrex.audit.audit`` of 30,000 loans rows in four groups with its 1,000 bootstrap resamples (CPU
  time) against the same audit with one resample (was ``tests/audit/test_audit.py``: "CPU < 2.0 s; a loop over resamples
  would take minutes"). Target: the resamples are vectorised, so 1,000 of them cost far less than 1,000 audits
  (ratio <= 20; a loop would be ~1,000).
* ``grid``: ``TCREx.from_json`` refusing a 600-rule export whose grid would hold 520 million cells, and a
  20,000-rule nested export whose cell-by-rule tables would need 3.7 GB (was
  ``tests/engine/test_hostile_imports.py``: "refused in well under a second") against parsing the same file's
  JSON. Target: the refusal costs a small multiple of reading the file (ratio <= 20: the 600-rule refusal checks
  every rule); building the grid would be thousands of times slower, or run out of memory (the test checks that
  the refusal allocates next to nothing).
* ``classes``: ``TCREx.fit`` refusing outputs with 4,000 classes on 8,000 rows (was "< 5 s"; it ran for more than
  25 s before the cap) against fitting the same rows with two classes. Target: ratio < 1 (refused before growing).
* ``hang``: how long after a sandboxed model stops answering the caller gets its ModelError, against the limit
  (``predict_seconds``; ``tests/intake/test_sandbox.py`` checks the refusal and its message with a 0.5 s limit).
  Target: ratio close to 1.

The machine's load is printed with the figures: run it on a quiet machine for write-ups.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tcrex import TCREx  # noqa: E402
from tcrex.errors import ModelError, SchemaError  # noqa: E402

MEASURES = ("audit", "grid", "classes", "hang")


def _median(fn, repeat: int, clock=time.perf_counter) -> float:
    times = []
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    return statistics.median(times)


def _line(name: str, measured: float, baseline: float, baseline_name: str, target: str) -> None:
    print(f"{name:<34} {measured * 1e3:9.1f} ms   {baseline_name:<30} {baseline * 1e3:9.1f} ms   "
          f"ratio {measured / baseline:7.2f}   (target {target})")


def _raises(fn, error):
    def run():
        try:
            fn()
        except error:
            return
        raise AssertionError(f"expected {error.__name__}")
    return run


def audit_speed(repeat: int) -> None:
    from tcrex.audit import audit
    from tcrex.datasets import make_loans

    df = make_loans(30_000, random_state=0)
    X, y = df.drop(columns=["approved"]), df["approved"].to_numpy()
    ex = TCREx(rho=0.02, tau=0.9, target=1).fit(X, y_pred=y)
    groups = np.random.default_rng(0).choice(["a", "b", "c", "d"], len(X))
    once = _median(lambda: audit(ex, X, groups, y_pred=y, n_boot=1), repeat, time.process_time)
    spent = _median(lambda: audit(ex, X, groups, y_pred=y), repeat, time.process_time)
    _line("audit, 30k rows, n_boot=1000 (CPU)", spent, once, "the same with n_boot=1 (CPU)", "<= 20")


def grid_refusal_speed(repeat: int) -> None:
    from tests.support.hostile_exports import many_rules_export, nested_rules_export

    for name, text in (("refuse a 520M-cell grid", many_rules_export()),
                       ("refuse 3.7 GB of grid tables", nested_rules_export())):
        parse = _median(lambda: json.loads(text), repeat)
        refuse = _median(_raises(lambda: TCREx.from_json(text), SchemaError), repeat)
        _line(name, refuse, parse, f"json.loads of it ({len(text) / 2**20:.1f} MB)", "<= 20")


def class_cap_speed(repeat: int) -> None:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=8000), "b": rng.normal(size=8000)})
    many = np.array([f"c{i}" for i in rng.integers(0, 4000, 8000)])
    two = (X.a > 0).to_numpy().astype(int)
    fit = _median(lambda: TCREx(rho=0.0002).fit(X, y_pred=two), repeat)
    refuse = _median(_raises(lambda: TCREx(rho=0.0002).fit(X, y_pred=many), ModelError), repeat)
    _line("refuse 4,000 classes, 8k rows", refuse, fit, "fit the same rows, 2 classes", "< 1")


def hang_speed(repeat: int, limit_s: float = 1.0) -> None:
    from tcrex.intake import SandboxLimits, load_model
    from tcrex.datasets import LOANS_MODEL, make_loans

    blob = (ROOT / "sample_data" / LOANS_MODEL).read_bytes()
    X = make_loans(200, random_state=1).drop(columns=["approved"])
    os.environ["TCREX_SANDBOX_FAULT"] = "hang"  # the test-only switch of tcrex/intake/_worker.py
    try:
        def stopped():
            model = load_model(blob, "loans_model.json", sandbox=SandboxLimits(predict_seconds=limit_s))
            try:
                _raises(lambda: model.predict(X), ModelError)()
            finally:
                model.close()
        # load (a fresh worker) + the refusal, against load alone: the difference is the time to the refusal
        refused = _median(stopped, repeat)
    finally:
        del os.environ["TCREX_SANDBOX_FAULT"]
    loaded = _median(lambda: load_model(blob, "loans_model.json", sandbox=SandboxLimits()).close(), repeat)
    _line("hanging model stopped (- load)", refused - loaded, limit_s, "the limit predict_seconds", "~ 1")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="+", choices=MEASURES, default=list(MEASURES))
    args = parser.parse_args()
    print(f"median of {args.repeat}; load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}, "
          f"{os.cpu_count()} cores")
    runs = {"audit": audit_speed, "grid": grid_refusal_speed, "classes": class_cap_speed, "hang": hang_speed}
    for name in args.only:
        runs[name](args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
