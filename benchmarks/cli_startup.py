"""The CLI's fixed cost: `tcrex --help`, and `tcrex explain --model` on a small file before its rows.

    .venv/bin/python benchmarks/cli_startup.py                      # this checkout, 5 repeats
    .venv/bin/python benchmarks/cli_startup.py --tree /work/main    # another checkout's tcrex (before -> after)

Each command runs as a program (``python -m tcrex``, ``PYTHONPATH`` = the tree) and is timed from the outside:
wall time, CPU time (user + sys of the program and the children it waited for: the model's sandbox worker) and
peak RSS of the program (``os.wait4``). Medians of ``--repeat`` runs, printed with the machine's load average.

Baselines, measured in this process in the same run:

* ``--help`` against a bare interpreter start (``python -c pass``): the ratio is what the CLI adds to Python's
  own start; the targets are absolute (0.3 s, 60 MB).
* ``explain --model`` on ``--rows`` rows (the loans sample, the bundled XGBoost model, rules fitted on the same
  rows) against the same work in this process with everything already imported and the model already loaded
  (``TCREx.from_json``, read the Parquet, ``explain`` with the model, write the Parquet): the difference is the
  command's fixed cost before its first row (imports, the model's sandbox start, the file checks); target 1 s.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


#: Runs one program and prints its figures as JSON. A small interpreter of its own: a child's peak RSS counts the
#: memory of the process it was forked from (Linux keeps the high-water mark across exec), so the program is
#: started from this ~10 MB launcher, never from the benchmark process with pandas and the engine loaded.
LAUNCHER = """
import json, os, subprocess, sys, time
t = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = proc.stderr.read()
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
                  "code": os.waitstatus_to_exitcode(status), "stderr": err.decode(errors="replace")[-2000:]}))
"""


def run_program(args, env, cwd) -> dict:
    """Wall seconds, CPU seconds (the program and its waited-for children: the model's sandbox worker) and peak
    RSS (MB) of one run of ``args``."""
    out = subprocess.run([sys.executable, "-c", LAUNCHER, *map(str, args)], env=env, cwd=cwd, check=True,
                         capture_output=True, text=True).stdout
    res = json.loads(out)
    if res.pop("code") != 0:
        raise SystemExit(f"{' '.join(map(str, args))} failed:\n{res['stderr']}")
    res.pop("stderr")
    return res


def medians(runs) -> dict:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default=str(ROOT), help="checkout whose tcrex is measured (default: this one)")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import pandas as pd

    from tcrex import TCREx
    from tcrex.datasets import make_loans
    from tcrex.distributed import explain_parquet_file
    from tcrex.intake import load_model

    env = {**os.environ, "PYTHONPATH": args.tree}
    py = sys.executable
    where = subprocess.run([py, "-c", "import tcrex; print(tcrex.__file__)"], env=env, cwd=tempfile.gettempdir(),
                           capture_output=True, text=True, check=True).stdout.strip()
    if not where.startswith(str(Path(args.tree).resolve())):
        raise SystemExit(f"PYTHONPATH={args.tree} imports tcrex from {where}, not from that tree")
    print(f"tree {args.tree}; load average {os.getloadavg()[0]:.2f} at start; {args.repeat} repeats, medians")

    # from a folder without a tcrex of its own (``python -m`` puts the current folder first on the path)
    neutral = tempfile.mkdtemp()
    bare = medians([run_program([py, "-c", "pass"], env, neutral) for _ in range(args.repeat)])
    helps = medians([run_program([py, "-m", "tcrex", "--help"], env, neutral) for _ in range(args.repeat)])
    os.rmdir(neutral)
    print(f"python -c pass : {bare['wall']:.3f} s wall, {bare['cpu']:.3f} s CPU, {bare['rss_mb']:.0f} MB")
    print(f"tcrex --help   : {helps['wall']:.3f} s wall, {helps['cpu']:.3f} s CPU, {helps['rss_mb']:.0f} MB "
          f"(x{helps['wall'] / bare['wall']:.1f} a bare interpreter's wall time; targets 0.3 s, 60 MB)")

    model_path = ROOT / "sample_data" / "loans_model.json"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        X = make_loans(args.rows, random_state=1).drop(columns=["approved"])
        X.to_parquet(tmp / "small.parquet", index=False)
        model = load_model(model_path.read_bytes(), model_path.name, sandbox=False)
        rules = TCREx(rho=0.05).fit(X, model).to_json()
        (tmp / "rules.json").write_text(rules)

        def in_process():
            ex = TCREx.from_json(rules)
            frame = pd.read_parquet(tmp / "small.parquet")
            ex.explain(frame, model=model).to_parquet(tmp / "inproc.parquet")

        in_process()  # warm
        work = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            in_process()
            work.append(time.perf_counter() - t)
        work_s = statistics.median(work)
        cmd = [py, "-m", "tcrex", "explain", "--rules", "rules.json", "--data", "small.parquet", "--model",
               str(model_path), "--out", "out"]
        runs = medians([run_program(cmd, env, tmp) for _ in range(args.repeat)])
        want = pd.read_parquet(tmp / "inproc.parquet")
        got = pd.read_parquet(tmp / "out" / "small.parquet")
        assert got["status"].astype(str).tolist() == want["status"].astype(str).tolist(), "outputs differ"
        # the same file through the library call the command makes, in this process (imports done, model loaded
        # in the sandbox once): what remains of the command's time is start-up
        explain_parquet_file(rules, str(tmp / "small.parquet"), str(tmp / "lib.parquet"), model_path=str(model_path))
        lib = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            explain_parquet_file(rules, str(tmp / "small.parquet"), str(tmp / "lib.parquet"),
                                 model_path=str(model_path))
            lib.append(time.perf_counter() - t)
        lib_s = statistics.median(lib)
    print(f"explain --model, {args.rows:,} rows: {runs['wall']:.2f} s wall, {runs['cpu']:.2f} s CPU "
          f"(program + sandbox), {runs['rss_mb']:.0f} MB")
    print(f"  same rows in this process, model in memory: {work_s:.3f} s; through explain_parquet_file with the "
          f"sandboxed model already started: {lib_s:.3f} s")
    print(f"  fixed cost before the first row: {runs['wall'] - lib_s:.2f} s wall (target 1 s), "
          f"{runs['cpu'] - lib_s:.2f} s CPU; x{runs['wall'] / work_s:.1f} the in-process work")
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
