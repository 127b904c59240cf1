"""Running a command's files: one per job on local processes or a Dask cluster (:func:`_run_files`), an output folder
every worker can see (checked with a marker file), and what a run reports: the rows the missing reference rows
affected, the audit as JSON, the comparison's per-file job.
"""
from __future__ import annotations

import json

from ._common import _Fail, _say
from ..errors import TCRExError


def _run_files(fn, jobs, kw, opts, verb, check=None, record=None):
    """``fn(*job, **kw)`` for every job (the second argument is the input file), as ``opts``
    (:class:`tcrex.distributed.RunOptions`) says: in one process, a local pool of ``opts.workers`` processes or on
    the Dask cluster at ``opts.scheduler``; yields the results in job order. Whatever goes wrong with a job (a bad
    file, a model fault, a worker lost by the pool or the cluster) stops the run with a message naming its file.

    Before any job, one of the workers checks the run as ``check`` (:class:`tcrex.distributed.RunCheck`) says
    (:func:`tcrex.distributed.check_run`): the model file loads (a refused file stops the run with one message
    naming it; the worker's later jobs reuse the model: the driver starts no model sandbox of its own, which on a
    pool of two on two cores was a third sandbox start competing with the workers'), the reference rows read, and
    the output folder is this client's folder and writable there. ``kw`` then gains the digests of the model file
    (``model_digest``) and of the reference rows (``reference_digests``): every job uses exactly those contents
    (a file replaced during the run is refused), and the caller names them in its outputs.

    ``record`` (a dict) receives what the run met that its outputs should say: ``"workers_lost"``, the Dask workers
    lost while running its jobs (each said on stderr when it happens; the scheduler ran their jobs again)."""
    from ..distributed import RunCheck
    check = check or RunCheck()
    marker = [_mark_output(check.out)] if check.out else []
    record = {} if record is None else record
    record.setdefault("workers_lost", [])
    try:
        yield from _run_jobs(fn, jobs, kw, opts, verb, check, marker, record)
    finally:
        if marker:  # the run stopped before the check confirmed the folder
            _unmark_output(check.out, marker.pop(), confirm=False)


def _run_jobs(fn, jobs, kw, opts, verb, run_check, marker, record):
    """:func:`_run_files` once the output folder is marked (``marker``: its marker, emptied once confirmed)."""
    from ..distributed import FileError, check_run, located

    out, scheduler, workers = run_check.out, opts.scheduler, opts.workers
    run_args = (run_check.model_path, kw.get("model_threads"), run_check.reference_rows, tuple(run_check.names),
                out, marker[0] if marker else None)
    checks = bool(run_check)
    what = run_check.model_path or run_check.reference_rows or out

    def check(get):
        try:
            found = get()
        except (TCRExError, OSError, ValueError, KeyError):
            raise  # said as for any other input (the message names the file)
        except Exception as exc:  # noqa: BLE001 - a worker lost by the pool or the cluster
            raise _Fail(f"{what}: {type(exc).__name__}: {exc}") from None
        if marker:
            _unmark_output(out, marker.pop())
        if "model" in found:
            kw["model_digest"] = found["model"]
        if "reference_rows" in found:
            kw["reference_digests"] = found["reference_rows"]

    def result(job, get):
        try:
            return get()
        except FileError:
            raise
        except Exception as exc:  # noqa: BLE001 - Dask/pool failures (KilledWorker, BrokenProcessPool, ...)
            raise located(exc, job[1]) from None

    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise _Fail("--scheduler needs Dask's distributed package (pip install 'tcrex[dask]')") from None
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError) as exc:
            raise _Fail(f"cannot reach the Dask scheduler at {scheduler} ({exc})") from None
        with client:
            from ..distributed import PROGRESS_TOPIC
            client.subscribe_topic(PROGRESS_TOPIC, lambda event: _say(event[1]))
            files = {}  # task key -> input file
            client.subscribe_topic("all", lambda event: _lost_worker(event[1], files, record))
            if checks:
                check(client.submit(check_run, *run_args, pure=False).result)
            futs = [client.submit(fn, *job, pure=False, **kw) for job in jobs]
            files.update({f.key: job[1] for f, job in zip(futs, jobs)})
            try:
                for job, f in zip(jobs, futs):
                    yield result(job, f.result)
                    _say(f"{verb} {job[1]}")
            finally:
                client.cancel(futs)
    elif workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(workers) as pool:
            if checks:
                check(pool.submit(check_run, *run_args).result)
            futs = [pool.submit(fn, *job, **kw) for job in jobs]
            try:
                for job, f in zip(jobs, futs):
                    yield result(job, f.result)
                    _say(f"{verb} {job[1]}")
            finally:
                for f in futs:
                    f.cancel()
    else:
        if checks:
            check(lambda: check_run(*run_args))
        for job in jobs:
            yield result(job, lambda: fn(*job, **kw))
            _say(f"{verb} {job[1]}")


def _lost_worker(msg, files: dict, record: dict) -> None:
    """A scheduler event: a worker removed unexpectedly (killed, out of memory, its machine gone) while it ran
    jobs of this run is said on stderr and kept in ``record["workers_lost"]``; the scheduler runs those jobs again
    on the other workers (their outputs are complete: each file is written whole or not at all)."""
    if not isinstance(msg, dict) or msg.get("action") != "remove-worker" or msg.get("expected"):
        return
    keys = set(msg.get("processing-tasks") or ()) | set(msg.get("lost-computed-tasks") or ())
    mine = sorted(files[k] for k in keys if k in files)
    if not mine and not files:
        return
    record["workers_lost"].append({"worker": msg.get("worker"), "jobs_rerun": mine})
    _say(f"warning: Dask worker {msg.get('worker')} was lost" + (
        f" while running {len(mine)} job(s) ({', '.join(mine)}); the scheduler runs them again on the other workers"
        if mine else "; none of this run's jobs was running there"))


def _mark_output(out: str) -> str:
    """Create the output folder ``out`` and a marker file in it that a worker must see (:func:`check_run`): a
    worker on another machine, or one resolving a path in its own folder, does not."""
    import uuid

    import fsspec
    fs, root = fsspec.core.url_to_fs(out)
    fs.makedirs(root, exist_ok=True)
    marker = f".tcrex-check-{uuid.uuid4().hex}"
    fs.touch(f"{root.rstrip('/')}/{marker}")
    return marker


def _unmark_output(out: str, marker: str, confirm: bool = True) -> None:
    """Remove the marker of :func:`_mark_output` and the file the worker wrote beside it; ``confirm``: refuse the
    run when that file is not there (the worker wrote into a folder this client does not see, e.g. its own copy
    of ``memory://``)."""
    import fsspec
    fs, root = fsspec.core.url_to_fs(out)
    seen = f"{root.rstrip('/')}/{marker}.seen"
    written = fs.exists(seen)
    for path in (f"{root.rstrip('/')}/{marker}", seen):
        if fs.exists(path):
            fs.rm(path)
    if confirm and not written:
        raise _Fail(f"the output folder {out} is not the one the workers write to (a file a worker wrote there "
                    "cannot be seen from here); give a folder or URL every worker and this client share")


def _rows_affected(dst: str) -> int:
    """The rows an ``explain --verified`` output's metadata counts as affected by the missing reference rows."""
    import fsspec
    import pyarrow.parquet as pq

    from ..distributed import VERIFICATION_KEY
    with fsspec.open(dst, "rb") as fh:
        meta = pq.read_metadata(fh).metadata or {}
    return int(json.loads(meta.get(VERIFICATION_KEY, b"{}")).get("rows_affected") or 0)


def _verification(reference_rows, affected: dict, counted: str, not_done: str) -> dict:
    """What verifying recourse on the model used and, without reference rows, what it could not do and how many
    rows that affected (``affected``: counts by name; ``counted``: the sentence naming them, with ``{name}``
    fields): said in ONE stderr line and returned for the output's metadata (``"verification"``), so a lower
    verified share never differs silently from the in-memory answer (which uses the explainer's fit rows)."""
    if reference_rows:
        return {"reference_rows": reference_rows, "not_done": None, "rows_affected": None}
    counts = {k: f"{v:,}" for k, v in affected.items()}
    _say(f"note: no --reference-rows, so {not_done}: {counted.format(**counts)} have no rule point the model "
         "confirms and count as 'none' (give the rows the rules were fitted on with --reference-rows for the "
         "in-memory answer)")
    return {"reference_rows": None, "not_done": not_done,
            "rows_affected": affected["rows"] if list(affected) == ["rows"] else affected,
            "rows_affected_are": "people needing recourse left without verified recourse (recourse 'none')"}


def _compare_job(rules_a, src, rules_b, people_dst, **kw):
    """One file of ``tcrex compare`` (the second argument is the input file, as ``_run_files`` reports it)."""
    from ..distributed import compare_file
    return compare_file(rules_a, rules_b, src, people_dst=people_dst, **kw)


def audit_json(res) -> dict:
    """The audit as the CLI writes it: ``AuditResult.to_dict()`` with ``"groups"`` one record per group — ``n``
    all its rows, ``n_need_recourse`` those whose output is not in the target (the audit table's ``n``), then
    the table's other columns — and ``"group_labels"`` the labels in display order."""
    doc = res.to_dict()
    records = []
    for row in doc.pop("table"):
        row = dict(row)
        n_need, n_all = row.pop("n"), row.pop("n_total")
        records.append({"group": row.pop("group"), "n": n_all, "n_need_recourse": n_need, **row})
    doc["group_labels"], doc["groups"] = doc["groups"], records
    return doc
