"""Many users on one server: N concurrent browser sessions, page times and server memory.

    .venv/bin/python benchmarks/load.py                      # N = 1, 4, 8, 12; 120 s after each round
    .venv/bin/python benchmarks/load.py --sessions 8 --after 30
    .venv/bin/python benchmarks/load.py --sessions 8 --after 60     # every page run <= 3 s of server time

Starts one real server (``python -m tcrex.ui.launch``, the way ``make run`` does) on a free port, warms it up with
one session (which loads what every session shares), waits until that session is released, and then for each N
opens N browser contexts at once in one headless Chromium (``/usr/bin/chromium`` through Playwright) that each
load **Overview** and then click **Global rules**, **Individual** and **Subgroup audit** in the navigation.

Per page two times are recorded:

* **server** -- from the navigation (``goto`` / click) until the app reports that its script run finished
  (``data-test-script-state="notRunning"`` and no "Running" widget): the script run on the server plus the
  websocket transport of its output;
* **render** -- from then until the page's charts (Plotly ``.main-svg``, Graphviz ``svg``) are in the DOM and two
  animation frames have passed: the browser's share.

The server's own time per script run (``TCREX_MEMORY_LOG=1``: one log line per run of ``app.py``) is reported per
page as median / max, and every run over ``--limit`` seconds (default 3: the aim under 8 sessions) is
listed by page.

Server memory (RSS from ``/proc``) is sampled every 0.2 s: before the round, peak during it, and ``--after``
seconds after every context of the round has closed (sessions are released ``TCREX_SESSION_GRACE_S`` after they
disconnect, default 60 s).  CPU seconds of the server (and its children) and of Chromium are read per round, which
separates the server's work per session from the browser's: on a 2-core machine the one Chromium rendering N pages
competes with the server for the same cores.  The machine is shared: other processes' load shows in the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `import tcrex` when run as a script
    sys.path.insert(0, str(ROOT))
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))

IDLE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelector('[data-testid="stStatusWidget"]') === null;
}"""
RUNNING_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && app.getAttribute('data-test-script-state') === 'running';
}"""
CHARTS_JS = """(sel) => document.querySelectorAll(sel).length > 0"""
FRAMES_JS = """() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"""


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its live descendants."""
    import psutil  # noqa: PLC0415

    total = 0.0
    try:
        root = psutil.Process(pid)
        for p in [root, *root.children(recursive=True)]:
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
    except psutil.Error:
        pass
    return total


def browser_cpu_s() -> float:
    """CPU seconds of the Chromium processes this benchmark started (descendants of this process)."""
    import psutil  # noqa: PLC0415

    total = 0.0
    for p in psutil.Process().children(recursive=True):
        try:
            if "chrom" in p.name().lower():
                t = p.cpu_times()
                total += t.user + t.system
        except psutil.Error:
            pass
    return total


def rss_mb(pid: int) -> float:
    total = 0
    for p in [pid, *_children(pid)]:
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


# --pin: the server on one core, this script and its Chromium on the other, so that the browser (which in real use
# runs on each user's own machine) does not compete with the server for CPU; empty = no pinning.
_PIN: dict[str, set[int]] = {}


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


class Sampler:
    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb(self.pid))
            time.sleep(0.2)

    def __enter__(self):
        self.peak = rss_mb(self.pid)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.thread.join()


def start_server(log_path: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PYTHONUNBUFFERED="1", TCREX_MEMORY_LOG="1", STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    pin = _PIN.get("server")
    proc = subprocess.Popen([sys.executable, "-m", "tcrex.ui.launch", "--server.headless", "true", "--server.port",
                             str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"],
                            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=open(log_path, "w"),
                            stderr=subprocess.STDOUT,
                            preexec_fn=(lambda: os.sched_setaffinity(0, pin)) if pin else None)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            if _DIRECT.open(url + "/_stcore/health", timeout=2).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.25)
    proc.kill()
    raise SystemExit(f"server did not start; see {log_path}")


async def _settle(page, chart_selector: str, t0: float) -> tuple[float, float]:
    """(server, render) seconds for the navigation started at ``t0``."""
    try:
        await page.wait_for_function(RUNNING_JS, polling=50, timeout=5_000)
    except Exception:  # noqa: BLE001 - a very fast run may finish before we look
        pass
    await page.wait_for_function(IDLE_JS, polling=50, timeout=180_000)
    t1 = time.perf_counter()
    await page.wait_for_function(CHARTS_JS, arg=chart_selector, polling=50, timeout=180_000)
    await page.evaluate(FRAMES_JS)
    return t1 - t0, time.perf_counter() - t1


#: After Overview, every session clicks these pages in the navigation: (link, what marks the page drawn).
NEXT_PAGES = [("Global rules", '[data-testid="stGraphVizChart"] svg, .main-svg, img[alt="metarule tree"], '
                               '.tcrex-outline'),
              ("Individual", ".main-svg, [data-testid='stDataFrame']"),
              ("Subgroup audit", ".main-svg")]
PAGE_NAMES = ["Overview"] + [name for name, _ in NEXT_PAGES]


async def one_session(browser, url: str, results: list, errors: list) -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        t0 = time.perf_counter()
        await page.goto(url + "/", wait_until="domcontentloaded")
        server, render = await _settle(page, ".main-svg", t0)
        results.append(("Overview", server, render))
        for name, charts in NEXT_PAGES:
            t0 = time.perf_counter()
            await page.get_by_role("link", name=name).first.click()
            server, render = await _settle(page, charts, t0)
            results.append((name, server, render))
            if await page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').count():
                errors.append(f"an error box on {name}")
    except Exception as exc:  # noqa: BLE001 - report, keep the round going
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        await context.close()


async def upload_session(browser, url: str, csv_path: Path, errors: list) -> None:
    """One session uploads ``csv_path`` on Data & model, uses it (the app trains a model and fits), then closes."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    try:
        await page.goto(url + "/data_model", wait_until="domcontentloaded")
        await page.wait_for_function(IDLE_JS, polling=100, timeout=180_000)
        await page.get_by_text("Upload a CSV").click()
        await page.wait_for_function(IDLE_JS, polling=100, timeout=180_000)
        await page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(str(csv_path))
        await page.get_by_role("button", name="Use this data").wait_for(timeout=600_000)
        await page.wait_for_function(IDLE_JS, polling=100, timeout=600_000)
        await page.get_by_role("button", name="Use this data").click()
        await page.wait_for_function(f"() => document.querySelector('[data-testid=\"stSidebar\"]').innerText"
                                     f".includes('{csv_path.name}')", timeout=600_000)
        await page.wait_for_function(IDLE_JS, polling=100, timeout=600_000)
    except Exception as exc:  # noqa: BLE001
        errors.append(f"upload: {type(exc).__name__}: {exc}")
    finally:
        await context.close()


async def round_(browser, url: str, n: int) -> tuple[list, list]:
    results: list = []
    errors: list = []
    await asyncio.gather(*(one_session(browser, url, results, errors) for _ in range(n)))
    return results, errors


def script_runs(log_path: Path, start: int) -> dict[str, list[float]]:
    """Seconds of every script run the server logged (``tcrex.memory: script run 'Page' 0.123 s``) after byte
    ``start`` of its log: the server's own share of each page time, whatever the browser is doing."""
    out: dict[str, list[float]] = {}
    with open(log_path, "rb") as fh:
        fh.seek(start)
        for line in fh.read().decode(errors="replace").splitlines():
            m = re.search(r"script run '(.+)' ([0-9.]+) s", line)
            if m:
                out.setdefault(m.group(1), []).append(float(m.group(2)))
    return out


def _fmt(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} / {max(values):.1f}" if values else "-"


def _over_limit(runs: dict[str, list[float]], limit: float) -> str:
    """The aim in one line: every page run within ``limit`` seconds of server time, else which were not
    (page and seconds, slowest first)."""
    over = sorted(((v, p) for p, values in runs.items() for v in values if v > limit), reverse=True)
    n = sum(len(v) for v in runs.values())
    if not over:
        slowest = max((v for values in runs.values() for v in values), default=0.0)
        return f"every page run <= {limit:g} s of server time: met ({n} runs, slowest {slowest:.2f} s)"
    return (f"every page run <= {limit:g} s of server time: NOT met, {len(over)} of {n} runs over: "
            + ", ".join(f"{p} {v:.2f} s" for v, p in over))


async def main_async(args) -> None:
    from playwright.async_api import async_playwright

    out_dir = ROOT / "benchmarks" / "results"  # git-ignored
    out_dir.mkdir(parents=True, exist_ok=True)
    log_path = out_dir / "load-server.log"
    if args.pin:
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) < 2:
            raise SystemExit("--pin needs at least 2 cores")
        _PIN["server"] = {cores[0]}
    proc, url = start_server(log_path)
    if args.pin:
        os.sched_setaffinity(0, set(cores[1:]))  # Chromium, launched below, inherits this
        print(f"pinned: server on core {cores[0]}, browser on core(s) {cores[1:]}", flush=True)
    rows = []
    upload_row = None
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            await round_(browser, url, 1)  # warm-up: the shared sample, model and fit are built once
            time.sleep(args.after)
            baseline = rss_mb(proc.pid)
            print(f"server pid {proc.pid}; baseline after warm-up and release: {baseline:.0f} MB", flush=True)
            for n in args.sessions:
                log_from = log_path.stat().st_size
                before = rss_mb(proc.pid)
                cpu0, bcpu0 = cpu_s(proc.pid), browser_cpu_s()
                with Sampler(proc.pid) as sampler:
                    t0 = time.perf_counter()
                    results, errors = await round_(browser, url, n)
                    wall = time.perf_counter() - t0
                server_cpu, chrome_cpu = cpu_s(proc.pid) - cpu0, browser_cpu_s() - bcpu0
                runs = script_runs(log_path, log_from)
                time.sleep(args.after)
                after = rss_mb(proc.pid)
                by = {p: [r for r in results if r[0] == p] for p in PAGE_NAMES}
                every = [r[1] + r[2] for r in results]
                row = dict(n=n, wall=wall, before=before, peak=sampler.peak, after=after, errors=errors,
                           server_cpu=server_cpu, chrome_cpu=chrome_cpu,
                           by=by, every=every, runs=runs)
                rows.append(row)
                print(f"N={n}: wall {wall:.1f} s, errors {len(errors)} {errors[:2]}; "
                      f"pages median {statistics.median(every) if every else float('nan'):.1f} s, "
                      f"max {max(every) if every else float('nan'):.1f} s; RSS {before:.0f} -> {sampler.peak:.0f} "
                      f"-> {after:.0f} MB; CPU server {server_cpu:.1f} s ({server_cpu / n:.2f} s per session), "
                      f"Chromium {chrome_cpu:.1f} s", flush=True)
                print("  server script runs (app.py start to end, from the server log): " + "; ".join(
                    f"{p} {_fmt(v)} s (n={len(v)})" for p, v in runs.items()), flush=True)
                print("  " + _over_limit(runs, args.limit), flush=True)
            if args.upload_mb:
                from tcrex import datasets  # noqa: PLC0415

                csv_path = out_dir / "load-upload.csv"
                rows_ = int(args.upload_mb * 1024 * 1024 / 60)
                datasets.make_loans(rows_, random_state=5).to_csv(csv_path, index=False)
                size = csv_path.stat().st_size / 1024 / 1024
                # --uploads K: the same upload by K sessions one after the other; a flat "after" from the second
                # on means what stays is one-time (imports, the training stack's thread pools), not per upload
                for k in range(args.uploads):
                    before = rss_mb(proc.pid)
                    errors: list = []
                    with Sampler(proc.pid) as sampler:
                        await upload_session(browser, url, csv_path, errors)
                    time.sleep(args.after)
                    after = rss_mb(proc.pid)
                    upload_row = (size, rows_, before, sampler.peak, after, errors)
                    print(f"upload {k + 1} of {args.uploads}, {size:.0f} MB ({rows_:,} rows): RSS {before:.0f} -> "
                          f"{sampler.peak:.0f} -> {after:.0f} MB; errors {errors}", flush=True)
                csv_path.unlink()
            await browser.close()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    print()
    print("Page times: total median / max (server + render) in s; server script runs from the server log.")
    print("| sessions | " + " | ".join(PAGE_NAMES) + " | server script run median / max, all pages | "
          f"server RSS before → peak → {args.after:.0f} s after close | errors |")
    print("|---|" + "---|" * len(PAGE_NAMES) + "---|---|---|")
    for r in rows:
        def cell(items):
            tot = [s + q for _, s, q in items]
            return (f"{_fmt(tot)} ({_fmt([s for _, s, _ in items])} + {_fmt([q for _, _, q in items])})"
                    if items else "-")
        runs = r["runs"]
        every_run = [v for p in PAGE_NAMES for v in runs.get(p, [])]
        print(f"| {r['n']} | " + " | ".join(cell(r["by"][p]) for p in PAGE_NAMES) + " | "
              + ", ".join(f"{p} {_fmt(runs.get(p, []))}" for p in PAGE_NAMES)
              + f"; all {_fmt(every_run)} | {r['before']:.0f} → {r['peak']:.0f} → "
              f"{r['after']:.0f} MB ({(r['after'] / baseline - 1) * 100:+.0f} % vs baseline {baseline:.0f}) | "
              f"{len(r['errors'])} |")

    for r in rows:
        print(f"N={r['n']}: " + _over_limit(r["runs"], args.limit))

    if upload_row:
        size, n_rows, before, peak, after, errors = upload_row
        print(f"\nOne session uploads a {size:.0f} MB CSV ({n_rows:,} rows), uses it, closes: server RSS {before:.0f} → "
              f"{peak:.0f} → {after:.0f} MB {args.after:.0f} s after close ({(after / baseline - 1) * 100:+.0f} % vs "
              f"baseline); errors: {len(errors)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, nargs="*", default=[1, 4, 8, 12])
    ap.add_argument("--after", type=float, default=120.0, help="seconds to wait after each round (memory)")
    ap.add_argument("--pin", action="store_true",
                    help="server on one core, the browser on the others (separates server work from rendering)")
    ap.add_argument("--limit", type=float, default=3.0,
                    help="flag page runs over this many seconds of server time (3 s under 8 sessions)")
    ap.add_argument("--uploads", type=int, default=1, help="how many sessions upload, one after the other")
    ap.add_argument("--upload-mb", type=float, default=0.0, help="then one session uploads a CSV of this size")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
