"""Capture docs/viewer.png: the viewer answering a real HotpotQA question with SearChain (the
default embedded model, the demo index), driven in headless Debian chromium by Playwright.
The committed picture is line 3, the README's demo question, which the default model answers
right:

    .venv/bin/python scripts/viewer_screenshot.py --line 3 [--model NAME] [--out docs/viewer.png]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "server")]  # test_viewer.py

from playwright.sync_api import sync_playwright  # noqa: E402
from test_viewer import ARGS, CHROMIUM  # noqa: E402

from searchain.llm import make_llm  # noqa: E402
from searchain.llm.models import answer_model  # noqa: E402
from searchain.retrieval import default_index  # noqa: E402
from searchain.server.engine import Engine  # noqa: E402
from serverkit import serving  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "hotpotqa" / "dev_subsampled.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--line", type=int, default=1, help="Question number in the HotpotQA file.")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "viewer.png")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--model", default=answer_model(None), help="Offline model (the default's).")
    args = ap.parse_args()
    with DATA.open() as f:
        question = [json.loads(line) for _, line in zip(range(args.line), f, strict=False)][-1]
    with tempfile.TemporaryDirectory() as tmp:
        llm = make_llm("local", model=args.model, cache=Path(tmp) / "calls.sqlite")
        engine = Engine(llm, default_index(), max_concurrent=1)
        with serving(engine, runs_dir=None) as url, sync_playwright() as p:
            ctx = p.chromium.launch_persistent_context(
                str(Path(tmp) / "profile"), executable_path=str(CHROMIUM), headless=True,
                args=ARGS, viewport={"width": args.width, "height": 900},
            )  # fmt: skip
            page = ctx.new_page()
            page.goto(url + "/")
            page.wait_for_selector("#method option[value=searchain]", state="attached")
            page.fill("#question", question["question_text"])
            page.click("#ask")
            page.wait_for_selector("#answer", timeout=600_000)
            cite = page.locator("#answer button.cite")
            if cite.count():
                cite.first.click()
            page.locator("#tree svg g.node").first.focus()
            page.keyboard.press("Enter")
            page.wait_for_timeout(800)  # the smooth scroll to the cited passage
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), full_page=True)
            ctx.close()
    gold = question["answers_objects"][0]["spans"]
    print(f"wrote {args.out} with {args.model} for: {question['question_text']} (gold: {gold})")


if __name__ == "__main__":
    main()
