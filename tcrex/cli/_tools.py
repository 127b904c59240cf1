"""``tcrex check-model`` (whether a model file loads and answers as the rules need), ``tcrex ui`` (the dashboard)
and ``tcrex workspace`` (export and import a saved workspace).
"""
from __future__ import annotations

import os
import sys

import click

from ._common import (_dictionary, _dictionary_option, _Fail, _guard, main, _model, _read_all, _say,
                      _warn_non_features)


def _say_dictionary_fit(dictionary, X) -> None:
    """How the dictionary meets the data, one line each: columns it describes that are not inputs, and the rows
    each column's declared special codes hold."""
    import numpy as np

    absent = [n for n in dictionary.names if n not in X.columns]
    if absent:
        _say(f"dictionary: {len(absent)} column(s) described but not inputs: {', '.join(map(repr, absent[:8]))}")
    for name, codes in dictionary.special_codes.items():
        if name in X.columns:
            held = np.isin(np.asarray(X[name], dtype=object), codes) if X[name].dtype == object else X[name].isin(codes)
            click.echo(f"dictionary: {name}: codes {', '.join(map(str, codes))} hold {int(np.sum(held)):,} of "
                       f"{len(X):,} rows")


@main.command("check-model")
@click.argument("model_path")
@click.option("--data", help="Sample table to check the model against (as `tcrex fit --model` reads it).")
@click.option("--drop-column", "drop", multiple=True,
              help="Column that is not an input (a label, an id; repeatable), as for `tcrex fit`.")
@_dictionary_option
@_guard
def check_model(model_path, data, drop, dictionary_path=None):
    """Safe intake report for MODEL (exit 1 when it is refused or incompatible with --data).

    The data's columns are taken as `tcrex fit --model` takes them: the model's own inputs when its file names
    them (every other column left out, said in one line), else every column but the --drop-column ones."""
    from ..errors import ModelError
    dictionary = _dictionary(dictionary_path)  # read (and refused when hostile) before any work starts
    try:
        m = _model(model_path)
    except ModelError as exc:
        click.echo(f"refused: {exc}")
        sys.exit(1)
    click.echo(f"accepted: {m.description}" if hasattr(m, "description") else "accepted")
    if data:
        from ..intake import check_compatibility
        frame = _read_all(data)
        missing = [c for c in drop if c not in frame.columns]
        if missing:
            raise _Fail(f"--drop-column names column(s) {', '.join(map(repr, missing))} that are not in {data}")
        X = frame.drop(columns=list(drop))
        names = m.feature_names
        if names is not None:  # as fit: the model's inputs; the others left out (a missing input is a problem below)
            left = [c for c in X.columns if c not in set(names)]
            if left:
                _say(f"features: the model's {len(names)} input(s); left out: {', '.join(map(str, left))}")
                X = X.drop(columns=left)
        else:
            _warn_non_features(X)
        rep = check_compatibility(m, X)
        click.echo(rep.message)
        if dictionary is not None:
            _say_dictionary_fit(dictionary, X)
        if not rep.ok:
            if names is None and m.n_features is not None and X.shape[1] != m.n_features:
                click.echo("leave out the columns that are not inputs (a label, an id) with --drop-column")
            sys.exit(1)


@main.command("ui", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("streamlit_options", nargs=-1, type=click.UNPROCESSED)
def ui(streamlit_options):
    """Start the dashboard on the bundled loans sample (any `streamlit run` options, e.g. --server.port 8600).

    Needs the app extra: pip install 'tcrex[app]'."""
    import importlib.util

    if importlib.util.find_spec("streamlit") is None or importlib.util.find_spec("plotly") is None:
        raise _Fail("the dashboard needs Streamlit and plotly: pip install 'tcrex[app]'")
    from ..ui.launch import main as launch
    launch(list(streamlit_options))


@main.group("workspace")
def workspace_group():
    """Move dashboard workspaces between servers: export one as a zip, import a zip as a new workspace.

    The store is the one the dashboard uses: TCREX_STORE (a PostgreSQL URL or an SQLite folder), else
    TCREX_STATE_DIR (docs/deployment.md, "Workspaces")."""


@workspace_group.command("export")
@click.argument("workspace_id")
@click.option("--out", required=True, type=click.Path(dir_okay=False, writable=True),
              help="The zip file to write (settings and uploads, versioned).")
@_guard
def workspace_export(workspace_id, out):
    """Write the workspace WORKSPACE_ID (its editing or read-only link id) to a zip file."""
    from ..workspace import WorkspaceStore, export_workspace
    from ..outputs import atomic_output
    data = export_workspace(WorkspaceStore.from_env(), workspace_id)
    with atomic_output(out, "wb") as fh:
        fh.write(data)
    _say(f"wrote {os.path.abspath(out)} ({len(data):,} bytes)")


@workspace_group.command("import")
@click.argument("zip_path", type=click.Path(exists=True, dir_okay=False))
@_guard
def workspace_import(zip_path):
    """Import a workspace zip as a new workspace; prints its editing id and its read-only id."""
    from ..inputs import read_bounded
    from ..workspace import StoreUnavailable, WorkspaceError, WorkspaceStore, archive_budget, import_workspace
    db = WorkspaceStore.from_env()
    data = read_bounded(zip_path, archive_budget(db), "the workspace file",
                        limit_hint="this server's budget per workspace is TCREX_WORKSPACE_MAX_MB")
    try:
        ws = import_workspace(db, data)
    except StoreUnavailable:
        raise
    except WorkspaceError as exc:  # the archive's problem: named by its file
        raise type(exc)(f"{zip_path}: {exc}") from None
    click.echo(f"id: {ws.id}")
    click.echo(f"read-only id: {ws.view_id}")
    _say("open it with ?ws=<id> on the dashboard's address")


@workspace_group.command("log-check")
@_guard
def workspace_log_check():
    """Check the activity log's chain: every entry links to the one before it and hashes to itself.

    Prints the number of entries and the newest entry's hash (keep it elsewhere: a removed tail is seen only
    against a kept head); exits 0 when intact, 1 when broken (naming the first entry that breaks it)."""
    from ..workspace import WorkspaceStore
    check = WorkspaceStore.from_env().check_log()
    click.echo(f"entries: {check.entries}")
    click.echo(f"head: {check.head}")
    if not check.ok:
        click.echo(f"error: the activity log's chain is broken: {check.problem}", err=True)
        sys.exit(1)
    _say("the activity log's chain is intact")


@workspace_group.command("log-export")
@click.option("--workspace", "workspace_id", default=None,
              help="Only this workspace's entries (its editing or read-only id); default: the whole log.")
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="json", show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False, writable=True),
              help="The file to write (CSV cells that could run as spreadsheet formulas are neutralised).")
@_guard
def workspace_log_export(workspace_id, fmt, out):
    """Write the activity log (who, when, which workspace, what; never data) as CSV or JSON."""
    from ..outputs import atomic_output
    from ..workspace import WorkspaceStore, log_csv, log_json
    entries = WorkspaceStore.from_env().activity(workspace_id)
    data = log_csv(entries) if fmt == "csv" else log_json(entries)
    with atomic_output(out, "wb") as fh:
        fh.write(data)
    _say(f"wrote {os.path.abspath(out)} ({len(entries):,} entries)")


if __name__ == "__main__":  # pragma: no cover
    main()
