"""Does retrieval find both passages? Recall of every needed passage, per retriever arm.

Arms: BM25; BM25 + MiniLM (RRF); BM25 + nomic-embed-text-v1.5 (RRF; the packaged GGUF run by
llama.cpp); each plain, with a query per part (``+parts``), with a bridge hop (``+bridge``) and
with both — the retriever specs ``searchain --retriever`` takes (retrieval/query_plan.py).

Sets (``--sets``):

* ``docs-tune``: the 24 real-documentation tune questions
  (bench/data/real_docs_tune_questions.jsonl) over their three Debian documents; ``docs``: the
  53 reported ones over six documents. A needed passage is found when a passage of its file
  holds its evidence (``answer``), as bench/real_docs_recall.py counts it; a question when all
  its passages are.
* ``hotpotqa-tune``: HotpotQA dev items outside every reported subsample (``--tune-limit``,
  seed 0) over the pool of all 500 questions' contexts; ``hotpotqa``: the seed-0 100 (HotpotQA-100);
  ``musique``: MuSiQue-100 over its corpus. Gold: the supporting paragraphs.

Reported per arm: all-needed recall at 5 (what the reader reads: retrieve-read's k and the
evidence step's ``evidence_k``) and at 10, recall of each needed passage at 5, by kind. Choose on
the tune sets; run the reported sets once, after choosing. ``--out FILE.json`` keeps the rows and
each question's hits (for paired intervals against BM25: ``--paired``).

    .venv/bin/python -m bench.two_passage_recall --sets docs-tune,hotpotqa-tune --out r.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from bench import real_docs_recall as rdr
from bench.kit import DATA
from bench.real_docs_sets import SETS as DOC_SETS
from searchain.eval.bootstrap import bootstrap_ci
from searchain.eval.splits import held_out_ids
from searchain.retrieval import BM25Index, DenseIndex, HybridRetriever
from searchain.retrieval.query_plan import QueryPlanRetriever
from searchain.scoring.document_answers import found, needs
from searchain.types import Passage

PLANS = ("", "+parts", "+bridge", "+parts+bridge")
EMBEDDERS = {"bm25": None, "minilm": "minilm", "nomic": "nomic"}
KS = (5, 10)


def embedder_path(name: str) -> str | None:
    if name == "minilm":
        from searchain.readers.st_embedder import default_embedder_path

        return str(default_embedder_path())
    return None  # the packaged GGUF


# -- question sets ---------------------------------------------------------------------------


def doc_set(name: str) -> dict[str, Any]:
    qs = DOC_SETS["tune" if name == "docs-tune" else "reported"]
    corpus = rdr.setup(qs.sources, qs.corpus_name)
    passages, _ = rdr.read(corpus, "after")
    questions = [json.loads(x) for x in qs.questions.read_text().splitlines() if x.strip()]
    items = [
        {
            "id": q["id"],
            "question": q["question"],
            "kind": "two" if q["kind"] == "two-passages" else "one",
            "needs": needs(q),
        }
        for q in questions
    ]
    return {"name": name, "passages": passages, "items": items, "match": "evidence"}


def hotpotqa_set(name: str, tune_limit: int) -> dict[str, Any]:
    from searchain.eval.datasets import load_dataset
    from searchain.retrieval import hotpotqa_supporting_ids, read_corpus

    path = DATA / "hotpotqa" / "dev_subsampled.jsonl"
    records = {json.loads(x)["question_id"]: json.loads(x) for x in path.open()}
    gold = hotpotqa_supporting_ids(path)
    reported = {e.id for e in load_dataset("hotpotqa", limit=100, seed=0)}
    frozen = held_out_ids("hotpotqa")
    if name == "hotpotqa":
        ids = [e.id for e in load_dataset("hotpotqa", limit=100, seed=0)]
    else:  # tune: outside the reported 100 and the (spent) held-out 160
        rest = sorted(set(records) - reported - frozen)
        ids = random.Random(0).sample(rest, min(tune_limit, len(rest)))
    items = [
        {
            "id": i,
            "question": records[i]["question_text"],
            "kind": records[i].get("type") or "hotpotqa",
            "needs": sorted(gold[i]),
        }
        for i in ids
    ]
    passages = list(read_corpus(path, "hotpotqa", max_words=None))
    if name != "hotpotqa":  # tune: the pool of the tune items' own contexts (encoding is slow)
        titles = {c["title"] for i in ids for c in records[i]["contexts"]}
        passages = [p for p in passages if p.title in titles]
    return {"name": name, "passages": passages, "items": items, "match": "id"}


def musique_set() -> dict[str, Any]:
    from searchain.retrieval import read_corpus

    corpus = DATA / "musique" / "musique_train_corpus.json"
    passages = list(read_corpus(corpus, "json", max_words=None))
    ids = {(p.title, p.text): p.id for p in passages}
    records = json.loads((DATA / "musique" / "musique_train.json").read_text())
    items = []
    for r in records[:100]:
        sup = [p for p in r["paragraphs"] if p["is_supporting"]]
        needs = sorted(ids[(p["title"], p["paragraph_text"])] for p in sup)
        kind = r["id"].split("__")[0]
        items.append({"id": r["id"], "question": r["question"], "kind": kind, "needs": needs})
    return {"name": "musique", "passages": passages, "items": items, "match": "id"}


def load_set(name: str, tune_limit: int) -> dict[str, Any]:
    if name.startswith("docs"):
        return doc_set(name)
    if name.startswith("hotpotqa"):
        return hotpotqa_set(name, tune_limit)
    if name == "musique":
        return musique_set()
    raise SystemExit(f"unknown set {name!r}")


# -- indexes and arms ------------------------------------------------------------------------


def indexes(ds: dict[str, Any], work: Path, embedders: list[str]) -> dict[str, Any]:
    """BM25 and each dense index of the set's passages (built once, reused from ``work``)."""
    out: dict[str, Any] = {}
    costs: dict[str, Any] = {}
    bm25_dir = work / ds["name"] / "bm25"
    t0 = time.perf_counter()
    if (bm25_dir / "metadata.json").is_file():
        out["bm25"] = BM25Index.load(bm25_dir)
    else:
        out["bm25"] = BM25Index.build(iter(ds["passages"]), bm25_dir, show_progress=False)
        costs["bm25"] = {"index_s": round(time.perf_counter() - t0, 1)}
    for name in embedders:
        if name == "bm25":
            continue
        d = work / ds["name"] / name
        if (d / "metadata.json").is_file():
            dense = DenseIndex.load(d)
        else:
            t0 = time.perf_counter()
            dense = DenseIndex.build(
                iter(ds["passages"]), d, model_path=embedder_path(name), show_progress=True
            )
            secs = time.perf_counter() - t0
            costs[name] = {
                "index_s": round(secs, 1),
                "passages_per_s": round(len(ds["passages"]) / secs, 2),
            }
        out[name] = dense
    out["_costs"] = costs
    return out


FUSION = "interleave"


def arm(idx: dict[str, Any], embedder: str, plan: str) -> Any:
    base = idx["bm25"] if embedder == "bm25" else HybridRetriever([idx["bm25"], idx[embedder]])
    if not plan:
        return base
    parts, bridge = "parts" in plan, "bridge" in plan
    return QueryPlanRetriever(base, parts=parts, bridge=bridge, fusion=FUSION)


def hit(ds: dict[str, Any], need: Any, top: list[Passage]) -> bool:
    if ds["match"] == "id":
        return any(p.id == need for p in top)
    return found(need, top)


def score(ds: dict[str, Any], results: list[list[Passage]]) -> dict[str, Any]:
    per_q: dict[str, dict[str, float]] = {}
    groups: dict[str, list[float]] = {}
    halves = [0, 0]
    for item, hits in zip(ds["items"], results, strict=True):
        row = {}
        for k in KS:
            got = [hit(ds, n, hits[:k]) for n in item["needs"]]
            row[f"all@{k}"] = float(all(got))
            if k == 5:
                halves[0] += sum(got)
                halves[1] += len(got)
        per_q[item["id"]] = row
        for g in {"all", item["kind"]}:
            groups.setdefault(g, []).append(row["all@5"])
    out: dict[str, Any] = {
        f"all@{k}": sum(r[f"all@{k}"] for r in per_q.values()) / len(per_q) for k in KS
    }
    out["passage@5"] = halves[0] / halves[1]
    out["by_kind@5"] = {g: [int(sum(v)), len(v)] for g, v in groups.items()}
    out["per_question"] = per_q
    return out


def run(sets: list[str], embedders: list[str], work: Path, tune_limit: int) -> list[dict]:
    rows = []
    for name in sets:
        ds = load_set(name, tune_limit)
        print(f"{name}: {len(ds['items'])} questions, {len(ds['passages']):,} passages",
              file=sys.stderr)  # fmt: skip
        idx = indexes(ds, work, embedders)
        questions = [i["question"] for i in ds["items"]]
        for emb in embedders:
            for plan in PLANS:
                name_arm = ("bm25" if emb == "bm25" else f"hybrid-{emb}") + plan
                t0 = time.perf_counter()
                results = arm(idx, emb, plan).search_batch(questions, k=max(KS))
                secs = time.perf_counter() - t0
                row = {"set": name, "arm": name_arm, "ms_per_query": 1000 * secs / len(questions)}
                row.update(score(ds, results))
                row["cost"] = idx["_costs"].get(emb)
                rows.append(row)
                line = f"  {name_arm:28s} all@5 {row['all@5']:.3f} all@10 {row['all@10']:.3f}"
                print(
                    f"{line} passage@5 {row['passage@5']:.3f} {row['by_kind@5']}", file=sys.stderr
                )
    return rows


def paired(rows: list[dict], baseline: str = "bm25") -> list[str]:
    """Each arm minus BM25 on all@5, item by item, with a 95 % bootstrap interval."""
    lines = []
    base = {r["set"]: r for r in rows if r["arm"] == baseline}
    for r in rows:
        b = base.get(r["set"])
        if b is None or r["arm"] == baseline:
            continue
        ids = list(r["per_question"])
        diffs = [r["per_question"][i]["all@5"] - b["per_question"][i]["all@5"] for i in ids]
        mean, low, high = bootstrap_ci(diffs, n=2000, seed=0)
        won, lost = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
        lines.append(f"{r['set']:14s} {r['arm']:28s} {100 * mean:+6.1f} "
                     f"[{100 * low:+.1f}, {100 * high:+.1f}]  won {won}, lost {lost}")  # fmt: skip
    return lines


def markdown(rows: list[dict]) -> str:
    head = "| set | arm | all@5 | all@10 | passage@5 | by kind (all@5) | ms/query |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    for r in rows:
        kinds = ", ".join(f"{k} {h}/{n}" for k, (h, n) in r["by_kind@5"].items() if k != "all")
        lines.append(
            f"| {r['set']} | {r['arm']} | {r['all@5']:.1%} | {r['all@10']:.1%} | "
            f"{r['passage@5']:.1%} | {kinds} | {r['ms_per_query']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sets_help = "docs-tune, hotpotqa-tune (choose on these); docs, hotpotqa, musique"
    ap.add_argument("--sets", default="docs-tune,hotpotqa-tune", help=sets_help)
    ap.add_argument("--embedders", default="bm25,minilm,nomic")
    ap.add_argument("--tune-limit", type=int, default=200)
    ap.add_argument("--work", type=Path, default=rdr.CACHE / "two-passage-recall")
    ap.add_argument("--out", type=Path, help="write the rows (with each question's hits) here")
    ap.add_argument("--fusion", default=FUSION, choices=("interleave", "rrf"))
    args = ap.parse_args()
    globals()["FUSION"] = args.fusion
    embedders = [e for e in args.embedders.split(",") if e]
    if unknown := set(embedders) - set(EMBEDDERS):
        ap.error(f"unknown embedder(s): {', '.join(sorted(unknown))}")
    rows = run([s for s in args.sets.split(",") if s], embedders, args.work, args.tune_limit)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    print(markdown(rows))
    print("\nPaired against BM25 (all@5, points, 95 % CI):")
    print("\n".join(paired(rows)))


if __name__ == "__main__":
    main()
