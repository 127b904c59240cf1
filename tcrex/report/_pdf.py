"""The report printed to PDF by headless Chromium (the Chromium the browser tests use): :func:`print_pdf` writes
A4 pages with the report's print styles (the main part first, the appendix on its own pages), used by
``tcrex report --pdf`` and the Export page's PDF download. :func:`pdf_bytes` prints an HTML string.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from ..errors import TCRExError
from ..outputs import atomic_output

__all__ = ["print_pdf", "pdf_bytes", "chromium", "PdfError", "NO_CHROMIUM", "CHROMIUM_NAMES", "PDF_TIMEOUT"]


class PdfError(TCRExError):
    """The report could not be printed (no Chromium, or Chromium failed)."""


#: Chromium programs tried (``TCREX_CHROMIUM`` instead when set): Debian's package, then others.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Why there is no PDF without Chromium, and what to install.
NO_CHROMIUM = ("printing the report to PDF needs Chromium (Debian: apt-get install chromium; or set TCREX_CHROMIUM "
               "to its path)")
#: Seconds Chromium may take to print the report.
PDF_TIMEOUT = 180


def chromium() -> str | None:
    """The Chromium program that prints reports, or None."""
    own = os.environ.get("TCREX_CHROMIUM")
    if own:
        return own if shutil.which(own) else None
    return next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)


def print_pdf(html_path: str, pdf_path: str) -> None:
    """``html_path`` printed to ``pdf_path`` by headless Chromium (A4, the report's print styles); the PDF appears
    complete or not at all."""
    program = chromium()
    if program is None:
        raise PdfError(NO_CHROMIUM)
    with tempfile.TemporaryDirectory(prefix="tcrex-pdf-") as tmp:
        out = os.path.join(tmp, "report.pdf")
        cmd = [program, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
               f"--user-data-dir={os.path.join(tmp, 'profile')}", f"--print-to-pdf={out}",
               "file://" + os.path.abspath(html_path)]
        try:
            done = subprocess.run(cmd, capture_output=True, timeout=PDF_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise PdfError(f"Chromium did not print the report within {PDF_TIMEOUT} s") from None
        if done.returncode != 0 or not os.path.exists(out) or not os.path.getsize(out):
            raise PdfError(f"Chromium could not print the report (exit {done.returncode}): "
                           f"{done.stderr.decode(errors='replace').strip()[-300:]}")
        with open(out, "rb") as src, atomic_output(pdf_path) as dst:
            shutil.copyfileobj(src, dst)


def pdf_bytes(html: str) -> bytes:
    """The report ``html`` printed to PDF (raises :class:`PdfError`)."""
    with tempfile.TemporaryDirectory(prefix="tcrex-pdf-") as tmp:
        src, out = os.path.join(tmp, "report.html"), os.path.join(tmp, "out.pdf")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(html)
        print_pdf(src, out)
        with open(out, "rb") as fh:
            return fh.read()
