"""The Data & model page's sections: choose data (sample or upload), review columns, choose a model.

Every problem with an input becomes an ``st.error`` / ``st.warning`` saying what to change; nothing here lets an
exception reach the page.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from tcrex import figures as fg
from tcrex.codebook import check_value_labels, match_feature
from tcrex.errors import ParameterError, TCRExError
from tcrex.intake import UPLOAD_EXTENSIONS, fit_codebook, missing_libraries, read_codebook
from tcrex.performance import ModelPerformance
from tcrex.spreadsheet import to_csv
from tcrex.text import format_number
from tcrex.vocabulary import CATEGORICAL, CLASSIFICATION, NUMERIC, REGRESSION

from ..state import session, sources, active
from ..state.sources import DataSpec, InputProblem, ModelSpec
from ..state.training import ALGORITHMS
from ..widgets import components, constraints, dictionary, outcome
from ..widgets.components import chart

DATA_CHOICES = {"sample:loans": "Loans sample (binary, bundled XGBoost model)",
                "sample:wine": "Wine sample (3 classes, model trained in the app)",
                "sample:diabetes": "Diabetes sample (regression, model trained in the app)",
                "upload": "Upload a CSV, Parquet or Excel file"}
MODEL_CHOICES = {"bundled": "Bundled XGBoost model", "train": "Train a model in the app",
                 "upload": "Upload a model file", "column": "Use a column of model outputs"}
MODEL_TYPES = list(UPLOAD_EXTENSIONS)
MODEL_LABEL = "Model file: XGBoost JSON/UBJSON, LightGBM .txt, CatBoost .cbm/JSON, scikit-learn .skops, ONNX"
MODEL_HELP = ("Loaded without running code: XGBoost's, LightGBM's (booster.save_model) and CatBoost's (.cbm, or JSON "
              "saved with the training pool) own formats, checked before the library reads them; skops with a fixed "
              "allow-list of scikit-learn types; ONNX without custom operators. Pickle files are refused unless the "
              "operator enables them.")
PICKLE_TYPES = ["pkl", "pickle", "joblib"]
AUDIT_ONLY = "not a feature (audit only)"
#: The label column's task: detected (``None``) or chosen.
TASK_CHOICES = {None: "Detect", CLASSIFICATION: "Classification (classes)", REGRESSION: "Regression (numbers)"}
USE_AS = [NUMERIC, CATEGORICAL, AUDIT_ONLY]


def _current_data_choice() -> str:
    spec = active.data_spec()
    return f"sample:{spec.name}" if spec.kind == "sample" else "upload"


def _on_data_choice() -> None:
    choice = session.widget_value(session.SETUP_DATA_CHOICE)
    if choice and choice.startswith("sample:"):
        active.use_sample(choice.split(":", 1)[1])
        session.clear_widget(session.SETUP_MODEL_CHOICE)


def data_section() -> None:
    """Pick a sample (applied at once) or upload a file and review its columns."""
    session.default_widget(session.SETUP_DATA_CHOICE, _current_data_choice())
    choice = st.radio("Data source", list(DATA_CHOICES), format_func=DATA_CHOICES.get, key=session.SETUP_DATA_CHOICE,
                      on_change=_on_data_choice, horizontal=True)
    if choice == "upload":
        _upload_data()


def _upload_data() -> None:
    max_mb = st.get_option("server.maxUploadSize")
    upload = st.file_uploader(f"CSV, Parquet or Excel (.xlsx) file (up to {max_mb} MB)",
                              type=["csv", "parquet", "pq", "xlsx", "xlsm"],
                              key="setup_data_file",
                              help="The first row of a CSV holds the column names. Nothing is executed.")
    if upload is None:
        stored = active.blob("data")
        if stored is None:
            st.info("Upload a table to explain a model on your own data.", icon=":material/upload_file:")
            return
        digest, filename, raw = stored
    else:
        raw = upload.getvalue()
        filename = upload.name
        digest = active.remember_blob("data", filename, raw)
    reading = _reading_choices(digest, filename)
    try:
        table = active.parse_upload(digest, filename, raw, reading)
    except InputProblem as exc:
        st.error(f"**{filename} could not be read.** {_cap(str(exc))} Check that it is a CSV with a header row "
                 "(comma-separated), a Parquet file or an Excel workbook (first sheet).", icon=":material/error:")
        return
    frame = table.frame
    st.markdown(f"**{filename}** — {len(frame):,} rows × {frame.shape[1]} columns")
    if table.findings:
        st.warning("**Findings**\n" + "\n".join(f"- {f}" for f in table.findings[:12]), icon=":material/info:")
    shown = min(len(frame), sources.DISPLAY_ROWS)
    st.dataframe(frame.head(shown), hide_index=True, height=240)
    if shown < len(frame):
        st.caption(f"Showing the first {shown:,} of {len(frame):,} rows; the engine uses all {len(frame):,} rows.")
    _column_form(digest, filename, table, reading)


def _reading_choices(digest: str, filename: str) -> tuple:
    """"How to read this file": delimiter, decimal mark, thousands separator and encoding of a CSV upload, each
    automatic unless chosen. Returns the choices as ``(option, value)`` pairs (empty: all automatic)."""
    if not sources.reads_as_text(filename):
        return ()
    spec = active.data_spec()
    current = dict(spec.reading) if spec.kind == "upload" and spec.digest == digest else {}
    chosen = {}
    with st.expander("How to read this file", expanded=bool(current)):
        st.caption("Detected automatically: commas between columns, UTF-8 text and a decimal point, unless a "
                   "finding below names another guess. Choose here when a guess is wrong.")
        for column, (option, label) in zip(st.columns(len(sources.READ_LABELS)), sources.READ_LABELS.items()):
            values = list(sources.READ_CHOICES[option])
            value = column.selectbox(label, values, format_func=sources.READ_CHOICES[option].get,
                                     index=values.index(current.get(option)) if current.get(option) in values else 0,
                                     key=f"setup_read_{option}_{digest[:12]}")
            if value is not None:
                chosen[option] = value
    return tuple(sorted(chosen.items()))


def _column_form(digest: str, filename: str, table: sources.TableFindings, reading: tuple = ()) -> None:
    frame = table.frame
    spec = active.data_spec()
    same = spec.kind == "upload" and spec.digest == digest and spec.reading == reading
    columns = list(frame.columns)
    # the widgets belong to this file read this way: another reading may give other columns
    form = digest[:12] + (sources.sha256(reading)[:8] if reading else "")
    if len({str(c) for c in columns}) != len(columns):
        dup = sorted({str(c) for c in columns if [str(x) for x in columns].count(str(c)) > 1})
        st.error(f"**{filename} has duplicate column names** ({', '.join(dup)}). Every column needs a unique "
                 "name; rename them and upload again.", icon=":material/error:")
        return
    label_options = ["(none)", *columns]
    label_default = (spec.label if same and spec.label in columns else table.suggested_label)
    candidate = sources.label_candidate(frame, table.suggested_drop) if label_default is None else None
    if candidate is not None:
        st.warning(f"**No label column is chosen.** No column is named like one (target, label, class, outcome, "
                   f"…). `{candidate}` has {frame[candidate].nunique():,} values and comes last: if it is the "
                   "outcome (the ground truth), choose it as the label column below — otherwise it becomes a "
                   "**feature** of the model.", icon=":material/label:")
    if table.drop_reasons:
        lines = [f"- `{c}` — {r}" + (" *(ticked)*" if c in table.suggested_drop else " *(not ticked)*")
                 for c, r in table.drop_reasons.items()]
        st.warning("**Columns you may want to drop** (tick or untick *drop* in the table below):\n"
                   + "\n".join(lines), icon=":material/delete_sweep:")
    with st.form(f"setup_columns_{form}"):
        label = st.selectbox("Label column (ground truth or outcome, if present)", label_options,
                             index=label_options.index(label_default) if label_default in label_options else 0,
                             help="Used to train a model in the app and to score models; never a feature.")
        rows = []
        for c in columns:
            detected = CATEGORICAL if c in table.categorical else NUMERIC
            if same:
                use = (AUDIT_ONLY if c in spec.extra else CATEGORICAL if spec.categorical and c in spec.categorical
                       else NUMERIC if spec.categorical is not None else detected)
                drop = c in spec.drop
            else:
                use, drop = detected, c in table.suggested_drop
            rows.append({"column": str(c), "detected": detected, "use as": use, "drop": drop,
                         "reason / notes": table.drop_reasons.get(c, "").split(":")[0] or table.column_notes.get(c, ""),
                         "example": str(frame[c].dropna().iloc[0]) if frame[c].notna().any() else ""})
        edited = st.data_editor(
            pd.DataFrame(rows), hide_index=True, width="stretch", key=f"setup_types_{form}",
            disabled=["column", "detected", "reason / notes", "example"],
            column_config={
                "use as": st.column_config.SelectboxColumn(
                    "use as", options=USE_AS, required=True,
                    help="Override the detected type, or keep the column out of the model "
                         f"(*{AUDIT_ONLY}*: e.g. a protected attribute to audit recourse by)"),
                "drop": st.column_config.CheckboxColumn("drop", help="Leave the column out entirely"),
            })
        n_missing = sum(table.missing.values())
        if n_missing:
            shown = ", ".join(f"`{c}` ({k:,})" for c, k in list(table.missing.items())[:8])
            more = "" if len(table.missing) <= 8 else f" and {len(table.missing) - 8} more"
            st.markdown(f"**{n_missing:,} missing value(s)** in {len(table.missing)} column(s): {shown}{more}. "
                        "Choose what to do with them (the result is reported after you apply):")
        sentinel_rows = table.sentinels
        use_sentinels = False
        if sentinel_rows:
            shown = ", ".join(f"`{c}` ({k:,} rows)" for c, k in sentinel_rows.items())
            use_sentinels = st.checkbox(
                f"Treat the sentinel codes as missing values: {shown}", key=f"setup_sentinels_{form}",
                value=bool(same and spec.sentinels),
                help="Codes such as −7/−8/−9 or 999 usually mean 'unknown' or 'not applicable'. Ticked, they become "
                     "missing values and are dropped or filled in as chosen below (with counts after you apply); "
                     "unticked, the data is used as it is.")
        missing = st.radio("Rows with missing values", list(sources.MISSING_STRATEGIES),
                           format_func=sources.MISSING_STRATEGIES.get, horizontal=True,
                           index=list(sources.MISSING_STRATEGIES).index(spec.missing) if same else 0,
                           disabled=not (n_missing or sentinel_rows), key=f"setup_missing_{form}",
                           help="T-CREx needs a value in every cell; nothing is dropped or filled in silently.")
        task_choice = st.radio("Task of the label column", list(TASK_CHOICES), format_func=TASK_CHOICES.get,
                               horizontal=True, index=list(TASK_CHOICES).index(spec.task) if same else 0,
                               key=f"setup_task_{form}",
                               help="How a model trained in the app (or a column of outputs) treats the label: "
                                    "whole numbers with few values (e.g. a quality score 3–9) are detected as "
                                    "classes; choose regression to treat them as numbers.")
        submitted = st.form_submit_button("Use this data", type="primary")
    if not submitted:
        return
    names = {str(c): c for c in columns}
    use = dict(zip(edited["column"], edited["use as"]))
    dropped = {names[c] for c, d in zip(edited["column"], edited["drop"]) if bool(d)}
    label_col = None if label == "(none)" else label
    drop = tuple(c for c in columns if c in dropped and c != label_col)
    categorical = tuple(names[c] for c, u in use.items()
                        if u == CATEGORICAL and names[c] != label_col and names[c] not in dropped)
    extra = tuple(names[c] for c, u in use.items() if u == AUDIT_ONLY and names[c] != label_col
                  and names[c] not in dropped)
    sentinels = tuple(c for c in table.sentinels if c not in dropped and c != label_col) if use_sentinels else ()
    new = DataSpec("upload", filename, digest, label_col, drop, categorical, missing, extra, task=task_choice,
                   sentinels=sentinels, reading=reading)
    try:
        prepared = sources.prepare_frame(frame, new, table.categorical)
    except InputProblem as exc:
        st.error(f"**This data cannot be used yet.** {_cap(str(exc))}", icon=":material/error:")
        return
    # new data never keeps the old model: a model trained in the app is retrained, an uploaded one is set aside
    model = ModelSpec("train", "xgboost") if label_col is not None else None
    reset = active.use_data(new, model)
    session.clear_widget(session.SETUP_MODEL_CHOICE)  # the model section starts from the new model
    session.set_notice("Using " + filename + (": " + "; ".join(prepared.notes) if prepared.notes else "")
                       + "".join(f". {_cap(n)}" for n in reset)
                       + ("" if model else ". Now choose a model below."))
    st.rerun()


def model_section() -> None:
    """Choose the model: bundled, trained in the app, uploaded, or a column of outputs."""
    try:
        data = active.active_data()
    except InputProblem as exc:
        st.error(_cap(str(exc)), icon=":material/error:")
        return
    spec = active.model_spec()
    choices = [c for c in MODEL_CHOICES if c != "bundled" or (data.spec.kind == "sample" and data.spec.name == "loans")]
    current = spec.kind if spec is not None and spec.kind in choices else ("train" if data.label_column else "upload")
    if session.widget_value(session.SETUP_MODEL_CHOICE) not in choices:
        session.set_widget(session.SETUP_MODEL_CHOICE, current)
    choice = st.radio("Model source", choices, format_func=MODEL_CHOICES.get, key=session.SETUP_MODEL_CHOICE,
                      horizontal=True)
    if choice == "bundled" and (spec is None or spec.kind != "bundled"):
        active.use_model(ModelSpec("bundled"))
        st.rerun()
    elif choice == "train":
        _train(data)
    elif choice == "upload":
        _upload_model(data)
    elif choice == "column":
        _column(data)
    _model_status()


def _train(data) -> None:
    if not data.label_column:
        st.warning("Training needs a label column: choose one in the data settings above (or upload a model).",
                   icon=":material/warning:")
        return
    spec = active.model_spec()
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    algo = c1.selectbox("Algorithm", list(ALGORITHMS), format_func=ALGORITHMS.get, key="setup_algorithm",
                        index=list(ALGORITHMS).index(spec.name) if spec and spec.kind == "train"
                        and spec.name in ALGORITHMS else 0)
    st.caption(f"Trained on the {len(data.fit_index):,} fit rows to predict `{data.label_column}`; the score is "
               f"measured on the {len(data.test_index):,} hold-out rows.")
    if c2.button("Train", type="primary", width="stretch", key="setup_train"):
        active.use_model(ModelSpec("train", algo))
        st.rerun()


def _upload_model(data) -> None:
    types = MODEL_TYPES + (PICKLE_TYPES if active.allow_pickle() else [])
    upload = st.file_uploader(MODEL_LABEL, type=types,
                              key=f"setup_model_file:{data.key[:16]}",  # new data: an empty uploader
                              help=MODEL_HELP)
    missing_formats_note()
    if active.allow_pickle():
        st.warning("Pickle loading is enabled by the operator: a pickle file can run any code when loaded.",
                   icon=":material/warning:")
    if upload is None:
        return
    raw = upload.getvalue()
    digest = active.remember_blob("model", upload.name, raw)
    spec = active.model_spec()
    if spec is None or spec.kind != "upload" or spec.digest != digest:
        candidate = ModelSpec("upload", upload.name, digest)
        problem = active.model_problem(candidate)
        if problem is not None:  # refused before switching: constraints, parameters and the person stay
            kept = "the model in use" if spec is not None else "the data"
            what = ("The model file cannot be used." if isinstance(problem, sources.ModelFileProblem) else
                    "The model cannot be used with this data.")
            st.error(f"**{what}** {_cap(str(problem))}  \nNothing else changed: {kept}, the "
                     "parameters, the actionability constraints and the chosen person stay as they were.",
                     icon=":material/error:")
            return
        active.use_model(candidate)
        st.rerun()


def missing_formats_note() -> None:
    """Under a model uploader: the formats this server cannot load because their library is not installed."""
    missing = missing_libraries()
    if missing:
        names = " and ".join(missing)
        extras = ", ".join(f"pip install '{e}'" for e in missing.values())
        st.caption(f"{names} models cannot be loaded on this server: "
                   f"{'its library is' if len(missing) == 1 else 'their libraries are'} not installed (the operator "
                   f"can add {'it' if len(missing) == 1 else 'them'}: {extras}).")


def _column(data) -> None:
    options = [c for c in data.frame.columns if c != data.label_column] + \
        ([data.label_column] if data.label_column else [])
    spec = active.model_spec()
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    col = c1.selectbox("Column holding the model's outputs", options, key="setup_output_column",
                       index=options.index(spec.name) if spec and spec.kind == "column" and spec.name in options
                       else 0)
    st.info("Without a model, rules are fitted from this column alone: **their validity is estimated only on these "
            "rows**, and edited individuals cannot be scored.", icon=":material/info:")
    if c2.button("Use this column", type="primary", width="stretch", key="setup_use_column"):
        active.use_model(ModelSpec("column", col))
        st.rerun()


def _model_status() -> None:
    notice = session.take_notice()
    if notice:
        st.info(notice, icon=":material/check_circle:")
    try:
        ws = active.data_and_model()
    except sources.NoModelYet:
        st.info("**Choose a model** above: train one in the app, upload a model file, or pick the column that holds "
                "the model's outputs.", icon=":material/model_training:")
        return
    except sources.ModelFileProblem as exc:
        st.error(f"**The model file cannot be used.** {_cap(str(exc))}", icon=":material/error:")
        return
    except InputProblem as exc:
        st.error(f"**The model cannot be used with this data.** {_cap(str(exc))}", icon=":material/error:")
        return
    except TCRExError as exc:
        st.error(_cap(str(exc)), icon=":material/error:")
        return
    m = ws.model
    said = components.model_score_text(ws)  # the sidebar's and the Overview's figure (one owner)
    score = f" — {said}" if said else ""
    if m.label_problem:  # usable for explaining, but no figure compares its outputs with these labels
        st.warning(f"**{m.label}** ({m.task})  \n{m.description}  \n**Labels and outputs differ.** "
                   f"{m.label_problem}", icon=":material/warning:")
    else:
        st.success(f"**{m.label}** ({m.task}){score}  \n{m.description}", icon=":material/check_circle:")
    if m.warnings:
        st.warning("**About this model:**\n" + "\n".join(f"- {_cap(w)}" for w in m.warnings),
                   icon=":material/warning:")
    if m.categorical_features:
        st.info(f"Treated as categorical because the model does: {', '.join(map(str, m.categorical_features))}.",
                icon=":material/category:")
    for note in m.notes:
        st.info(note, icon=":material/info:")


def model_panel() -> None:
    """How well the active model does on labelled rows: hold-out figures where there is a hold-out, clearly
    labelled otherwise (training rows: optimistic; no labels: no performance)."""
    ws, problem = active.try_data_and_model()
    if ws is None:
        return
    st.subheader("How well the model does", anchor="model-performance")
    perf = active.model_performance(ws)
    if not isinstance(perf, ModelPerformance):
        st.info(perf, icon=":material/info:")
        return
    if perf.holdout is False:
        st.warning(f"**Measured on training rows — optimistic.** {_cap(perf.rows)}.", icon=":material/warning:")
    elif perf.holdout is None:
        st.info(f"**Measured on {perf.rows}.**", icon=":material/info:")
    else:
        st.caption(f"**Hold-out performance**, measured on {perf.rows}.")
    items = list(perf.table().itertuples(index=False))
    for col, (name, value) in zip(st.columns(len(items)), items):
        col.metric(name, f"{value:.3f}")
    for note in perf.notes:
        st.caption(_cap(note) + ".")
    if perf.task == REGRESSION:
        chart(fg.residual_plot, perf, key="model_residuals")
        return
    left, right = st.columns([3, 2])
    with left:
        chart(fg.confusion_matrix_figure, perf, key="model_confusion")
    with right:
        st.markdown("**Per class**")
        st.dataframe(perf.per_class, hide_index=True, width="stretch", column_config={
            c: st.column_config.NumberColumn(c, format="%.3f") for c in ("precision", "recall", "F1")})
    if perf.roc is not None:
        c1, c2 = st.columns(2)
        with c1:
            chart(fg.roc_curve_figure, perf, key="model_roc")
        with c2:
            chart(fg.pr_curve_figure, perf, key="model_pr")


def constraints_section() -> None:
    """Actionability constraints in a main-area table when the data has too many features for the sidebar."""
    ws, result, _ = active.current()
    if ws is None:
        return
    if not constraints.uses_table(ws):
        st.caption(f"With {len(ws.features)} features the constraints are edited in the sidebar (*Actionability "
                   "constraints*, under the parameters).")
        return
    constraints.table_editor(ws, result)


def value_labels_section() -> None:
    """The codebook: one table row per category (and per labelled numeric code) with its label, editable; a
    codebook file (CSV ``feature,value,label`` or JSON) read through :mod:`tcrex.intake` as untrusted input.
    Every page, figure, export and the report say the labels once applied (``TCREx(value_labels=...)``)."""
    ws, result, _ = active.current()
    if ws is None or result is None:
        st.caption("Value labels are set once a model is chosen and the rules are fitted.")
        return
    ex = result.explainer
    found = active.codebook_report(ws, ex)
    st.caption("What each value means to a person (*A14* → *no checking account*): sentences, tables, charts, "
               "exports and the report then say “no checking account (A14)”. Leave a label empty to show the "
               "value alone.")
    if found.notes:
        st.warning("Some labels of the codebook do not match the data and are not used: " + "; ".join(found.notes),
                   icon=":material/label_off:")
    if found.class_names:
        st.caption(_classes_named(ws.data.label_column, found.class_names))
    rows = codebook_rows(ex.schema_, found.labels)
    with st.form("value_labels_form"):
        edited = st.data_editor(rows, hide_index=True, width="stretch", num_rows="fixed", key="value_labels_table",
                                column_config={"feature": st.column_config.TextColumn("Feature", disabled=True),
                                               "value": st.column_config.TextColumn("Value", disabled=True),
                                               "label": st.column_config.TextColumn("Label", max_chars=200)})
        applied = st.form_submit_button("Apply labels", type="primary")
    if applied:
        book = codebook_from_rows(ex.schema_, rows, edited)
        try:
            check_value_labels(book)
        except TCRExError as exc:
            st.error(f"The labels were not applied: {exc}", icon=":material/error:")
        else:
            active.set_value_labels(ws.data.key, book)
            st.rerun()
    numeric = [f.name for f in ex.schema_.features if not f.is_categorical]
    if numeric:
        with st.expander("Label a code of a numeric feature (e.g. −7 = no delinquency on record)"):
            with st.form("value_labels_code_form"):
                a, b, c = st.columns([2, 1, 3])
                feature = a.selectbox("Feature", numeric, key="value_labels_code_feature")
                code = b.text_input("Value", key="value_labels_code_value", placeholder="-7")
                label = c.text_input("Label", key="value_labels_code_label", max_chars=200)
                added = st.form_submit_button("Add label")
            if added:
                try:
                    book = add_code_label(found.labels, feature, code, label)
                except TCRExError as exc:
                    st.error(f"The label was not added: {exc}", icon=":material/error:")
                else:
                    active.set_value_labels(ws.data.key, book)
                    st.rerun()
    c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
    # the uploader shows on demand: the model's file uploader above stays the page's last one until it is asked for
    opened = c1.toggle("Upload a codebook file", key="codebook_upload_open")
    c2.download_button("Download the codebook (CSV)", data=codebook_download(found.labels),
                       file_name="codebook.csv", mime="text/csv", on_click="ignore", key="codebook_download")
    upload = st.file_uploader("Upload a codebook (CSV feature,value,label or JSON {feature: {value: label}})",
                              type=["csv", "json"], key="codebook_upload") if opened else None
    if upload is not None:
        try:
            book = read_codebook(upload.getvalue(), upload.name)
        except TCRExError as exc:
            st.error(f"The codebook cannot be used: {exc}", icon=":material/error:")
            return
        matched = fit_codebook(book, ex.schema_, ws.data.label_column)
        for note in matched.notes:
            st.warning(f"{upload.name}: {note}", icon=":material/label_off:")
        st.info(f"{upload.name}: {matched.n_labels} label(s) for {len(matched.labels)} feature(s) match the data."
                + (f" {_classes_named(ws.data.label_column, matched.class_names)}" if matched.class_names else ""),
                icon=":material/label:")
        if st.button("Use this codebook", key="codebook_use", disabled=not matched.labels):
            classes = {ws.data.label_column: matched.class_names} if matched.class_names else {}
            active.set_value_labels(ws.data.key, {**matched.labels, **classes})
            st.rerun()
    if active.user_value_labels(ws.data.key) is not None and st.button("Back to the data's own codebook",
                                                                       key="codebook_reset"):
        active.clear_value_labels(ws.data.key)
        st.rerun()


def dictionary_section() -> None:
    """The data dictionary (:mod:`tcrex.ui.widgets.dictionary`): titles, special codes with their row counts,
    actionability; the codes the data suggests as one-click findings; upload and download."""
    ws, result, _ = active.current()
    if ws is None:
        st.caption("The data dictionary is set once a model is chosen.")
        return
    dictionary.section(ws, result)


def _classes_named(label_column, class_names: dict) -> str:
    """The codebook's entry for the label column: the classes it names (the label is in the data, not a feature)."""
    named = "; ".join(f"{v} = {name}" for v, name in class_names.items())
    return f"The codebook names the classes of the label column `{label_column}`: {named}."


def codebook_rows(schema, labels: dict) -> pd.DataFrame:
    """The codebook table: every category of every categorical feature, then the labelled codes of numeric
    features, with their labels ("" where none). Values as text (the table's cells)."""
    rows = []
    for f in schema.features:
        given = labels.get(f.name, {})
        if f.is_categorical:
            matched, _ = match_feature(f.name, True, f.categories, given)
            rows += [(f.name, str(c), matched.get(c, "")) for c in f.categories]
        else:
            rows += [(f.name, format_number(float(v)), label)
                     for v, label in match_feature(f.name, False, [], given)[0].items()]
    return pd.DataFrame(rows, columns=["feature", "value", "label"], dtype=object)


def codebook_from_rows(schema, rows: pd.DataFrame, edited: pd.DataFrame) -> dict:
    """The codebook of the edited table (rows in the order of :func:`codebook_rows`; empty labels dropped),
    values as the data holds them."""
    book: dict = {}
    for (feature, value, _), label in zip(rows.itertuples(index=False), edited["label"]):
        label = "" if label is None or (isinstance(label, float) and label != label) else str(label).strip()
        if not label:
            continue
        f = schema.features[schema.index(feature)]
        key = next((c for c in f.categories if str(c) == value), value) if f.is_categorical else float(value)
        book.setdefault(feature, {})[key] = label
    return book


def add_code_label(labels: dict, feature: str, code: str, label: str) -> dict:
    """The codebook with one more label for a numeric feature's ``code`` (text that reads as a number); raises
    :class:`tcrex.errors.ParameterError` with the reason when the code is not a number or the label not usable."""
    matched, unknown = match_feature(feature, False, [], {str(code).strip(): label})
    if unknown or not str(code).strip():
        raise ParameterError(f"{feature} is numeric: its codes are numbers, got {str(code).strip()!r}")
    book = {f: dict(v) for f, v in labels.items()}
    codes, _ = match_feature(feature, False, [], book.get(feature, {}))  # "0" and 0.0 are one code
    book[feature] = {**codes, **matched}
    check_value_labels(book)
    return book


def codebook_download(labels: dict) -> bytes:
    """The codebook as CSV ``feature,value,label``, formula-like cells neutralised (:mod:`tcrex.spreadsheet`)."""
    frame = pd.DataFrame([(f, str(v), label) for f, values in labels.items() for v, label in values.items()],
                         columns=["feature", "value", "label"])
    return to_csv(frame, index=False).encode("utf-8")


def label_section() -> None:
    """Choose or change the label column of the data in use, without uploading again (the old label is dropped:
    it must never become a feature by accident)."""
    try:
        data = active.active_data()
    except InputProblem:
        return
    spec = data.spec
    if spec.kind != "upload":
        st.caption(f"Label column: `{data.label_column}` (the sample's own).")
        return
    columns = list(data.frame.columns)
    if data.label_column is None:
        st.info("**No label column** is in use: every column is a feature (or audit only). If one of them is the "
                "outcome (the ground truth), choose it here.", icon=":material/label:")
    options = ["(none)", *columns]
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    chosen = c1.selectbox("Label column", options, index=options.index(data.label_column)
                          if data.label_column in options else 0, key=f"setup_label_after_{data.key[:12]}",
                          help="The ground truth or outcome: used to train a model in the app and to score "
                               "models; never a feature. The previous label column is left out of the features.")
    new_label = None if chosen == "(none)" else chosen
    if c2.button("Use as label column", key=f"setup_label_apply_{data.key[:12]}", width="stretch",
                 disabled=new_label == data.label_column):
        old = data.label_column
        new = replace(spec, label=new_label,
                      drop=tuple(dict.fromkeys([*(c for c in spec.drop if c != new_label), *([old] if old else [])])),
                      categorical=None if spec.categorical is None else tuple(c for c in spec.categorical
                                                                              if c != new_label),
                      extra=tuple(c for c in spec.extra if c != new_label))
        try:
            sources.prepare_frame(data.frame, replace(new, drop=(), sentinels=()), data.categorical)
        except InputProblem as exc:
            st.error(f"**This label column cannot be used.** {_cap(str(exc))}", icon=":material/error:")
            return
        model = active.model_spec()
        keep = model if model is not None and model.kind in ("upload", "column") and model.name != new_label \
            else (ModelSpec("train", model.name if model is not None and model.kind == "train" else "xgboost")
                  if new_label else None)
        notes = active.use_data(new, keep)
        session.set_notice(f"Label column: {new_label or 'none'}"
                           + (f"; {old!r} is left out of the features" if old else "")
                           + "".join(f". {_cap(n)}" for n in notes))
        st.rerun()


def outcome_section() -> None:
    """Which outcome is favourable, and the classes' names (:mod:`tcrex.ui.widgets.outcome`)."""
    ws, problem = active.try_data_and_model()
    if ws is None:
        st.caption("Asked once a model is chosen: which outcome people want, and what the classes are called.")
        return
    active.resolve_favourable(ws)
    outcome.question(ws)
    _, result, _ = active.current()
    if result is not None:  # after an upload: the suggested actionability constraints, one click away
        constraints.suggestions_panel(ws, result, key="setup")


def active_data_summary() -> None:
    """Column types of the data in use."""
    try:
        data = active.active_data()
    except InputProblem:
        return
    for note in data.notes:
        st.info(_cap(note), icon=":material/info:")
    summary = pd.DataFrame({
        "column": data.frame.columns,
        "role": ["label" if c == data.label_column else "not a feature (audit only)" if c in data.extra_columns
                 else "categorical feature" if c in data.categorical else "numeric feature"
                 for c in data.frame.columns],
        "dtype": [str(t) for t in data.frame.dtypes],
        "distinct values": [int(data.frame[c].nunique()) for c in data.frame.columns],
    })
    st.dataframe(summary, hide_index=True, width="stretch")
    st.caption(f"{data.n_rows:,} rows: {len(data.fit_index):,} fit rows (explainer and in-app training) and "
               f"{len(data.test_index):,} test rows (hold-out). Content SHA-256 `{data.key[:16]}…`")


def _cap(text: str) -> str:
    text = text.strip()
    return (text[0].upper() + text[1:]) if text else text
