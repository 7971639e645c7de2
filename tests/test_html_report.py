"""`report --format html`: one self-contained page with the five sections, both coverage tables,
the findings with their witnesses and the dependency graph drawn as SVG, each edge linked to
the IR lines it rests on; `report --out` writes it too, and the Markdown embeds the graph as
Mermaid. The layout is pure Python, so no Graphviz is needed to draw or open the page.

The browser tests load the page in a real headless Chromium (Debian's `chromium` and
`chromium-driver`, driven through selenium) and skip when either is absent; `.ci/run` installs
both. Screenshots go to `$BARRIER_VIZ_ARTIFACTS` when set, else to the test's tmp folder, and
their paths are printed (`pytest -s` shows them).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from barrier_viz.commands.graph_cmd import graph_document
from barrier_viz.commands.report_cmd import Report
from barrier_viz.render.html_report import PAGE_LIMIT
from barrier_viz.render.svg_graph import edge_lines
from barrier_viz.session import select
from cli_support import run_cli
from corpus_units import CORPUS

FIX = Path(__file__).parent / "fixtures"
# A persistent GEMM, an attention kernel (packed TMEM, persistent) and a 2-CTA kernel (TLX form:
# paired MMA, multicast TMA, remote arrivals).
GEMM = FIX / "gemm_ws_persistent.ttgir"
ATTENTION = FIX / "coverage" / "fa_packed_persistent.ttgir"
TWO_CTA = FIX / "cluster" / "paired_ws.ttgir"
DEADLOCK = FIX / "coverage" / "gemm_while_zero_store.ttgir"  # a hang with a witness schedule
KERNELS = {"gemm": GEMM, "attention": ATTENTION, "two_cta": TWO_CTA}


def page(path: Path) -> tuple[str, Report]:
    report = Report(select(str(path), require_function=True))
    return report.html(), report


@pytest.fixture(scope="module")
def pages() -> dict[str, tuple[str, Report]]:
    return {name: page(path) for name, path in KERNELS.items()}


def edge_groups(html: str) -> list[str]:
    return re.findall(r'<g class="(edge[^"]*)" id="edge-\d+" data-edge="(\d+)" data-lines="([\d ]*)"', html)


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_page_has_every_section_both_coverage_tables_and_no_network(pages, name: str) -> None:
    html, report = pages[name]
    for key in ("partitions", "graph", "phases", "buffers", "barriers", "coverage", "findings"):
        assert f'id="sec-{key}"' in html
    assert "Column-packed TMEM overwrite coverage" in html and "Operand-D accumulator init coverage" in html
    assert "default-src 'none'" in html  # the CSP forbids every load from the network
    attrs = re.findall(r'\b(?:src|href)="([^"]*)"', html)
    assert all(a.startswith("#") for a in attrs), [a for a in attrs if not a.startswith("#")]
    assert "<link" not in html and "@import" not in html and "url(http" not in html
    assert html == page(KERNELS[name])[0], "same input, same bytes"


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_svg_has_one_element_per_edge_linked_to_its_lines(pages, name: str) -> None:
    html, report = pages[name]
    doc = report.docs["graph"]
    groups = edge_groups(html)
    assert len(doc.edges) > 0 and len(groups) == len(doc.edges)
    for (classes, index, lines), e in zip(groups, doc.edges):
        assert e.direction in classes.split()
        assert ("cross-cta" in classes.split()) == (e.crosses_ctas is True)
        assert [int(x) for x in lines.split()] == edge_lines(e)
        for n in edge_lines(e):  # every line an edge names is shown in the page, with its text
            assert f'<tr id="L{n}">' in html


def test_page_needs_no_graphviz_or_any_other_program(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layout is pure Python: with no `dot` on PATH and no way to start a process, the page
    is drawn the same."""
    import subprocess

    def refuse(*args, **kwargs):
        raise AssertionError(f"the HTML report started a process: {args}")

    expected = page(GEMM)[0]
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "system", refuse)
    assert shutil.which("dot") is None
    assert page(GEMM)[0] == expected


def test_two_cta_kernel_marks_its_cross_cta_edges(pages) -> None:
    html, report = pages["two_cta"]
    crossing = [e for e in report.docs["graph"].edges if e.crosses_ctas]
    assert crossing, "the paired 2-CTA fixture has edges whose arrivals land in the peer CTA"
    assert sum("cross-cta" in c.split() for c, _, _ in edge_groups(html)) == len(crossing)
    assert "⇄CTA" in html


def test_findings_carry_their_witness_and_link_their_lines() -> None:
    html, report = page(DEADLOCK)
    assert any(f.kind.startswith("deadlock.") for f in report.findings)
    assert "blocks at line" in html and "Witness (" in html
    for f in report.findings:
        for n in f.lines:
            assert f'href="#L{n}"' in html and f'<tr id="L{n}">' in html
    assert '<span class="bad">' in html  # the coverage ✗ row stands out


def test_report_out_writes_the_page_and_markdown_embeds_mermaid(tmp_path: Path) -> None:
    out = tmp_path / "bv"
    r = run_cli("report", str(TWO_CTA), "--out", str(out))
    assert r.exit_code == 0, r.stderr
    assert (out / "report.html").read_text(encoding="utf-8") == page(TWO_CTA)[0]
    md = (out / "report.md").read_text(encoding="utf-8")
    mermaid = md.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert mermaid.startswith("flowchart TD")
    assert mermaid.count("==>") == sum(1 for e in graph_document(select(str(TWO_CTA), require_function=True)).edges
                                       if e.crosses_ctas and e.direction == "forward")
    assert run_cli("report", str(TWO_CTA), "--format", "html").stdout == page(TWO_CTA)[0]


def test_page_of_the_largest_corpus_file_stays_under_the_stated_limit() -> None:
    real = sorted((p for p in (CORPUS / "real").glob("*") if p.is_file() and p.suffix != ".json"),
                  key=lambda p: (p.stat().st_size, p.name)) if (CORPUS / "real").is_dir() else []
    if not real:
        pytest.skip("the shared corpus is not present (set BARRIER_VIZ_CORPUS)")
    largest = real[-1]
    r = run_cli("report", str(largest), "--format", "html")
    assert r.exit_code == 0, r.stderr
    size = len(r.stdout.encode("utf-8"))
    assert size < PAGE_LIMIT, f"{largest.name}: {size} bytes"
    assert len(edge_groups(r.stdout)) > 10


# -- in a real browser ----------------------------------------------------------------------------


def _chromium() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def browser():
    found = _chromium()
    if found is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = found[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(found[1]), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    where = os.environ.get("BARRIER_VIZ_ARTIFACTS")
    folder = Path(where) if where else tmp_path_factory.mktemp("html-report")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_page_in_headless_chromium(browser, artifacts: Path, pages, name: str) -> None:
    from selenium.webdriver.common.by import By

    html, report = pages[name]
    doc = report.docs["graph"]
    path = artifacts / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    browser.get(path.resolve().as_uri())
    browser.get_log("browser")  # nothing from an earlier page
    browser.refresh()

    edges = browser.find_elements(By.CSS_SELECTOR, "svg.graph g.edge")
    assert len(edges) == len(doc.edges)
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.graph g.edge.cross-cta")) == sum(1 for e in doc.edges if e.crosses_ctas)
    # Click an edge (a cross-CTA one where there is one) by its label, as a person would.
    pick = next((i for i, e in enumerate(doc.edges) if e.crosses_ctas), 0)
    label = browser.find_element(By.CSS_SELECTOR, f'svg.graph text.elabel[data-edge="{pick}"]')
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", label)
    label.click()
    detail = browser.find_element(By.ID, "edge-detail")
    shown = [int(a.text) for a in detail.find_elements(By.CSS_SELECTOR, "a.ln")]
    assert shown == edge_lines(doc.edges[pick])
    first = doc.edges[pick].lines.arrive[0]
    assert f"{first}" in detail.text and report.sel.unit.text().decode().split("\n")[first - report.sel.unit.start_line].strip()[:40] in detail.text
    assert "selected" in browser.find_element(By.ID, f"edge-{pick}").get_attribute("class")
    highlighted = {int(r.get_attribute("id")[1:]) for r in browser.find_elements(By.CSS_SELECTOR, "#ir tr.hl")}
    assert highlighted == set(edge_lines(doc.edges[pick]))

    errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert errors == [], errors
    shot = artifacts / f"{name}.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
