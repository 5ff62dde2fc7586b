"""Regenerate LLM-URL's packaged few-shot demonstrations (src/searchain/prompts/llm_url/).

The paper's few-shot prompt lists d = 10 (question, gold URLs) pairs taken from a *training*
split (the research code took them from the evaluated test file, a leak). Here they come from
the MuSiQue *train* sample in ../shared/data: its gold documents are the supporting paragraphs'
Wikipedia titles, in the order of the question's decomposition. HotpotQA and NQ have no train
file in ../shared/data, so their evaluations fall back to these (said in each retrieval report).

``--dataset webq`` writes demos_webq.jsonl from WebQuestions' *train* split, which has no gold
documents: each demo lists the Wikipedia URLs of its answers (at most 10, the paper's m), a
page named by the answer holding it — silver URLs that teach the format, as the research
code's own WebQ demos (URLs written by a model) did. Questions whose answers are numbers or
dates are skipped.
Every question with at least two distinct gold titles is written, in file order (``--d``
keeps only the first d): the prompt shows the first ``shots`` (10) of them. ``searchain eval
--dataset musique`` evaluates this same sample, so an evaluation drops the demos of the items
it evaluates and the next ones in the file take their places
(``LLMURLRetriever.exclude_demos``).

Usage: python scripts/make_llm_url_demos.py [--dataset musique|webq] [--source PATH] [--out PATH]
       [--d N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # runnable from a checkout without installing

from searchain.retrieval.llm_url.urls import canonical_title, title_to_path  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
PROMPTS = ROOT / "src" / "searchain" / "prompts" / "llm_url"
SOURCES = {
    "musique": DATA / "musique" / "musique_train.json",
    "webq": DATA / "webq" / "webq-train.jsonl",
}
OUTS = {"musique": PROMPTS / "demos.jsonl", "webq": PROMPTS / "demos_webq.jsonl"}
NUMBERISH = re.compile(r"[\d\s.,:/-]+")


def gold_titles(record: dict) -> list[str]:
    paragraphs = record["paragraphs"]
    order = [step["paragraph_support_idx"] for step in record["question_decomposition"]]
    titles = [canonical_title(paragraphs[i]["title"]) for i in order if i is not None]
    return list(dict.fromkeys(titles))


def url(title: str) -> str:
    return f"https://en.wikipedia.org/wiki/{title_to_path(canonical_title(title))}"


def musique_demos(source: Path) -> list[dict]:
    demos = []
    for record in json.loads(source.read_text(encoding="utf-8")):
        titles = gold_titles(record)
        if len(titles) >= 2:
            demos.append({"id": record["id"], "question": record["question"],
                          "urls": [url(t) for t in titles]})  # fmt: skip
    return demos


def webq_demos(source: Path, m: int = 10) -> list[dict]:
    demos = []
    for line in source.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        answers = list(dict.fromkeys(a.strip() for a in record["answer"] if a.strip()))
        if answers and not any(NUMBERISH.fullmatch(a) for a in answers):
            urls = list(dict.fromkeys(url(a) for a in answers))[:m]
            # ids of the train file: prefixed, since the test file numbers its items alike
            demos.append({"id": f"webq-train:{record['id']}", "question": record["question"],
                          "urls": urls})  # fmt: skip
    return demos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=sorted(SOURCES), default="musique")
    parser.add_argument("--source", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--d", type=int, default=None, help="keep the first d (default: all)")
    args = parser.parse_args()
    args.source = args.source or SOURCES[args.dataset]
    args.out = args.out or OUTS[args.dataset]
    make = musique_demos if args.dataset == "musique" else webq_demos
    demos = make(args.source)
    if args.d is not None:
        demos = demos[: args.d]
    lines = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in demos)
    args.out.write_text(lines, encoding="utf-8")
    print(f"wrote {len(demos)} demos from {args.source.name} to {args.out}")


if __name__ == "__main__":
    main()
