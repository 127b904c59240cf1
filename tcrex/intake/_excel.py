"""Excel workbooks (``.xlsx``, ``.xlsm``): the first sheet's values as CSV text, read then like any CSV upload.

openpyxl reads the workbook read-only with cached values (a formula gives the value Excel last computed, never the
formula), so a table from a spreadsheet goes through every check of a CSV (the header, duplicate names, numbers
that must stay exact, the findings). The sheet is read row by row and refused past :data:`MAX_EXCEL_CELLS` cells,
so a workbook that unpacks to far more than its size is stopped while it is read. An older ``.xls``, an ``.ods``
or any other archive is refused by the reader with "save it as CSV".
"""
from __future__ import annotations

import csv
import io

from ..errors import DataError

#: Spreadsheet extensions read (the first sheet, values only).
EXCEL_EXTENSIONS = (".xlsx", ".xlsm")
#: Largest spreadsheet read (cells of the first sheet); larger ones are refused with "save it as CSV".
MAX_EXCEL_CELLS = 5_000_000


def is_excel(filename: str) -> bool:
    """Whether ``filename`` names a workbook this reader opens (by its extension)."""
    return str(filename or "").lower().endswith(EXCEL_EXTENSIONS)


def excel_to_csv(data: bytes, filename: str, max_cells: int = MAX_EXCEL_CELLS) -> tuple[bytes, str | None]:
    """The first sheet of a workbook as UTF-8 CSV bytes, and a note naming that sheet when the workbook has others
    (None when it has one). A file openpyxl cannot read, an empty first sheet or one above ``max_cells`` cells is
    a :class:`tcrex.errors.DataError` saying to save it as CSV."""
    try:
        import openpyxl  # noqa: PLC0415 - only for spreadsheets
    except ImportError:
        raise DataError(f"{filename!r} is an Excel workbook, and reading one needs openpyxl, which this installation "
                        "lacks (pip install 'tcrex[app]'); or save it as CSV (UTF-8) and use that") from None

    refuse = f"{filename!r} could not be read as an Excel workbook"
    try:
        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many types for a bad file; all mean "unreadable"
        raise DataError(f"{refuse} ({type(exc).__name__}); save it as CSV (UTF-8) and upload that") from None
    try:
        sheet = book.worksheets[0]
        out = io.StringIO()
        writer = csv.writer(out)
        cells = 0
        for row in sheet.iter_rows(values_only=True):
            cells += len(row)
            if cells > max_cells:
                raise DataError(f"{filename!r} has more than {max_cells:,} cells; save it as CSV and upload that")
            writer.writerow(["" if v is None else v for v in row])
        others = len(book.worksheets) - 1
        note = (f"the workbook has {others + 1} sheets; the first, {str(sheet.title)!r}, was read (save another "
                "sheet as CSV to use it)") if others else None
    except DataError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"{refuse} ({type(exc).__name__}); save it as CSV (UTF-8) and upload that") from None
    finally:
        book.close()
    if not cells:
        raise DataError(f"the first sheet of {filename!r} is empty; save the table as CSV and upload that")
    return out.getvalue().encode("utf-8"), note
