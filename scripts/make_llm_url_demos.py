"""Regenerate src/searchain/prompts/llm_url/demos.jsonl: LLM-URL's few-shot demonstrations.

The paper's few-shot prompt lists d = 10 (question, gold URLs) pairs taken from a *training*
split (the research code took them from the evaluated test file, a leak). Here they come from
the MuSiQue *train* sample in ../shared/data: its gold documents are the supporting paragraphs'
Wikipedia titles, in the order of the question's decomposition. WebQuestions' train split has
no gold documents, and HotpotQA has no train file in ../shared/data, so neither can be used.
Every question with at least two distinct gold titles is written, in file order (``--d``
keeps only the first d): the prompt shows the first ``shots`` (10) of them. ``searchain eval
--dataset musique`` evaluates this same sample, so an evaluation drops the demos of the items
it evaluates and the next ones in the file take their places
(``LLMURLRetriever.exclude_demos``).

Usage: python scripts/make_llm_url_demos.py [--source PATH] [--out PATH] [--d N]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # runnable from a checkout without installing

from searchain.retrieval.llm_url.urls import canonical_title, title_to_path  # noqa: E402

DEFAULT_SOURCE = ROOT.parent / "shared" / "data" / "musique" / "musique_train.json"
DEFAULT_OUT = ROOT / "src" / "searchain" / "prompts" / "llm_url" / "demos.jsonl"


def gold_titles(record: dict) -> list[str]:
    paragraphs = record["paragraphs"]
    order = [step["paragraph_support_idx"] for step in record["question_decomposition"]]
    titles = [canonical_title(paragraphs[i]["title"]) for i in order if i is not None]
    return list(dict.fromkeys(titles))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--d", type=int, default=None, help="keep the first d (default: all)")
    args = parser.parse_args()
    records = json.loads(args.source.read_text(encoding="utf-8"))
    demos = []
    for record in records:
        titles = gold_titles(record)
        if len(titles) >= 2:
            urls = [f"https://en.wikipedia.org/wiki/{title_to_path(t)}" for t in titles]
            demos.append({"id": record["id"], "question": record["question"], "urls": urls})
        if len(demos) == args.d:
            break
    lines = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in demos)
    args.out.write_text(lines, encoding="utf-8")
    print(f"wrote {len(demos)} demos from {args.source.name} to {args.out}")


if __name__ == "__main__":
    main()
