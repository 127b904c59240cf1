"""``tcrex monitor init|run|history``: recourse monitored across model versions, for schedulers (cron, Airflow).

``init`` records the baseline (the people's verified advice under the first version), ``run`` registers a new
version and re-checks everyone's advice on it (exit code 3 when an alert fires, 0 otherwise, 2 on bad input),
``history`` writes every run as JSON. The store is the workspaces' (``--store``: a folder for SQLite, or a
``postgresql://`` URL; default ``TCREX_STORE``, else the state folder). See docs/monitor.md.
"""
from __future__ import annotations

import json

import click

from ._common import _dictionary_option, _rules_text, _class_names, _Fail, _guard, _say, _target, main

#: Exit code of ``tcrex monitor run`` when an alert fires (0: none; 2: bad input, as every command).
ALERT_EXIT = 3

_store_option = click.option(
    "--store", help="Where the monitors live: a folder (SQLite there) or a postgresql:// URL; default TCREX_STORE, "
                    "else the state folder (TCREX_STATE_DIR), as for the dashboard's workspaces.")
_name_option = click.option("--name", required=True, help="The monitor's name in the store.")
_model_option = click.option(
    "--model", "model", required=True,
    help="The version's model file (XGBoost JSON/UBJ, skops, ONNX; local path or fsspec URL) or an MLflow registry "
         "URI: models:/NAME/VERSION or models:/NAME@ALIAS (pip install 'tcrex[mlflow]'; MLFLOW_TRACKING_URI names "
         "the server). Loaded through the model sandbox; a pickle is refused unless TCREX_ALLOW_PICKLE=1.")
_version_option = click.option("--version", "version", required=True, help="The version's label (unique).")
_scheduler_option = click.option("--scheduler", help="Address of an existing Dask scheduler, tcp://HOST:PORT: the "
                                                     "people are re-checked on the cluster's workers.")
_json_option = click.option("--json", "json_out", required=True,
                            help="Where to write the JSON (local path or fsspec URL).")
_init_json_option = click.option("--json", "json_out", help="Where to write the baseline run as JSON.")
_people_out_option = click.option(
    "--people-out", "people_out",
    help="Folder for the per-person results, one Parquet file per people file (named as `tcrex explain` names "
         "them): the id, the status, and the point and advice under this version as `explain --verified` "
         "writes them.")


def _fraction_or_off(text):
    if text is None:
        return None
    if str(text).strip().lower() in ("off", "none", "no"):
        return "off"
    try:
        value = float(text)
    except ValueError:
        raise _Fail(f"an alert threshold is a fraction from 0 to 1 (0.05 = 5 percentage points) or 'off', got "
                    f"{text!r}") from None
    return value


@main.group()
def monitor():
    """Recourse monitored across model versions: init (the baseline), run (a new version), history."""


@monitor.command("init")
@_store_option
@_name_option
@click.option("--rules", "rules_path", required=True, help="Rules JSON written by `tcrex fit`.")
@click.option("--reference-rows", "reference_rows",
              help="Parquet/CSV file(s) of the rows the rules were fitted on: the search beyond the rules and the "
                   "distances use them (a rules JSON holds no rows).")
@click.option("--people", "people", required=True,
              help="The people to follow: Parquet/CSV file, glob, directory or fsspec URL.")
@click.option("--id-column", required=True, help="The column naming each person (unique, never missing).")
@_model_option
@_version_option
@click.option("--group", "groups", multiple=True,
              help="A grouping every run reports on (repeat for several); columns joined by commas are their "
                   "intersection: --group sex,education.")
@_dictionary_option
@click.option("--class-names", "class_names_text", help="Names of the model's classes, e.g. 0=repaid,1=default.")
@click.option("--target", help="The favourable outcome (default: the rules' own target).")
@click.option("--share-drop", help="Alert when a group's verified-recourse share falls by more than this fraction "
                                   "(interval below zero); default 0.05; 'off'.")
@click.option("--gap-widening", help="Alert when a group's gap from the reference group grows by more than this "
                                     "fraction and is clear; default 0.05; 'off'.")
@click.option("--invalidation-rate", help="Alert when the new model rejects more than this share of the advice a "
                                          "group held; default 0.25; 'off'.")
@click.option("--n-boot", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every run's bootstrap.")
@click.option("--min-group-size", type=click.IntRange(min=0), default=30, show_default=True,
              help="Groups with fewer people needing recourse are reported but raise no alert.")
@_scheduler_option
@_init_json_option
@_people_out_option
@_guard
def init(store, name, rules_path, reference_rows, people, id_column, model, version, groups, dictionary_path,
         class_names_text, target, share_drop, gap_widening, invalidation_rate, n_boot, seed, min_group_size,
         scheduler, json_out, people_out):
    """Start monitoring PEOPLE: their verified advice under the first model version (the baseline)."""

    from ..monitor import AlertPolicy, Monitor
    rules = _rules_text(rules_path)
    policy = AlertPolicy().to_dict()
    for key, value in (("share_drop", share_drop), ("gap_widening", gap_widening),
                       ("invalidation_rate", invalidation_rate)):
        value = _fraction_or_off(value)
        if value is not None:
            policy[key] = None if value == "off" else value
    groupings = [[c.strip() for c in g.split(",")] if "," in g else g for g in groups]
    mon = Monitor(store, progress=_say)
    res = mon.init(name, rules=rules, people=people, id_column=id_column, model=model, version=version,
                   groups=groupings,
                   reference_rows=reference_rows, target=_target(target), dictionary=dictionary_path,
                   class_names=_class_names(class_names_text), policy=policy, n_boot=n_boot, random_state=seed,
                   min_group_size=min_group_size, scheduler=scheduler)
    _outputs(mon, res, json_out, people_out)
    _say(res.headline())


@monitor.command("run")
@_store_option
@_name_option
@_model_option
@_version_option
@_scheduler_option
@_json_option
@_people_out_option
@_guard
def run(store, name, model, version, scheduler, json_out, people_out):
    """Register a new model version and re-check every person's advice on it (exit code 3 on an alert)."""
    from ..monitor import Monitor
    mon = Monitor(store, progress=_say)
    res = mon.run(name, model=model, version=version, scheduler=scheduler)
    _outputs(mon, res, json_out, people_out)
    _say(res.headline())
    for alert in res.alerts:
        _say(f"ALERT ({alert.kind}): {alert.message}")
    if res.alerts:
        raise SystemExit(ALERT_EXIT)


@monitor.command("history")
@_store_option
@_name_option
@_json_option
@_guard
def history(store, name, json_out):
    """Every run of a monitor, oldest first, as JSON (each as recorded: nothing is recomputed)."""
    from ..monitor import Monitor
    from ..outputs import atomic_output
    h = Monitor(store, progress=_say).history(name)
    with atomic_output(json_out, "w") as fh:
        fh.write(h.to_json(indent=1))
    for r in h.runs:
        _say(f"{r.seq}: {r.version.label} ({r.version.model_sha256[:12]}…) — {r.headline()}")


def _outputs(mon, res, json_out, people_out) -> None:
    from ..outputs import atomic_output
    if json_out:
        with atomic_output(json_out, "w") as fh:
            json.dump(res.to_dict(), fh, indent=1, allow_nan=False, default=str)
        _say(f"run -> {json_out}")
    if people_out:
        written = mon.write_people(res.monitor, people_out, res.version.label)
        _say(f"people -> {people_out.rstrip('/')}/ ({len(written)} file(s))")
