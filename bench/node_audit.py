"""An audit of SearChain's node labels that does not use the rule's own functions.

``sample``: 40 nodes of the calibration run of the defaults (calibration items, never reported
ones), drawn at random (seed 0) from those the chain kept with a reader span — 20 the LLM wrote
and IR checked, 15 IR corrected, 5 IR completed — written with what a reader of the passage
needs (question, the node's query and answer, the reader's span, the passage) and **nothing of
any label rule** to ``bench/data/node_audit_sample.jsonl``. Someone who has not seen the rule's
labels writes ``bench/data/node_audit_labels.jsonl`` (``{"key", "supported": true|false,
"why"}``: does the passage state that the node's answer answers its query?).

``score``: rule 2 (as the run recorded it) and the label rule of this checkout (run on the
recorded reader outputs) against those labels: the share of the nodes each treats as confirmed
that the passage supports.

    .venv/bin/python -m bench.node_audit sample
    .venv/bin/python -m bench.node_audit score
"""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

from bench.kit import RESULTS_DIR, ROOT

RUN = RESULTS_DIR / "calibration/qwen2.5-coder-1.5b/hotpotqa-calibration-default/results.jsonl"
SAMPLE = ROOT / "bench/data/node_audit_sample.jsonl"
LABELS = ROOT / "bench/data/node_audit_labels.jsonl"
DRAW = {"llm": 20, "ir-corrected": 15, "ir-completed": 5}


def nodes_with_a_span() -> list[dict[str, Any]]:
    out = []
    for line in RUN.read_text().splitlines():
        r = json.loads(line)
        if r["method"] != "searchain" or r["status"] != "ok":
            continue
        for n in r["trace"]["nodes"]:
            reader = n["meta"].get("reader") or {}
            if n["source"] not in DRAW or not reader.get("answer") or not n["passages"]:
                continue
            passage = next(
                (p for p in n["passages"] if p["id"] == reader.get("passage_id")), n["passages"][0]
            )
            out.append(
                {
                    "key": f"{r['id']}/{n['id']}",
                    "source": n["source"],
                    "question": r["question"],
                    "query": n["query"],
                    "node_answer": n["answer"],
                    "reader_span": reader["answer"],
                    "passage_title": passage.get("title", ""),
                    "passage": passage["text"],
                }
            )
    return out


def sample() -> None:
    pool = nodes_with_a_span()
    rng = random.Random(0)
    chosen = []
    for source, n in DRAW.items():
        of_source = [x for x in pool if x["source"] == source]
        chosen += rng.sample(of_source, min(n, len(of_source)))
    rng.shuffle(chosen)
    SAMPLE.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in chosen))
    print(f"{len(chosen)} nodes written to {SAMPLE.relative_to(ROOT)}")


def score() -> None:
    """Rule 2 as recorded in the run, and this checkout's rule (``bench/node_labels.py
    relabel``, which runs the method's label functions on the recorded reader output): of the
    labelled nodes each treats as confirmed (verified, or corrected / completed by IR), the
    share the blind labels say their passage supports."""
    from bench.node_labels import CONFIRMED, LABEL_RULE, relabel

    labels = {
        x["key"]: x["supported"]
        for x in map(json.loads, LABELS.read_text().splitlines())
        if x.get("supported") is not None
    }
    recorded: dict[str, dict[str, Any]] = {}
    relabelled: dict[str, dict[str, Any]] = {}
    for line in RUN.read_text().splitlines():
        r = json.loads(line)
        if r["method"] != "searchain" or r["status"] != "ok":
            continue
        if not any(k.startswith(f"{r['id']}/") for k in labels):
            continue
        new = relabel(r["trace"])
        for old_node, new_node in zip(r["trace"]["nodes"], new["nodes"], strict=True):
            recorded[f"{r['id']}/{old_node['id']}"] = old_node
            relabelled[f"{r['id']}/{new_node['id']}"] = new_node
    supported = sum(labels.values())
    print(f"{supported} of the {len(labels)} labelled nodes are supported by their passage")
    for rule, nodes in ((2, recorded), (LABEL_RULE, relabelled)):
        confirmed = [k for k in labels if nodes[k]["meta"].get("status") in CONFIRMED]
        right = sum(labels[k] for k in confirmed)
        share = right / len(confirmed) if confirmed else float("nan")
        wrong = sorted(k for k in confirmed if not labels[k])
        print(
            f"rule {rule}: {len(confirmed)} confirmed, {right} of them supported ({share:.0%}); "
            f"confirmed but not supported: {', '.join(wrong) or 'none'}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("sample", "score"))
    args = ap.parse_args()
    sample() if args.step == "sample" else score()


if __name__ == "__main__":
    main()
