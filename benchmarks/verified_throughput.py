"""Verified counterfactuals in batch: rows/s of ``counterfactuals(X, model=..., reference=...)`` and where the
time goes, against the bare model's ``predict`` on the same rows in the same process (the yardstick). Not run by the
tests.

    .venv/bin/python benchmarks/verified_throughput.py                    # 50,000 loans rows, 3 repeats
    .venv/bin/python benchmarks/verified_throughput.py --rows 200000 --cli
    .venv/bin/python benchmarks/verified_throughput.py --data heloc --old-search   # the bureau table, both searches

Data: ``--data loans`` (default): ``make_loans`` (``--fit-rows`` rows with seed 1 train the paper's XGBoost and
fit T-CREx towards ``approved`` = 1 with the model; ``--rows`` other rows with seed 0 are explained). ``--data
heloc``: ``../shared/datasets/heloc.csv`` (23 integer features with the codes -7/-8/-9), shuffled with seed 0: the
first ``--fit-rows`` rows train and fit (target 1), the next ``--rows`` (at most the rest of the file) are
explained. In both the fit rows are passed as ``reference=``, the rows of the search beyond the rules.

``--old-search`` also runs, in the same process and alternated, the search that asks the model about every
candidate point (``tcrex._engine.recourse._verify.tree_scoring = False``) beside the one scoring candidates on the
model's own trees and confirming what it records on the model: frames checked identical, rows/s, model points per
row and peak memory (tracemalloc's peak of one call) side by side. Printed, best of ``--repeat``:

* rows/s of the whole call with sentences and with ``text=False``; the yardstick (bare ``model.predict`` on the
  same rows, one call) as rows/s and the ratio;
* a breakdown of one call with sentences: the lookup (the model's outputs on X, the explainer's cells), the
  search's model calls (count, candidate points, time), the bare model on exactly the same candidate points (the
  same calls replayed on the frames the model was given: the floor of the search's model time), the decoding of
  points into the model's frames (the rest of the model-call time), the rest of the search (candidate building,
  choosing), the sentences and the frame building (the rest of ``counterfactuals``).

``--baseline-tree DIR`` (a checkout of an earlier version, e.g. ``git worktree add /tmp/before <commit>``) loads
that version's engine in the same process (as ``tcrex_baseline``), checks that its frame equals this one's
(points, sources, sentences, every column) and times both alternately: the ratio is what a busy machine does
not blur.

``--cli`` also runs ``tcrex explain --verified --reference-rows`` in this process on the same rows written as
Parquet, the model saved as XGBoost JSON (predicted in the CLI's model sandbox), and prints its rows/s.

The breakdown wraps the engine's functions with timers (``tcrex._engine.recourse._verify.predict``, ``sentences`` and
``verify_points``, and the ``lookup`` and ``outputs`` that ``tcrex._engine.recourse._counterfactuals`` calls); the headline figures are measured without them.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import machine, train_model  # noqa: E402
from recourse import load_baseline  # noqa: E402

import tcrex._engine.recourse._counterfactuals as counterfactuals_module  # noqa: E402
import tcrex._engine.recourse._tree_scoring as tree_scoring_module  # noqa: E402
import tcrex._engine.recourse._verify as verify_module  # noqa: E402
from tcrex import TCREx  # noqa: E402
from tcrex.datasets import make_loans  # noqa: E402


def heloc(fit_rows: int, rows: int):
    """(fit X, fit y, explained X) from the shared HELOC file, shuffled with seed 0."""
    from common import SHARED_DATA
    path = SHARED_DATA / "heloc.csv"
    if not path.exists():
        raise SystemExit(f"{path} is absent (the shared datasets folder)")
    df = pd.read_csv(path)
    df = df.iloc[np.random.default_rng(0).permutation(len(df))].reset_index(drop=True)
    X, y = df.drop(columns="target"), df["target"].to_numpy()
    fit_X, fit_y = X.iloc[:fit_rows].reset_index(drop=True), y[:fit_rows]
    return fit_X, fit_y, X.iloc[fit_rows:fit_rows + rows].reset_index(drop=True)


def peak_mb(fn) -> float:
    """tracemalloc's peak of the memory allocated during ``fn()`` (numpy's arrays included), in MB."""
    import tracemalloc
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()


def old_search_side_by_side(ex, X, model, reference, repeat: int) -> None:
    """The search asking the model about every candidate against the one scoring candidates on the model's trees,
    in this process, alternated: identical frames, rows/s, model points per row, peak memory."""
    def call():
        return ex.counterfactuals(X, model=model, reference=reference)
    figures = {}
    frames = {}
    for flag in (True, False):
        verify_module.tree_scoring = flag
        frames[flag] = call()
        figures[flag] = {"points": model_points(call, model) / len(X), "peak": peak_mb(call), "t": [], "cpu": []}
    for _ in range(repeat):
        for flag in (True, False):
            verify_module.tree_scoring = flag
            c, t = time.process_time(), time.perf_counter()
            call()
            figures[flag]["t"].append(time.perf_counter() - t)
            figures[flag]["cpu"].append(time.process_time() - c)
    verify_module.tree_scoring = True
    pd.testing.assert_frame_equal(frames[True], frames[False])
    new, old = figures[True], figures[False]
    print(f"  search on the model only -> candidates on the trees (same process, alternated, best of {repeat}; "
          f"frames identical; {os.getloadavg()[0]:.1f} load now):")
    print(f"    rows/s                 {len(X) / min(old['t']):>10,.0f} -> {len(X) / min(new['t']):>10,.0f}  "
          f"({min(old['t']) / min(new['t']):.2f}x faster; CPU s per call, medians, {np.median(old['cpu']):.2f} -> "
          f"{np.median(new['cpu']):.2f}: {np.median(old['cpu']) / np.median(new['cpu']):.2f}x)")
    print(f"    model points per row   {old['points']:>10.1f} -> {new['points']:>10.1f}")
    print(f"    peak memory of a call  {old['peak']:>8.0f} MB -> {new['peak']:>8.0f} MB (tracemalloc)")


def loans(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    df = make_loans(n, random_state=seed)
    X = df.drop(columns="approved")
    X = X.astype({c: "category" for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])})
    return X, df["approved"].to_numpy()


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


class Timers:
    """Wraps the engine's stage functions with timers for one call (restored on exit)."""

    def __init__(self):
        self.t, self.frames = {}, []

    def wrap(self, owner, name, key, record=False):
        original = getattr(owner, name)
        timers = self

        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timers.t[key] = timers.t.get(key, 0.0) + time.perf_counter() - t
                if record:
                    timers.frames.append(args[1])  # predict(model, frame)
        self.undo.append((owner, name, original))
        setattr(owner, name, timed)

    def __enter__(self):
        self.undo = []
        self.wrap(verify_module, "predict", "predict", record=True)
        self.wrap(verify_module._Model, "outputs", "search model calls")
        self.wrap(tree_scoring_module.TreeScorer, "__call__", "tree scoring")
        self.wrap(verify_module, "sentences", "sentences")
        self.wrap(verify_module, "verify_points", "search")
        self.wrap(counterfactuals_module, "lookup_rows", "lookup")  # the outputs on X (predict, not through
        # tcrex._engine.recourse._verify) and the explainer's cells
        return self

    def __exit__(self, *exc):
        for owner, name, original in reversed(self.undo):
            setattr(owner, name, original)


def model_points(fn, model) -> int:
    """Points the model is asked about during ``fn()`` (every predict call: the outputs on X and the search's), the
    model's own ``predict`` wrapped on the instance so that the explainer still sees the very model it was fitted
    with."""
    seen = [0]
    original = model.predict

    def counting(frame, *args, **kwargs):
        seen[0] += len(frame)
        return original(frame, *args, **kwargs)
    model.predict = counting
    try:
        fn()
    finally:
        del model.predict
    return seen[0]


def breakdown(ex, X, model, reference=None) -> None:
    with Timers() as tm:
        t = time.perf_counter()
        ex.counterfactuals(X, model=model, reference=reference)
        total = time.perf_counter() - t
    frames = tm.frames
    n_points = sum(len(f) for f in frames)
    bare_same = best(lambda: [model.predict(f) for f in frames], 2)
    bare_one = best(lambda: model.predict(pd.concat(frames, ignore_index=True)), 2) if frames else 0.0
    search = tm.t.get("search", 0.0)
    calls = tm.t.get("search model calls", 0.0)
    trees = tm.t.get("tree scoring", 0.0)
    lookup = tm.t.get("lookup", 0.0)
    parts = [
        ("lookup (outputs on X + cells)", lookup),
        (f"search: model calls ({len(frames)} calls, {n_points:,} points)", calls),
        ("  of which the bare model on the same frames (floor)", bare_same),
        ("  of which decoding points to the model's frames", calls - tm.t.get("predict", 0.0)),
        ("search: candidates scored on the trees (ties asked of the model)", trees),
        ("search: candidates and choice (rest)", search - calls - trees),
        ("sentences", tm.t.get("sentences", 0.0)),
        ("frame building (rest)", total - lookup - search - tm.t.get("sentences", 0.0)),
    ]
    print(f"  breakdown of one call ({total:.3f} s, {len(X) / total:,.0f} rows/s with the timers):")
    for name, secs in parts:
        if np.isfinite(secs):
            print(f"    {name:<58} {secs:7.3f} s  {secs / total:6.1%}")
    print(f"    {'the same points in one bare call':<58} {bare_one:7.3f} s  "
          f"({n_points / max(bare_one, 1e-9):,.0f} points/s; {n_points / len(X):.1f} points per row)")


_CLI_RUN = """
import sys, time
sys.path.insert(0, sys.argv[1])
from click.testing import CliRunner
from tcrex.cli import main
assert __import__("tcrex").__file__.startswith(sys.argv[1])
times = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    r = CliRunner().invoke(main, sys.argv[3:])
    assert r.exit_code == 0, r.output
    times.append(time.perf_counter() - t)
print(min(times))
"""


def cli_seconds(tree, argv, repeat: int) -> float:
    """Best wall time of ``tcrex`` CLI ``argv`` with the engine of ``tree``, in a fresh interpreter (the model's
    sandbox worker imports the engine by name, so another version cannot run beside this one)."""
    import subprocess
    out = subprocess.run([sys.executable, "-c", _CLI_RUN, str(tree), str(repeat), *argv], capture_output=True,
                         text=True, check=True)
    return float(out.stdout.split()[-1])


def cli_throughput(ex, X, fit_X, model, repeat: int, baseline_tree=None) -> None:
    from click.testing import CliRunner

    from tcrex.cli import main as cli
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data, ref, rules, mpath = tmp / "in.parquet", tmp / "ref.parquet", tmp / "rules.json", tmp / "model.json"
        X.to_parquet(data, index=False)
        fit_X.to_parquet(ref, index=False)
        rules.write_text(ex.to_json())
        model.save_model(mpath)

        def run():
            r = CliRunner().invoke(cli, ["explain", "--rules", str(rules), "--data", str(data), "--model", str(mpath),
                                         "--out", str(tmp / "out.parquet"), "--verified", "--reference-rows",
                                         str(ref)])
            assert r.exit_code == 0, r.output
        if baseline_tree is not None:  # each in a fresh interpreter (best of two runs: the model sandbox started), alternated
            argv = ["explain", "--rules", str(rules), "--data", str(data), "--model", str(mpath), "--verified",
                    "--reference-rows", str(ref)]
            here = Path(__file__).resolve().parents[1]
            new_t, old_t = [], []
            for _ in range(repeat):
                new_t.append(cli_seconds(here, argv + ["--out", str(tmp / "out.parquet")], 2))
                old_t.append(cli_seconds(baseline_tree, argv + ["--out", str(tmp / "old.parquet")], 2))
            same = pd.read_parquet(tmp / "old.parquet").equals(pd.read_parquet(tmp / "out.parquet"))
            print(f"  CLI against the baseline (fresh interpreters, alternated): output identical: {same}; "
                  f"{len(X) / min(old_t):,.0f} rows/s -> {len(X) / min(new_t):,.0f} rows/s "
                  f"({min(old_t) / min(new_t):.2f}x faster)")
        dt = best(run, repeat)
        bare = best(lambda: model.predict(X), repeat)
        out = pd.read_parquet(tmp / "out.parquet")
        mem = ex.counterfactuals(X, model=model)
        same = (out["text"].tolist() == mem["text"].tolist()
                and out["source"].astype(str).tolist() == mem["source"].astype(str).tolist())
        print(f"  CLI explain --verified --reference-rows: {len(X) / dt:,.0f} rows/s ({dt:.2f} s, in-process bare "
              f"predict {len(X) / bare:,.0f} rows/s); sentences and sources equal to in memory: {same}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", choices=("loans", "heloc"), default="loans")
    ap.add_argument("--rows", type=int, default=None, help="rows explained (default 50,000 loans, 4,871 HELOC)")
    ap.add_argument("--fit-rows", type=int, default=None, help="fit and reference rows (default 10,000 loans, 5,000 "
                    "HELOC)")
    ap.add_argument("--old-search", action="store_true", help="also time the search asking the model about every "
                    "candidate, in this process")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline-tree", help="a checkout of an earlier version to compare with and time against")
    ap.add_argument("--cli", action="store_true", help="also time tcrex explain --verified on the same rows")
    args = ap.parse_args()
    print(machine())
    if args.data == "heloc":
        fit_X, fit_y, X = heloc(args.fit_rows or 5_000, args.rows or 10**9)
    else:
        fit_X, fit_y = loans(args.fit_rows or 10_000, 1)
        X, _ = loans(args.rows or 50_000, 0)
    args.rows = len(X)
    model = train_model(fit_X, fit_y)
    ex = TCREx(target=1).fit(fit_X, model)
    model.predict(X.head(100))  # warm up
    ex.counterfactuals(X.head(1000), model=model, reference=fit_X)
    cf = ex.counterfactuals(X, model=model, reference=fit_X)
    needing = cf["recourse"].notna().mean()
    src = cf["source"].value_counts(normalize=True)
    print(f"{args.rows:,} {args.data} rows, {needing:.0%} needing recourse; sources "
          + ", ".join(f"{k} {v:.1%}" for k, v in src.items() if v) + f"; {sum(s.n_rules for s in ex.targets_)} rules")
    if args.old_search:
        old_search_side_by_side(ex, X, model, fit_X, args.repeat)
    bare = best(lambda: model.predict(X), args.repeat)
    with_text = best(lambda: ex.counterfactuals(X, model=model, reference=fit_X), args.repeat)
    no_text = best(lambda: ex.counterfactuals(X, model=model, text=False, reference=fit_X), args.repeat)
    print(f"  yardstick: bare predict on the same rows      {args.rows / bare:>12,.0f} rows/s ({bare:.3f} s)")
    print(f"  counterfactuals(X, model=...) with sentences  {args.rows / with_text:>12,.0f} rows/s ({with_text:.3f} s, "
          f"{with_text / bare:.0f}x the yardstick)")
    print(f"  counterfactuals(..., text=False)              {args.rows / no_text:>12,.0f} rows/s ({no_text:.3f} s)")
    points = model_points(lambda: ex.counterfactuals(X, model=model, reference=fit_X), model)
    print(f"  model points per row (outputs on X included)  {points / args.rows:>12.1f} ({points:,} points)")
    if args.baseline_tree:
        old = load_baseline(args.baseline_tree).TCREx(target=1).fit(fit_X, model)
        same = old.counterfactuals(X, model=model, reference=fit_X)
        agreement = "identical frame"
        try:
            pd.testing.assert_frame_equal(same, cf)
        except AssertionError:
            # Only the sentences' wording may differ (a later version names codes a range spans, titles, ...):
            # every point, source, status and count must be the same, or the timing compares different work.
            words = [c for c in cf.columns if c == "text" or c.endswith("_text")]
            try:
                pd.testing.assert_frame_equal(same.drop(columns=words), cf.drop(columns=words))
                reworded = float(np.mean([(same[c] != cf[c]).mean() for c in words]))
                agreement = f"identical frame but for the sentences' wording ({reworded:.1%} of the rows reworded)"
            except AssertionError:  # a different search: the timing compares different work, said so
                differ = same["source"].astype(object).fillna("").to_numpy() != cf["source"].astype(object).fillna("").to_numpy()
                verified = (cf["recourse"] == "verified").mean(), (same["recourse"] == "verified").mean()
                agreement = (f"DIFFERENT frames: {differ.mean():.1%} of the rows have another source; verified "
                             f"{verified[1]:.1%} there, {verified[0]:.1%} here")
        old_points = model_points(lambda: old.counterfactuals(X, model=model, reference=fit_X), model)
        new_t, old_t, new_c, old_c = [], [], [], []
        for _ in range(args.repeat):
            for fn, acc, cpu in ((lambda: ex.counterfactuals(X, model=model, reference=fit_X), new_t, new_c),
                                 (lambda: old.counterfactuals(X, model=model, reference=fit_X), old_t, old_c)):
                c, t = time.process_time(), time.perf_counter()
                fn()
                acc.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
        print(f"  baseline {args.baseline_tree}: {agreement}; {args.rows / min(old_t):,.0f} rows/s -> "
              f"{args.rows / min(new_t):,.0f} rows/s ({min(old_t) / min(new_t):.2f}x faster, best of "
              f"{args.repeat} alternated); CPU s per call (every thread, medians) {np.median(old_c):.2f} -> "
              f"{np.median(new_c):.2f} ({np.median(old_c) / np.median(new_c):.2f}x); model points per row "
              f"{old_points / args.rows:.1f} -> {points / args.rows:.1f}")
    breakdown(ex, X, model, fit_X)
    if args.cli:
        cli_throughput(ex, X, fit_X, model, args.repeat, args.baseline_tree)


if __name__ == "__main__":
    main()
