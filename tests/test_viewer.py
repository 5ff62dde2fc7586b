"""The web viewer in a real headless Chromium (Debian's, driven by Playwright) against the real
service: ask on the page, watch the answer arrive, click a citation, count the drawn tree
nodes, browse an evaluation run down to failures. Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest

from searchain.server import Engine
from serverkit import QUESTION, make_engine, make_run, serving

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return make_engine(tmp_path_factory.mktemp("llm") / "calls.sqlite")


@pytest.fixture(scope="module")
def url(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    runs = tmp_path_factory.mktemp("runs")
    make_run(runs)
    with serving(engine, runs_dir=runs) as u:
        yield u


@pytest.fixture(scope="module")
def browser(url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    # After ``url``: Playwright's sync API keeps an event loop running in this thread, and the
    # run made for ``url`` (searchain eval) starts its own with asyncio.run.
    if not CHROMIUM.exists():
        pytest.fail("chromium not found at /usr/bin/chromium: run scripts/install.sh test")
    with playwright_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=str(CHROMIUM),
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        yield ctx
        ctx.close()


def test_ask_on_the_page_cite_and_tree(browser, url: str) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url + "/")
    page.wait_for_selector("#method option[value=searchain]", state="attached")
    page.fill("#question", QUESTION)
    page.click("details.options summary")  # the options are folded away by default
    page.fill("#opt-r_max", "2")
    page.fill("#opt-max_tokens", "64")
    with page.expect_response("**/v1/ask/stream") as resp:
        page.click("#ask")
    assert resp.value.status == 200
    page.wait_for_selector("#answer", timeout=120_000)
    # Progress arrived live and ended with the answer.
    steps = page.locator("#progress li").all_inner_texts()
    assert steps[0] == "started searchain" and "round 1" in steps and steps[-1] == "done"
    # The trace the page drew is the one the server sent: fetch the same answer over the API.
    trace = page.evaluate(
        """async (q) => (await (await fetch('/v1/ask', {method: 'POST',
            headers: {'Content-Type': 'application/json'},
            body: JSON.stringify({question: q, options: {r_max: 2, max_tokens: 64}})})).json())""",
        QUESTION,
    )
    assert page.locator("#answer").inner_text().strip() == trace["final_content"].strip()
    nodes = page.locator("#tree svg g.node")
    assert nodes.count() == len(trace["nodes"]) > 1
    sources = sorted(nodes.evaluate_all("els => els.map(e => e.dataset.source)"))
    assert sources == sorted(n["source"] for n in trace["nodes"])
    # Click the first citation: its passage is highlighted, focused and in view.
    cites = page.locator("#answer button.cite")
    assert cites.count() >= 1, trace["final_content"]
    mark = cites.first.get_attribute("data-ref")
    cites.first.click()
    ref = page.locator(f"#refs li[data-ref='{mark}']")
    assert "highlight" in (ref.get_attribute("class") or "")
    assert page.locator("#refs li.highlight").count() == 1
    passage = trace["references"][int(mark) - 1]  # type: ignore[arg-type]
    assert passage["title"] in ref.inner_text() and passage["text"][:40] in ref.inner_text()
    assert page.evaluate("document.activeElement.dataset.ref") == mark
    assert ref.is_visible()
    # Keyboard: a focused tree node shows its details on Enter.
    first = nodes.first
    first.focus()
    page.keyboard.press("Enter")
    assert trace["nodes"][0]["query"] in page.locator(".node-detail").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "viewer-ask.png"), full_page=True)
    # Offline: everything the page loaded came from the service itself.
    assert requests and all(r.startswith(url) for r in requests), requests
    assert not errors, errors
    # Phone width: the page still fits (no horizontal scrolling of the page itself).
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(ARTIFACTS / "viewer-phone.png"), full_page=False)
    page.close()


def test_run_browser_filters_failures_and_shows_traces(browser, url: str) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    page.goto(url + "/")
    page.click("#tab-runs")
    page.click("button[aria-label='Open run hp']")
    page.wait_for_selector("#run-detail table")
    detail = json.loads(
        page.evaluate("async () => JSON.stringify(await (await fetch('/v1/runs/hp')).json())")
    )
    rows = page.locator("#run-detail table").nth(1).locator("tr")
    assert rows.count() - 1 == detail["total"] == 3
    metric_row = page.locator("#run-detail table").first.locator("tr").nth(1).inner_text()
    assert "retrieve-read" in metric_row and "3" in metric_row
    page.check("#failures-only")
    page.wait_for_function(
        "n => document.querySelectorAll('#run-detail table')[1].rows.length - 1 === n",
        arg=sum(it["failure"] for it in detail["items"]),
    )
    page.uncheck("#failures-only")
    page.wait_for_function(
        "() => document.querySelectorAll('#run-detail table')[1].rows.length === 4"
    )
    page.locator("#run-detail button", has_text="trace").first.click()
    page.wait_for_selector("#run-trace #tree svg g.node")
    first = detail["items"][0]
    assert first["question"] in page.locator("#run-trace h2").first.inner_text()
    page.screenshot(path=str(ARTIFACTS / "viewer-runs.png"), full_page=True)
    page.close()
