"""REBEL's Compositional Celebrities table (paper Table 1/3): per-category accuracy on the
paper's 5 categories, for REBEL and the baselines, with the embedded model by default.

    .venv/bin/python scripts/rebel_cc_table.py --per-category 20 --out runs/cc5

1. Picks ``--per-category`` questions of each of the paper's 5 categories (seeded, the same
   every time) into ``OUT-data/subset.json`` (the dataset's own format).
2. Knowledge (``--knowledge``): ``facts`` (default) builds a BM25 index of the dataset's
   single-hop facts — every distinct sub-question with its answer, 4,426 sentences such as
   "What is the birthplace (country only) of Rumi? Afghanistan." — so the search tool finds
   what the paper's web search found; ``demo`` uses the bundled HotpotQA demo corpus, which
   knows nothing about these people. Every method that searches gets the same index.
3. Runs ``searchain eval`` (resumable: re-run the same command to continue) and prints the
   table: cover-EM (gold answer contained in the output, the paper's human criterion made
   mechanical) per category and method, plus LLM calls and seconds per question.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from searchain.eval.datasets import dataset_path, subsample

CATEGORIES = {  # the paper's 5 of 17 categories, and its REBEL / ReAct / GPT-3 numbers
    "birthplace_rounded_lat": (59, 28, 16),
    "birthplace_currency": (94, 85, 95),
    "birthplace_currency_symbol": (47, 35, 28),
    "birthyear_nobelLiterature": (82, 33, 95),
    "birthdate_uspresident": (90, 53, 44),
}


def write_subset(data_dir: Path, per_category: int, seed: int) -> tuple[Path, dict[str, str]]:
    records = json.loads(dataset_path("compositional-celebrities").read_text())["data"]
    chosen, category_of = [], {}
    for cat in CATEGORIES:
        picked = subsample([r for r in records if r["category"] == cat], per_category, seed)
        chosen += picked
        category_of.update({r["Question"].strip(): cat for r in picked})
    path = data_dir / "subset.json"
    path.write_text(json.dumps({"data": chosen}, ensure_ascii=False, indent=1) + "\n")
    return path, category_of


def build_facts_index(data_dir: Path) -> Path:
    from searchain.retrieval import BM25Index

    out = data_dir / "facts-index"
    if out.exists():
        return out
    records = json.loads(dataset_path("compositional-celebrities").read_text())["data"]
    facts: dict[str, str] = {}
    for r in records:
        for q, a in (("Q1", "A1"), ("Q2", "A2")):
            answers = r[a] if isinstance(r[a], list) else [r[a]]
            facts.setdefault(r[q], f"{r[q]} {', '.join(str(x) for x in answers)}.")
    corpus = data_dir / "facts.jsonl"
    with corpus.open("w") as f:
        for i, text in enumerate(facts.values()):
            f.write(json.dumps({"id": f"fact{i}", "title": "", "text": text}) + "\n")
    BM25Index.from_corpus(corpus, out, max_words=None)
    return out


def table(run_dir: Path, category_of: dict[str, str], methods: list[str]) -> str:
    hits: dict[tuple[str, str], list[float]] = defaultdict(list)
    cost: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        cat = category_of.get(r["question"].strip())
        if cat is None:
            continue
        hits[(cat, r["method"])].append((r.get("metrics") or {}).get("cover_em", 0.0))
        usage = (r.get("trace") or {}).get("usage", {})
        calls = usage.get("llm_calls", 0) + usage.get("cached_calls", 0)
        cost[r["method"]].append((calls, r.get("seconds", 0.0)))
    head = "| category | n | " + " | ".join(methods) + " | paper REBEL / ReAct / GPT-3 |"
    lines = [head, "|" + "---|" * (len(methods) + 3)]
    for cat, paper in CATEGORIES.items():
        n = len(hits.get((cat, methods[0]), []))
        cells = []
        for m in methods:
            v = hits.get((cat, m), [])
            cells.append(f"{100 * sum(v) / len(v):.0f}" if v else "–")
        lines.append(
            f"| {cat} | {n} | " + " | ".join(cells) + " | " + " / ".join(map(str, paper)) + " |"
        )
    per_q = []
    for m in methods:
        c = cost.get(m, [])
        per_q.append(
            f"{sum(x for x, _ in c) / len(c):.1f} calls, {sum(s for _, s in c) / len(c):.1f} s"
            if c else "–"
        )  # fmt: skip
    lines.append("| per question | | " + " | ".join(per_q) + " | |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("runs/cc5"))
    ap.add_argument("--per-category", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default="rebel,self-ask,direct-prompting")
    ap.add_argument("--knowledge", choices=("facts", "demo"), default="facts")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("eval_args", nargs="*", help="more `searchain eval` options, after --")
    args = ap.parse_args()
    data_dir = args.out.with_name(args.out.name + "-data")
    data_dir.mkdir(parents=True, exist_ok=True)
    subset, category_of = write_subset(data_dir, args.per_category, args.seed)
    cmd = [str(Path(sys.executable).parent / "searchain"), "eval", "--dataset", str(subset),
           "--methods", args.methods, "--out", str(args.out),
           "--concurrency", str(args.concurrency), *args.eval_args]  # fmt: skip
    if args.knowledge == "facts":
        cmd += ["--index", str(build_facts_index(data_dir))]
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    print(table(args.out, category_of, args.methods.split(",")))


if __name__ == "__main__":
    main()
