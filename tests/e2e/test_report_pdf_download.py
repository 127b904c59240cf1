"""The Export page's PDF in a real browser, on the default sample: "Download report (PDF)" gives a PDF printed from
the same report as "Download report" (the HTML), its main part fits four A4 pages with the appendix on pages of
its own, and, the HTML report opened at an A4 page's width, no table cell's text overflows its cell and no column
is narrower than its header's longest word."""
from __future__ import annotations

import re

from tests.support.browser import HANG_LIMIT_MS, download_report, wait_for_app_idle

MAIN_PAGES = 4
A4_WIDTH = 794  # px: an A4 page's width at 96 dpi, as Chromium prints it


def _pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf))


def test_the_pdf_download_is_the_report_on_a4_pages_with_readable_tables(browser, open_app, tmp_path):
    from tcrex.report import print_pdf

    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(HANG_LIMIT_MS)
    open_app(page, "/export")
    html_path = download_report(page, tmp_path)
    wait_for_app_idle(page)
    with page.expect_download() as info:
        page.get_by_role("button", name="Download report (PDF)").click()
    pdf = info.value.path().read_bytes()
    assert pdf.startswith(b"%PDF")
    text = html_path.read_text()
    assert '<p id="summary"' in text
    # the same report: the downloaded HTML printed by the same Chromium has as many pages
    print_pdf(str(html_path), str(tmp_path / "again.pdf"))
    assert _pages(pdf) == _pages((tmp_path / "again.pdf").read_bytes())
    # the main part (everything but the collapsed technical appendix) on at most four pages, the appendix after
    start, end = text.index('<details class="appendix"'), text.index("<footer")
    (tmp_path / "main.html").write_text(text[:start] + text[end:])
    print_pdf(str(tmp_path / "main.html"), str(tmp_path / "main.pdf"))
    main = _pages((tmp_path / "main.pdf").read_bytes())
    assert 1 <= main <= MAIN_PAGES and _pages(pdf) > main
    # tables read at an A4 page's width: no cell's text spills out of it, no header word is cut
    report = context.new_page()
    report.set_viewport_size({"width": A4_WIDTH, "height": 1123})
    report.goto(html_path.as_uri())
    report.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert report.evaluate("document.querySelectorAll('td').length") > 50  # the report's tables are all there
    spilled = report.evaluate("""() => [...document.querySelectorAll('td, th')]
        .filter(c => c.scrollWidth > c.clientWidth + 1)
        .map(c => c.tagName + ': ' + c.innerText.slice(0, 60))""")
    assert not spilled, spilled[:10]
    narrow = report.evaluate("""() => {
        const out = [];
        const probe = document.createElement('span');
        probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap';
        document.body.appendChild(probe);
        for (const th of document.querySelectorAll('th')) {
            const style = getComputedStyle(th);
            probe.style.font = style.font;
            const words = th.innerText.split(/\\s+/).filter(Boolean);
            const widest = Math.max(0, ...words.map(w => { probe.textContent = w; return probe.offsetWidth; }));
            const room = th.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
            if (widest > room + 1) out.push(th.innerText + ' (' + widest + ' > ' + room + ' px)');
        }
        return out;
    }""")
    assert not narrow, narrow[:10]
    context.close()
