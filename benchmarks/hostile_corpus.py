"""Run the hostile-input corpus (``tests/support/hostile_corpus.py``) and count the outcomes per class.

    .venv/bin/python benchmarks/hostile_corpus.py                  # every case
    .venv/bin/python benchmarks/hostile_corpus.py --kind table     # tables only (or: --kind model)
    .venv/bin/python benchmarks/hostile_corpus.py --quick          # the subset the tests run

Each case runs in a child process (cases are batched; a batch whose child dies is re-run one case per child, so
every fault is attributed) with a memory limit (``RLIMIT_AS``, default 3 GB), no core dumps, and a wall-clock
timeout per case (default 90 s). A table goes through ``tcrex.intake.read_table``, then the engine
(``TCREx.fit`` on the table's ``approved`` column or a derived label), the CSV exports (``tcrex.spreadsheet``:
the table, the rules, the explanations) and the HTML report (``tcrex.report.build_report``, with the file name as
title). A model goes through ``tcrex.intake.load_model`` (sandbox on, as in the dashboard, with shorter limits:
30 s to load, 20 s per prediction, 2 GB), ``check_compatibility`` and ``predict``.

Outcomes: ``ok``, ``refused`` (a TCRExError with its own message; ``refused (raw message)`` when that message
still carries a library's source path, stack trace or C++ signature; ``refused (sandbox)`` when the model's worker
crashed, hung or ran out of memory and the app reported it), and the bad ones: ``crash`` (the child died, or an
exception other than TCRExError escaped, or only the reader's last-line-of-defence caught it), ``hang``
(timeout), ``memory``, ``silent change`` (the reading differs from what the case declares without a finding
that says so, or a required finding is missing, or a file that must be refused was read), ``formula`` (an
exported CSV cell a spreadsheet would run: starting with = + - @ tab or CR, not a number), ``code execution``
(the payload's marker file exists), ``XSS`` (a ``<script>``/``onerror`` payload survives unescaped in the
report). ``not generated`` means the case's generator itself failed (reported, never hidden). Times are those of
the product's part (reading/loading onwards), not of generating the file.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OUTCOMES = ["ok", "refused", "refused (raw message)", "refused (sandbox)", "crash", "hang", "memory", "silent change", "formula",
            "code execution", "XSS", "not generated"]
BAD = {"crash", "hang", "memory", "silent change", "formula", "code execution", "XSS"}
CHILD_ENV = {"TCREX_SANDBOX": "1", "TCREX_SANDBOX_LOAD_SECONDS": "30", "TCREX_SANDBOX_PREDICT_SECONDS": "20",
             "TCREX_SANDBOX_MEMORY_GB": "2"}
#: a refusal whose message still carries a library's source path, stack trace or C++ signature
RAW_MESSAGE = re.compile(r"/[\w./-]+\.(h|hpp|cc|cpp|c|py)[:\"]|(?<![\w.])/(?:[\w.-]+/){2,}|Traceback|Stack trace"
                         r"|\w+::\w+\(")
SAFETY_NET = "in the table reader"  # tcrex.intake.read_table's last line of defence: a case without its own message


#: Every file under this size must keep the peak RSS of the process tree within MEMORY_BUDGET_MB of the baseline
#: a case above it is the bad outcome ``memory``.
SMALL_FILE_BYTES = 5 * 2**20
MEMORY_BUDGET_MB = 500


@dataclass
class Result:
    name: str
    outcome: str
    detail: str = ""
    seconds: float = 0.0
    peak_mb: float | None = None  # peak RSS of the process tree above the baseline (see _Memory)
    file_bytes: int | None = None


# ---------------------------------------------------------------------------------------------- child side
def _marker(marker_dir: str, name: str) -> str:
    return os.path.join(marker_dir, re.sub(r"[^A-Za-z0-9._-]", "_", name))


def _same(got, want) -> bool:
    if want is None:
        return got is None or (isinstance(got, float) and math.isnan(got))
    if isinstance(want, str):
        return isinstance(got, str) and got == want
    if isinstance(got, (bool, str)) or got is None:
        return False
    try:
        return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=0.0)
    except (TypeError, ValueError):
        return False


def _differences(frame, expect) -> str:
    if expect.columns is not None and [str(c) for c in frame.columns] != list(expect.columns):
        return f"columns {list(frame.columns)[:8]} instead of {expect.columns[:8]}"
    for col, values in expect.values.items():
        if col not in frame.columns:
            return f"no column {col!r} (columns: {list(frame.columns)[:8]})"
        got = frame[col].head(len(values)).tolist()
        for i, (g, w) in enumerate(zip(got, values)):
            if not _same(g, w):
                return f"{col!r} row {i}: read {g!r}, the file holds {w!r}"
    return ""


def _formula_cells(text: str) -> list:
    from tcrex.spreadsheet import FORMULA_STARTS

    bad = []
    for row in csv.reader(io.StringIO(text, newline="")):
        for cell in row:
            if cell.startswith(FORMULA_STARTS):
                try:
                    float(cell)
                except ValueError:
                    bad.append(cell[:40])
    return bad


XSS_PATTERN = re.compile(r"<script[^>]*>\s*tcrexXSS|<img[^>]*onerror", re.IGNORECASE)


def _table_case(c, data: bytes) -> tuple[str, str]:
    import numpy as np
    import pandas as pd

    from tcrex import TCREx
    from tcrex.errors import TCRExError
    from tcrex.intake import handle_missing, read_table
    from tcrex.report import ReportOptions, build_report, fingerprint_frame
    from tcrex.spreadsheet import to_csv

    try:
        rep = read_table(data, c.filename, **c.read_kwargs)
    except TCRExError as exc:
        msg = str(exc)
        if SAFETY_NET in msg:
            return "crash", f"caught only by the last line of defence: {msg[:300]}"
        return ("refused (raw message)" if RAW_MESSAGE.search(msg) else "refused"), msg[:300]
    kinds = {f.kind for f in rep.findings}
    if c.expect is not None:
        if c.expect.refuse:
            return "silent change", f"read although it must be refused: {rep.n_rows} rows, columns " \
                                    f"{list(rep.frame.columns)[:6]}"
        missing = c.expect.require - kinds
        if missing:
            return "silent change", f"no {sorted(missing)} finding (findings: {sorted(kinds)})"
        diff = _differences(rep.frame, c.expect)
        if diff and not (c.expect.allow & kinds):
            return "silent change", diff
    frame = rep.frame
    label = "approved" if "approved" in frame.columns else None
    X = frame.drop(columns=[label]) if label else frame
    X = X[[col for col in X.columns if X[col].notna().any()]].iloc[:20_000, :6]
    exports = [to_csv(frame.head(5000))]
    html = ""
    note = ""
    if X.shape[1]:
        try:
            if X.isna().any().any():
                X, _ = handle_missing(X, "impute")
            y = frame.loc[X.index, label] if label else None
            if y is None or y.isna().any() or y.nunique() < 2:
                first = X.iloc[:, 0]
                y = (pd.factorize(first)[0] % 2) if not pd.api.types.is_numeric_dtype(first) else \
                    (first > first.median()).astype(int)
            y = np.asarray(y)
            ex = TCREx(rho=0.1, tau=0.7, n_trees=1, max_cells=20_000).fit(X, y_pred=y)
            explanations = ex.explain(X.head(200), y_pred=y[:200])
            exports += [to_csv(ex.rules_frame()), to_csv(explanations)]
            html = build_report(ex, ReportOptions(title=c.filename, data_description=f"{c.filename}: {list(X.columns)}",
                                                  data_fingerprint=fingerprint_frame(X),
                                                  model_description="corpus labels", model_fingerprint="-",
                                                  params={"rho": 0.1, "tau": 0.7}, explanations=explanations))
        except TCRExError as exc:
            note = f"; the engine refused: {str(exc)[:160]}"
    for text in exports:
        bad = _formula_cells(text)
        if bad:
            return "formula", f"exported cells {bad[:3]}"
    if html and XSS_PATTERN.search(html):
        return "XSS", XSS_PATTERN.search(html).group(0)[:80]
    return "ok", f"{rep.n_rows} rows × {rep.n_columns} columns; findings {sorted(kinds)}{note}"


def _rules_case(c, data: bytes) -> tuple[str, str]:
    from tcrex import TCREx
    from tcrex.errors import TCRExError

    try:
        ex = TCREx.from_json(data)
    except TCRExError as exc:
        return ("refused (raw message)" if RAW_MESSAGE.search(str(exc)) else "refused"), str(exc)[:300]
    return "ok", f"{sum(len(t.rules) for t in ex.targets_)} rules over {ex.targets_[0].grid.n_cells:,} cells" \
        if ex.targets_ and ex.targets_[0].grid is not None else "ok"


def _model_case(c, data: bytes) -> tuple[str, str]:
    from tcrex.errors import TCRExError
    from tcrex.intake import ModelFaultError, check_compatibility, load_model
    from tests.support.hostile_corpus import model_table

    model = None
    try:
        model = load_model(data, c.filename)
        X = model_table(c.table)
        report = check_compatibility(model, X)
        if report.ok:
            model.predict(X)
    except ModelFaultError as exc:
        return "refused (sandbox)", str(exc)[:300]
    except TCRExError as exc:
        return ("refused (raw message)" if RAW_MESSAGE.search(str(exc)) else "refused"), str(exc)[:300]
    finally:
        if callable(getattr(model, "close", None)):
            model.close()  # the worker's memory is measured for this case only
    return ("ok", model.description[:200]) if report.ok else ("refused", "; ".join(map(str, report.problems))[:300])


# ---------------------------------------------------------------------------------------------- memory
def _status_kb(pid, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _children(pid) -> list[int]:
    """Children started by the process's main thread (where the sandbox starts its workers; reading every
    thread's list each 5 ms slowed the cases down)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except (OSError, ValueError):
        return []


def _descendants(pid) -> list[int]:
    found, todo = [], _children(pid)
    while todo:
        p = todo.pop()
        found.append(p)
        todo += _children(p)
    return found


class _Memory:
    """Peak RSS of this process and its descendants (the model sandbox's workers) while a case runs.

    This process: its ``VmHWM`` (the kernel's exact peak), reset before each case (``/proc/self/clear_refs``), minus
    its RSS when the case starts — the file is generated by then, so generating never counts. Descendants: a thread
    reads each one's ``VmHWM`` every 5 ms (exact per process, so only growth in a worker's last 5 ms can be missed)
    and subtracts the peak of a worker that loaded a small valid model of the same format (what every upload costs:
    the worker's interpreter and libraries, ~230 MB). The sum of the peaks bounds the peak of the sum from above."""

    def __init__(self):
        import threading

        self.peaks: dict = {}
        self.before: set = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        self.worker_baseline: dict = {}

    def _sample(self) -> None:
        me = os.getpid()
        while not self._stop.wait(0.005):
            for pid in _descendants(me):
                if pid in self.before:  # running before the case (a fork server, another test's worker)
                    continue
                hwm = _status_kb(pid, "VmHWM")
                if hwm:
                    with self._lock:
                        self.peaks[pid] = max(self.peaks.get(pid, 0), hwm)

    def start(self) -> int:
        import gc

        gc.collect()
        self._settle()
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current RSS
        except OSError:
            pass
        with self._lock:
            self.peaks = {}
            self.before = set(_descendants(os.getpid()))
        return _status_kb("self", "VmRSS")

    @staticmethod
    def _settle(seconds: float = 5.0) -> None:
        """Wait for the previous case's workers to exit (they are stopped when their model is collected)."""
        end = time.monotonic() + seconds
        while _children(os.getpid()) and time.monotonic() < end:
            time.sleep(0.01)

    def above_baseline(self, rss0: int, fmt: str | None) -> float:
        import gc

        gc.collect()
        self._settle()
        time.sleep(0.01)
        own = max(0, _status_kb("self", "VmHWM") - rss0)
        with self._lock:
            workers = list(self.peaks.values())
        base = self.worker_baseline.get(fmt, 0)
        return (own + sum(max(0, w - base) for w in workers)) / 1024

    def measure_worker_baseline(self, fmt: str) -> None:
        """The peak of a sandbox worker loading and running a small valid model of format ``fmt``."""
        if fmt in self.worker_baseline:
            return
        from tcrex.intake import load_model
        from tests.support import builders as b
        from tests.support.hostile_corpus import model_table

        make = {"xgboost-json": lambda: (b.xgb_classifier(n_estimators=3)[0], "m.json", "loans"),
                "xgboost-ubj": lambda: (b.xgb_classifier(n_estimators=3, fmt="ubj")[0], "m.ubj", "loans"),
                "sklearn": lambda: (b.skops_bytes(_valid_sklearn()), "m.skops", "numeric"),
                "onnx": lambda: (b.onnx_bytes(b.onnx_linear_classifier()), "m.onnx", "numeric"),
                "lightgbm-text": lambda: (_tree_file("lgb"), "m.txt", "loans"),
                "lightgbm-json": lambda: (_tree_file("lgb-json"), "m.json", "loans"),
                "catboost-cbm": lambda: (_tree_file("cbm"), "m.cbm", "loans"),
                "catboost-json": lambda: (_tree_file("cb-json"), "m.json", "loans")}.get(fmt)
        if make is None:
            self.worker_baseline[fmt] = 0
            return
        data, filename, table = make()
        self.start()
        model = load_model(data, filename)
        try:
            model.predict(model_table(table))
        finally:
            model.close()
        self._settle()
        with self._lock:
            self.worker_baseline[fmt] = max(self.peaks.values(), default=0)


def _tree_file(which: str) -> bytes:
    """The valid LightGBM / CatBoost model the hostile tree files start from (tests/support/hostile_trees.py)."""
    from tests.support import hostile_trees as ht

    return {"lgb": lambda: ht.lgb_text().encode(), "lgb-json": lambda: ht.lgb_dump().encode(),
            "cbm": lambda: ht.cb_file(), "cb-json": lambda: ht.cb_file("json")}[which]()


def _valid_sklearn():
    from sklearn.linear_model import LogisticRegression
    from tests.support import builders as b

    X = b.numeric()
    return LogisticRegression().fit(X, X.a > 0)


def _model_format(data: bytes, filename: str) -> str | None:
    from tcrex.intake.models import detect_format

    try:
        return detect_format(data, filename)
    except Exception:  # noqa: BLE001 - not a model format: no worker starts
        return None


def child(marker_dir: str, names: list[str]) -> None:
    sys.path.insert(0, str(ROOT))
    csv.field_size_limit(sys.maxsize)  # the runner parses exported CSVs whatever their cell sizes
    from tests.support.hostile_corpus import case

    memory = _Memory()
    for name in names:
        c = case(name)
        marker = _marker(marker_dir, name)
        try:
            data = c.make(marker)
        except Exception as exc:  # noqa: BLE001 - the generator's fault, not the product's: said, not counted bad
            print(json.dumps({"name": name, "outcome": "not generated", "seconds": 0.0,
                              "detail": f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"}), flush=True)
            continue
        fmt = _model_format(data, c.filename) if c.kind == "model" else None
        if fmt:
            memory.measure_worker_baseline(fmt)
        rss0 = memory.start()
        t = time.perf_counter()
        try:
            run_case = {"model": _model_case, "rules": _rules_case}.get(c.kind, _table_case)
            outcome, detail = run_case(c, data)
        except MemoryError:
            outcome, detail = "memory", "MemoryError"
        except RecursionError as exc:
            outcome, detail = "crash", f"RecursionError: {str(exc)[:200]}"
        except Exception as exc:  # noqa: BLE001 - the point: anything else escaping is a crash
            outcome, detail = "crash", f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
        seconds = round(time.perf_counter() - t, 2)
        peak = memory.above_baseline(rss0, fmt)
        if len(data) < SMALL_FILE_BYTES and peak > MEMORY_BUDGET_MB and outcome not in BAD:
            outcome, detail = "memory", (f"peak RSS {peak:.0f} MB above the baseline for a {len(data):,}-byte file "
                                         f"(limit {MEMORY_BUDGET_MB} MB); {detail}")
        if os.path.exists(marker):
            outcome, detail = "code execution", f"the payload created {marker}"
        print(json.dumps({"name": name, "outcome": outcome, "detail": detail, "seconds": seconds,
                          "peak_mb": round(peak, 1), "file_bytes": len(data)}), flush=True)


# ---------------------------------------------------------------------------------------------- parent side
def _limits(memory_gb: float):
    def apply():
        limit = int(memory_gb * 1024 ** 3)
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))  # soft: the sandbox worker may set its own
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def _died(returncode: int, stderr: str) -> tuple[str, str]:
    tail = " ".join(stderr.split())[-300:]
    if re.search(r"MemoryError|bad_alloc|Cannot allocate memory|out of memory|std::length_error", stderr):
        return "memory", tail
    if returncode == -signal.SIGKILL:
        return "memory", f"killed (SIGKILL, the kernel's OOM killer?) {tail}"
    if returncode < 0:
        return "crash", f"{signal.Signals(-returncode).name} {tail}"
    return "crash", f"exit code {returncode}: {tail}"


def _run_batch(names: list[str], timeout: float, memory_gb: float, marker_dir: str) -> tuple[dict, list]:
    env = {k: v for k, v in os.environ.items() if k not in ("TCREX_ALLOW_PICKLE",)}
    env.update(CHILD_ENV)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", marker_dir, *names]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=marker_dir, env=env,
                            preexec_fn=_limits(memory_gb), start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout * len(names))
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    results = {}
    for line in out.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and r.get("name") in names:
            results[r["name"]] = Result(r["name"], r["outcome"], r["detail"], r["seconds"], r.get("peak_mb"),
                                        r.get("file_bytes"))
    rest = [n for n in names if n not in results]
    if rest and len(names) == 1:
        outcome, detail = ("hang", f"no answer in {timeout:.0f} s") if timed_out else _died(proc.returncode, err)
        results[rest[0]] = Result(rest[0], outcome, detail, timeout if timed_out else 0.0)
    return results, rest


def run(names: list[str], *, timeout: float = 90.0, memory_gb: float = 3.0, batch: int = 12,
        progress=None) -> dict:
    """``{name: Result}`` for the named cases (see the module docstring)."""
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="tcrex-corpus-") as marker_dir:
        queue = [names[i:i + batch] for i in range(0, len(names), batch)]
        while queue:
            chunk = queue.pop(0)
            got, rest = _run_batch(chunk, timeout, memory_gb, marker_dir)
            results.update(got)
            if progress:
                for name in got:
                    progress(got[name])
            if rest and len(chunk) > 1:  # a batch died or hung: re-run what is left one case per child
                queue = [[n] for n in rest] + queue
    return results


def tally(results: dict, cases_by_name: dict) -> dict:
    counts: dict = defaultdict(Counter)
    for name, r in results.items():
        c = cases_by_name[name]
        counts[f"{c.kind}: {c.cls}"][r.outcome] += 1
    return counts


def print_tally(counts: dict) -> None:
    cols = [o for o in OUTCOMES]
    width = max(len(k) for k in counts) + 2
    print("class".ljust(width) + " ".join(f"{o[:13]:>13}" for o in ["total", *cols]))
    total = Counter()
    for cls in sorted(counts):
        row = counts[cls]
        total.update(row)
        print(cls.ljust(width) + " ".join(f"{n:>13}" for n in [sum(row.values()), *(row[o] for o in cols)]))
    print("all".ljust(width) + " ".join(f"{n:>13}" for n in [sum(total.values()), *(total[o] for o in cols)]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["table", "model", "rules"], default=None)
    parser.add_argument("--quick", action="store_true", help="only the subset the tests run")
    parser.add_argument("--match", default="", help="only cases whose name contains this")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds per case")
    parser.add_argument("--memory-gb", type=float, default=3.0)
    parser.add_argument("--batch", type=int, default=12)
    parser.add_argument("--json", help="also write every result to this file")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from tests.support.hostile_corpus import cases

    selected = [c for c in cases() if (args.kind is None or c.kind == args.kind) and (c.quick or not args.quick)
                and args.match in c.name]
    by_name = {c.name: c for c in selected}
    t = time.perf_counter()

    def progress(r):
        flag = "!!" if r.outcome in BAD else "  "
        mem = f"{r.peak_mb:6.0f} MB" if r.peak_mb is not None else "      - "
        print(f"{flag} {r.outcome:<17} {r.seconds:6.1f}s {mem}  {r.name}: {r.detail[:150]}", flush=True)

    results = run(list(by_name), timeout=args.timeout, memory_gb=args.memory_gb, batch=args.batch,
                  progress=progress)
    print(f"\n{len(results)} cases in {time.perf_counter() - t:.0f} s "
          f"(memory limit {args.memory_gb:g} GB, timeout {args.timeout:g} s per case)\n")
    print_tally(tally(results, by_name))
    if args.json:
        Path(args.json).write_text(json.dumps({n: vars(r) for n, r in results.items()}, indent=1))
    return 1 if any(r.outcome in BAD for r in results.values()) else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(main())
