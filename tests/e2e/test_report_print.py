"""The report for a board of the bundled loans sample and of a 1,000-row credit table with 20 features,
measured in Chromium at 1440 x 900: the main part (executive page and one short section per question) fits four screens, the technical appendix is collapsed
on screen and starts on a new page in print, no chart, figure or table row is split across printed pages, and
the PDF Chromium prints has a sane number of pages."""
from __future__ import annotations

import re

import pytest

from tests.support.browser import SCREENSHOTS
from tests.support.report_sample import credit_report, sample_report

WIDTH, SCREEN = 1440, 900
MAX_SCREENS = 4


REPORTS = {"loans": lambda: sample_report(include_person=True),
           "credit-20-features": lambda: credit_report(rows=1000, n_features=20, include_person=True)}


@pytest.fixture(scope="module", params=list(REPORTS))
def report_path(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("board") / f"{request.param}-report.html"
    path.write_text(REPORTS[request.param](), encoding="utf-8")
    return path


def test_main_part_fits_four_screens_and_the_appendix_is_collapsed(browser, report_path):
    page = browser.new_page(viewport={"width": WIDTH, "height": SCREEN})
    try:
        page.goto(report_path.as_uri())
        main = page.evaluate("document.getElementById('appendix').getBoundingClientRect().top + window.scrollY")
        questions = page.evaluate("Array.from(document.querySelectorAll('#main-part section')).map(s => s.id)")
        closed = page.evaluate("!document.getElementById('appendix').open")
        rules_shown = page.evaluate("document.getElementById('rules').checkVisibility()")
        total = page.evaluate("document.documentElement.scrollHeight")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"report-board-{report_path.stem}.png"), full_page=True)
        page.evaluate("document.getElementById('appendix').open = true")
        opened = page.evaluate("document.documentElement.scrollHeight")
    finally:
        page.close()
    print(f"{report_path.stem} main part: {main:.0f} px = {main / SCREEN:.2f} screens of {WIDTH}x{SCREEN}; whole page {total} px")
    assert questions == ["executive-summary", "who-gets-recourse", "how-hard", "groups-differ", "models-changed"]
    assert main <= MAX_SCREENS * SCREEN, f"main part is {main:.0f} px ({main / SCREEN:.1f} screens of {SCREEN})"
    assert closed and not rules_shown and total < main + SCREEN  # only the appendix's summary line shows
    assert opened > total + 2 * SCREEN  # the technical detail is there, only collapsed


def test_printed_report_keeps_charts_and_rows_whole(browser, report_path):
    page = browser.new_page(viewport={"width": WIDTH, "height": SCREEN})
    try:
        page.goto(report_path.as_uri())
        page.emulate_media(media="print")
        rules = page.evaluate("""() => {
            const style = e => getComputedStyle(e);
            const kept = sel => Array.from(document.querySelectorAll(sel)).map(e => style(e).breakInside);
            return {appendix: style(document.getElementById('appendix')).breakBefore,
                    appendixShown: document.getElementById('rules').checkVisibility(),
                    figures: kept('.figure'), rows: kept('tr'), charts: kept('svg, .stack'),
                    questions: kept('section.question')};
        }""")
        pdf = page.pdf(format="A4", print_background=True)
    finally:
        page.close()
    assert rules["appendix"] == "page"  # the appendix starts on a new page
    assert rules["appendixShown"]  # and prints open, although collapsed on screen
    for kind in ("figures", "rows", "charts", "questions"):
        assert rules[kind] and set(rules[kind]) == {"avoid"}, (kind, set(rules[kind]))
    pages = len(re.findall(rb"/Type\s*/Page(?!s)", pdf))
    print(f"printed report: {pages} A4 pages")
    # the main part is 4 screens (about 3 A4 pages); the appendix (rules, metarules, trees, audit, comparison)
    # adds some: a sane count is neither a page per chart nor hundreds of pages
    assert 4 <= pages <= 40, pages
