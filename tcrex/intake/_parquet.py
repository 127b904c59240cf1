"""Reading Parquet within a memory budget (declared, estimated and decoded sizes), with damaged metadata, text that
is not UTF-8 and integers beyond 2**53 said as findings."""
from __future__ import annotations

import io
import json

import pandas as pd

from ..errors import DataError
from ..inputs import refuse_nested_columns
from ._numbers import EXACT_INTEGER, big_integer_message
from ._report import Finding, TableReport, size_text

PARQUET_UNPACK_FACTOR = 10  # a Parquet file may decompress to at most this many times max_bytes


def _parquet_estimate(groups, schema, pa) -> int:
    """Bytes the table would take once read, from the metadata alone (rows × width for fixed-width types; the
    declared uncompressed size plus per-value overhead for text and binary). ``groups``: the row groups' metadata,
    each read once (a file of 50,000 row groups and 40 columns must not cost 2,000,000 metadata objects)."""
    widths = []
    for fld in schema:
        t = fld.type
        if pa.types.is_dictionary(t):
            t = t.index_type
        try:
            widths.append(max(1, t.bit_width // 8))
        except ValueError:  # variable width
            widths.append(None)
    rows = sum(g.num_rows for g in groups)
    total = sum(rows * w for w in widths if w is not None)
    variable = [j for j, w in enumerate(widths) if w is None]
    for g in groups if variable else ():
        for j in variable:
            total += g.num_rows * 16 + (g.column(j).total_uncompressed_size if j < g.num_columns else 0)
    return total


#: Row groups read by one call, at most: a file of many tiny row groups (50,000 of one row each) is read in a few
#: calls instead of one per group (each call costs about 0.3 ms whatever its size).
GROUPS_PER_READ = 1024


def _chunks(groups, budget: int):
    """Indices of ``groups`` in runs of at most :data:`GROUPS_PER_READ` whose declared sizes together stay under
    a tenth of ``budget`` (a single larger group is a run of its own): bounded memory per read, few reads."""
    run, declared = [], 0
    for i, g in enumerate(groups):
        if run and (len(run) >= GROUPS_PER_READ or declared + g.total_byte_size > budget // 10):
            yield run
            run, declared = [], 0
        run.append(i)
        declared += g.total_byte_size
    if run:
        yield run


def read_parquet(data: bytes, filename: str, max_columns: int, max_bytes: int) -> TableReport:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a requirement
        raise DataError("pyarrow is not installed; Parquet files cannot be read") from None
    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        meta = pf.metadata
        schema = pf.schema_arrow
    except Exception as exc:  # noqa: BLE001 - ArrowInvalid, OSError, ... on damaged files
        raise DataError(f"{filename!r} is not a valid Parquet file (truncated or damaged?): "
                        f"{' '.join(str(exc).split())[:200]}") from None
    names = list(schema.names)
    if len(names) > max_columns:
        raise DataError(f"the table has {len(names)} columns; at most {max_columns} are accepted (T-CREx rules "
                        "over thousands of features are unreadable — select the features to explain first)")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DataError(f"duplicate column name(s) {dup[:10]}; every column needs a unique name — rename them")
    refuse_nested_columns(schema, repr(filename))
    damaged = f"{filename!r} is not a valid Parquet file (its metadata is inconsistent: damaged or edited?)"
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    if meta.num_rows < 0 or any(g.num_rows < 0 for g in groups) or sum(g.num_rows for g in groups) != meta.num_rows:
        raise DataError(damaged)
    budget = PARQUET_UNPACK_FACTOR * max_bytes
    unpacked = sum(g.total_byte_size for g in groups)
    estimate = _parquet_estimate(groups, schema, pa)
    if max(unpacked, estimate) > budget:
        raise DataError(f"{filename!r} declares {meta.num_rows:,} rows × {len(names)} columns, about "
                        f"{size_text(max(unpacked, estimate))} once read; the limit is {size_text(budget)} "
                        f"({PARQUET_UNPACK_FACTOR} × the {size_text(max_bytes)} file limit) — upload fewer rows")
    try:
        parts, used = [], 0
        for chunk in _chunks(groups, budget):  # a few row groups at a time: what is really decoded is counted too
            part = pf.read_row_groups(chunk)
            used += part.nbytes
            if used > budget:
                raise DataError(f"{filename!r} unpacks to more than {size_text(budget)} (its metadata "
                                "understates its size); upload fewer rows")
            parts.append(part)
        table = pa.concat_tables(parts) if parts else schema.empty_table()
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"{filename!r} could not be read as Parquet: {' '.join(str(exc).split())[:200]}") from None
    findings: list = []
    table = _parquet_text_and_integers(table, findings, pa)
    frame = _parquet_to_pandas(table, findings)
    if not isinstance(frame.index, pd.RangeIndex) and frame.index.name is not None:
        frame = frame.reset_index()  # an index saved by pandas comes back as a column
    frame.columns = [str(c) for c in frame.columns]
    if len(frame) == 0:
        raise DataError(f"{filename!r} has no rows")
    return TableReport(frame=frame, format="parquet", findings=findings)


def _parquet_to_pandas(table, findings: list) -> pd.DataFrame:
    """The table as a DataFrame; pandas' own metadata in the file (index, column types) is used when it is intact
    and ignored, with a finding, when it is damaged (not UTF-8 JSON, or describing columns that are not there)."""
    meta = table.schema.metadata or {}
    if b"pandas" in meta:
        try:
            json.loads(meta[b"pandas"].decode("utf-8"))
            return table.to_pandas()
        except (UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError):
            findings.append(Finding("metadata", "the file's pandas metadata (index and column types written by "
                                    "pandas) is damaged; it was ignored and the columns read as Arrow stores them"))
            table = table.replace_schema_metadata({k: v for k, v in meta.items() if k != b"pandas"})
    return table.to_pandas()


def _parquet_text_and_integers(table, findings: list, pa):
    """Binary columns become text (bytes that are not UTF-8 replaced by U+FFFD, and said); text columns holding
    invalid UTF-8 likewise; integer columns beyond 2**53 become exact text."""
    import pyarrow.compute as pc

    for j, fld in enumerate(table.schema):
        col, t, name = table.column(j), fld.type, fld.name
        new = None
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            try:
                col.validate(full=True)
                continue
            except pa.ArrowInvalid:
                t = pa.binary()
                col = col.cast(pa.binary())
        if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
            values = col.to_pylist()
            n_bad = 0
            decoded = []
            for v in values:
                if v is None:
                    decoded.append(None)
                    continue
                try:
                    decoded.append(v.decode("utf-8"))
                except UnicodeDecodeError:
                    n_bad += 1
                    decoded.append(v.decode("utf-8", errors="replace"))
            new = pa.array(decoded, pa.string())
            if n_bad:
                findings.append(Finding("encoding", f"{name!r}: {n_bad:,} value(s) are not valid UTF-8 text; the bad "
                                        "bytes were replaced by '\ufffd' and the column is read as text", name,
                                        count=n_bad))
            elif not (pa.types.is_string(fld.type) or pa.types.is_large_string(fld.type)):
                findings.append(Finding("binary_as_text", f"{name!r} is stored as bytes; it holds UTF-8 text and was "
                                        "read as text", name, severity="info"))
        elif pa.types.is_integer(t) and len(col) and col.null_count < len(col):
            bounds = pc.min_max(col)
            if max(abs(bounds["min"].as_py()), abs(bounds["max"].as_py())) > EXACT_INTEGER:
                new = col.cast(pa.string())
                findings.append(Finding("kept_as_text", big_integer_message(name), name, severity="info"))
        if new is not None:
            table = table.set_column(j, pa.field(name, new.type), new)
    return table
