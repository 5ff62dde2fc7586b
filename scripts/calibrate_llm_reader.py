"""Calibrate θ for the LLM reader on MuSiQue's gold sub-questions.

The paper picked θ for its DPR reader by maximising the F1 of "confidence > θ" predicting
that the top passage answers the question. We do the same for the LLM reader: every gold
sub-question of the 100 MuSiQue questions in ../shared/data (with "#k" replaced by the gold
answer of step k) retrieves its top-1 passage by BM25 over the MuSiQue corpus; the reader
answers; "correct" means the gold answer (or an alias for the last step) is contained in the
reader's answer. Prints the F1 for each candidate θ and the best one.

    .venv/bin/python scripts/calibrate_llm_reader.py [--llm local] [--limit 100]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

import numpy as np

from searchain.llm import make_llm
from searchain.readers.llm_reader import UNGROUNDED, LLMReader
from searchain.retrieval import BM25Index, read_corpus
from searchain.text import contains_answer

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "musique"


def sub_questions(item: dict) -> list[tuple[str, list[str]]]:
    steps, out = item["question_decomposition"], []
    for i, step in enumerate(steps):
        q = re.sub(r"#(\d+)", lambda m: steps[int(m.group(1)) - 1]["answer"], step["question"])
        golds = [step["answer"]]
        if i == len(steps) - 1:
            golds += item.get("answer_aliases", [])
        out.append((q, golds))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--llm", default="local")
    ap.add_argument("--limit", type=int, default=100)
    args = ap.parse_args()
    items = json.loads((DATA / "musique_train.json").read_text())[: args.limit]
    with tempfile.TemporaryDirectory() as tmp:
        index = BM25Index.build(
            read_corpus(DATA / "musique_train_corpus.json", "json", max_words=None),
            Path(tmp) / "idx",
            show_progress=False,
        )
        reader = LLMReader(make_llm(args.llm))
        conf, correct = [], []
        for item in items:
            for q, golds in sub_questions(item):
                passage = index.search(q, k=1)[0]
                out = reader.read(q, passage)
                conf.append(out.confidence)
                correct.append(any(contains_answer(out.answer, g) for g in golds))
    c, y = np.array(conf), np.array(correct)
    print(
        f"{len(c)} sub-questions; reader correct on {y.mean():.1%}; "
        f"ungrounded answers {np.mean(c == UNGROUNDED):.1%}"
    )
    best = (-1.0, 0.0)
    print("theta   precision recall  F1")
    for theta in np.arange(-3.0, 0.01, 0.1):
        pred = c > theta
        tp = float(np.sum(pred & y))
        p = tp / max(pred.sum(), 1)
        r = tp / max(y.sum(), 1)
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        print(f"{theta:6.2f}  {p:9.3f} {r:6.3f} {f1:6.3f}")
        if f1 > best[0]:
            best = (f1, float(theta))
    print(f"best theta = {best[1]:.2f} (F1 {best[0]:.3f})")


if __name__ == "__main__":
    main()
