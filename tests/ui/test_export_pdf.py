"""The Export page offers the report as a PDF printed by the server's Chromium: the same HTML, on A4 pages."""
from pathlib import Path

import pytest

from tests.support import apptest_kit as kit

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                reason="needs Debian's chromium (make browser)")


def test_the_export_page_offers_the_report_as_pdf():
    from tcrex import report
    from tcrex.ui.pages import export
    from tcrex.ui.state import active

    at = kit.goto(kit.new_app(), "export")
    kit.assert_clean(at)
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download report (PDF)" in labels and "Download report" in labels
    ws, result = active.data_and_model(), kit.last_result(at)
    pdf = report.pdf_bytes(export.build_html(ws, result))
    assert pdf.startswith(b"%PDF") and b"/Type /Page" in pdf.replace(b"/Type/Page", b"/Type /Page")
