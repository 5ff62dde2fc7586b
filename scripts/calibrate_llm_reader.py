"""Calibrate θ for the LLM reader on MuSiQue's gold sub-questions.

The paper picked θ for its DPR reader by maximising the F1 of "confidence > θ" predicting
that the top passage answers the question. We do the same for the LLM reader: every gold
sub-question of the 100 MuSiQue questions in ../shared/data (with "#k" replaced by the gold
answer of step k) retrieves its top-1 passage by BM25 over the MuSiQue corpus; the reader
answers; "correct" means the gold answer (or an alias for the last step) is contained in the
reader's answer. Prints the F1 for each candidate θ and the best one.

θ belongs to a reader *and its model*: each model's log-probabilities have their own scale.
``--items tune`` (the default) calibrates on the MuSiQue questions outside the quality
bench's reported subsample (the seed-0 50 of ``bench/quality.py``), so a θ chosen here never
saw a reported item; ``--items all`` takes the first ``--limit`` questions, as the Gemma θ of
−1.3 was calibrated. ``--out`` keeps every sub-question's verdict (JSON Lines, resumable);
``--passages N``: the reader reads the top N passages at once (SearChain's reader_passages).

    .venv/bin/python scripts/calibrate_llm_reader.py [--llm local] [--model NAME] \
        [--items tune|all] [--limit 100] [--out FILE.jsonl]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

import numpy as np

from searchain.llm import make_llm
from searchain.readers.base import merged, supporting
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


def musique_items(which: str, limit: int) -> list[dict]:
    items = json.loads((DATA / "musique_train.json").read_text())
    if which == "all":
        return items[:limit]
    from searchain.eval.datasets import load_dataset

    reported = {e.id for e in load_dataset("musique", limit=50, seed=0)}
    return [i for i in items if i["id"] not in reported][:limit]


def verdicts(args: argparse.Namespace) -> list[dict]:
    """Every sub-question's reader verdict, read back from ``--out`` where it has one."""
    done: dict[str, dict] = {}
    out = Path(args.out) if args.out else None
    if out and out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[row["key"]] = row
    todo = [(f"{item['id']}#{k}", q, golds)
            for item in musique_items(args.items, args.limit)
            for k, (q, golds) in enumerate(sub_questions(item))]  # fmt: skip
    if all(key in done for key, _, _ in todo):
        return [done[key] for key, _, _ in todo]
    with tempfile.TemporaryDirectory() as tmp:
        index = BM25Index.build(
            read_corpus(DATA / "musique_train_corpus.json", "json", max_words=None),
            Path(tmp) / "idx",
            show_progress=False,
        )
        kwargs = {"model": args.model} if args.model else {}
        reader = LLMReader(make_llm(args.llm, **kwargs))
        for key, q, golds in todo:
            if key in done:
                continue
            hits = index.search(q, k=args.passages)
            got = reader.read(q, hits[0] if args.passages == 1 else merged(hits))
            passage = hits[0] if args.passages == 1 else supporting(hits, got.answer)
            row = {"key": key, "question": q, "golds": golds, "answer": got.answer,
                   "confidence": got.confidence, "passage": passage.id,
                   "correct": any(contains_answer(got.answer, g) for g in golds)}  # fmt: skip
            done[key] = row
            if out:
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
    return [done[key] for key, _, _ in todo]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--llm", default="local")
    ap.add_argument("--model", default=None, help="e.g. qwen2.5-coder-1.5b")
    ap.add_argument("--items", choices=("tune", "all"), default="tune")
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--out", default=None, help="keep each verdict here (resumable)")
    ap.add_argument("--passages", type=int, default=1, help="read the top N at once")
    args = ap.parse_args()
    rows = verdicts(args)
    c = np.array([r["confidence"] for r in rows])
    y = np.array([r["correct"] for r in rows])
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
