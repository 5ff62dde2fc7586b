"""SearChain's node labels in recorded runs, relabelled by the current rule (issue 47).

Labels change no node's answer and no path: a recorded trace holds everything the rule reads
(the node's query and answer, its reader's span and confidence, its passage, θ). So each run is
relabelled as the current code would have labelled it, and audited: a node labelled verified
must have had a confident reader whose span is not drawn from the node's query (outside a
choice's pick from a passage that states the comparison) and agrees with the node's answer,
naming nothing different; a node labelled corrected or completed must hold a confident span
of its passage that is not drawn from its query (methods/searchain/node_labels.py). For each
run: the labels before and after, and the confirmed nodes that break the rule, before and
after. (A relabelled copy of a run made with the evidence step is a relabelling only: its
answers were written from the labels it was made with.) On MuSiQue, whose items
carry their gold decomposition, also the share of verified nodes whose answer is one of the
item's gold sub-answers (cover-EM), before and after.

    .venv/bin/python -m bench.node_labels                # the four recorded runs
    .venv/bin/python -m bench.node_labels RUN [RUN ...]  # others
    .venv/bin/python -m bench.node_labels --pairs \\
        results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration
        # the confident (node, span) pairs that the rule's agreement threshold decides, on
        # calibration items only: how AGREEMENT_F1 was chosen
    .venv/bin/python -m bench.node_labels RUN --write OUT  # a relabelled copy of RUN

With ``--against OLD_RUN`` it also lists the items whose answer differs from an older run's.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
from pathlib import Path
from typing import Any

from bench.kit import DATA, ROOT
from searchain.eval.runner import MANIFEST, read_results
from searchain.methods.searchain.node_labels import (
    FIRST_LABEL_RULE,
    LABEL_RULE,
    agreement,
    choice_pick,
    drawn_from_query,
    ir_label,
    label,
)
from searchain.readers.base import ReaderOutput
from searchain.scoring.match import cover_em
from searchain.types import Passage

RUNS = [
    "results/quality/qwen2.5-coder-1.5b/hotpotqa-100",
    "results/confidence/hotpotqa-100-new",
    "results/calibration/qwen2.5-coder-1.5b/hotpotqa-calibration",
    "results/quality/qwen2.5-coder-1.5b/musique-100",
]
MUSIQUE = DATA / "musique" / "musique_train.json"
CHECKED = ("verified", "unconfirmed")
IR_KIND = {"ir-corrected": "verify", "ir-completed": "complete"}  # node source: feedback kind


def _checked_nodes(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Nodes IR read (an NLI-judged yes/no node aside): those left as the model wrote them
    and those IR corrected or completed."""
    return [
        n
        for n in trace["nodes"]
        if (n["meta"].get("status") in CHECKED or n["source"] in IR_KIND)
        and "nli" not in n["meta"]
        and n["meta"].get("reader")
    ]


def _passage(node: dict[str, Any]) -> str:
    """The passage the reader read, as it was shown (title first)."""
    if not node.get("passages"):
        return ""
    p = node["passages"][0]
    return Passage(id=p.get("id", ""), text=p.get("text", ""), title=p.get("title", "")).render()


def _relabelled(node: dict[str, Any], theta: float, verification: bool) -> Any:
    """The node's label by the current rule."""
    reader = _reader(node)
    if node["source"] in IR_KIND:
        return ir_label(
            IR_KIND[node["source"]], node["query"], reader, theta, passage=_passage(node)
        )
    answer = node["answer"] or ""
    return label(node["query"], answer, reader, theta, verification, passage=_passage(node))


def _reader(node: dict[str, Any]) -> ReaderOutput:
    out = ReaderOutput.from_dict(node["meta"]["reader"])
    if node["meta"]["reader"].get("set_aside"):  # answer_in_query="ignore" set it aside
        out.answer, out.confidence = "", float("-inf")
    return out


def relabel(trace: dict[str, Any]) -> dict[str, Any]:
    """``trace`` as the current rule labels it."""
    trace = copy.deepcopy(trace)
    theta = trace["meta"].get("theta")
    verification = "no-verification" not in trace["method"]
    for node in _checked_nodes(trace):
        found = _relabelled(node, theta, verification)
        node["meta"]["status"] = found.status
        node["meta"].pop("check", None)
        if found.check is not None:
            node["meta"]["check"] = found.check
    trace["meta"]["label_rule"] = LABEL_RULE
    return trace


CONFIRMED = ("verified", "corrected", "completed")


def overclaimed(node: dict[str, Any], theta: float | None) -> str | None:
    """Why a node labelled verified, corrected or completed breaks the current rule (what the
    rule finds, its wording's detail after a colon left out), or None when it keeps it."""
    if node["meta"].get("status") not in CONFIRMED or "nli" in node["meta"]:
        return None
    if not node["meta"].get("reader"):
        return "no reader output"
    found = _relabelled(node, float("-inf") if theta is None else theta, True)
    if found.status != "unconfirmed":
        return None
    why = (found.check or "").split(": ")[0]
    return f"{node['meta']['status']}: {why}"


def _sub_answers() -> dict[str, list[str]]:
    items = json.loads(MUSIQUE.read_text())
    return {i["id"]: [d["answer"] for d in i["question_decomposition"]] for i in items}


def _tally(records: list[dict[str, Any]], golds: dict[str, list[str]] | None) -> dict[str, Any]:
    labels: collections.Counter[str] = collections.Counter()
    broken: collections.Counter[str] = collections.Counter()
    right = 0
    for r in records:
        trace = r["trace"]
        for node in trace["nodes"]:
            status = node["meta"].get("status")
            if node["source"] == "question" or status is None:
                continue
            labels[status] += 1
            if why := overclaimed(node, trace["meta"].get("theta")):
                broken[why] += 1
            if golds is not None and status == "verified":
                right += cover_em(node["answer"] or "", golds.get(r["id"], []))
    out = {"labels": dict(labels), "confirmed_breaking_the_rule": dict(broken)}
    if golds is not None:
        out["verified_right"] = [int(right), labels["verified"]]
    return out


def searchain_records(run: Path) -> list[dict[str, Any]]:
    return [
        r
        for r in read_results(run)
        if r.get("method", "").startswith("searchain") and r.get("status") == "ok"
    ]


def compare(run: Path) -> dict[str, Any]:
    records = searchain_records(run)
    golds = _sub_answers() if "musique" in run.name else None
    after = [{**r, "trace": relabel(r["trace"])} for r in records]
    rule = records[0]["trace"]["meta"].get("label_rule", FIRST_LABEL_RULE) if records else None
    return {
        "run": str(run),
        "items": len(records),
        "recorded_rule": rule,
        "before": _tally(records, golds),
        "after": _tally(after, golds),
    }


def pairs(run: Path) -> None:
    """The confident pairs whose span the paper's rule finds in the node's answer and that
    the agreement threshold decides (neither the whole of the node's own words nor drawn
    from its query): what AGREEMENT_F1 is chosen on. Only ever run on calibration items."""
    for r in searchain_records(run):
        theta = r["trace"]["meta"].get("theta")
        for node in _checked_nodes(r["trace"]):
            out = _reader(node)
            query, answer = node["query"], node["answer"] or ""
            if node["source"] in IR_KIND or not out.grounded or out.confidence <= theta:
                continue
            if drawn_from_query(out.answer, query) or choice_pick(query, out.answer) is not None:
                continue
            score = agreement(answer, out.answer, query)
            if score < 1.0:
                print(f"{score:.2f}\t{query}\t{answer!r}\t{out.answer!r}")


def write(run: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((run / MANIFEST).read_text())
    manifest["label_rule"] = LABEL_RULE
    manifest["relabelled_from"] = str(run)
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    with (out / "results.jsonl").open("w") as f:
        for r in read_results(run):
            if r.get("method", "").startswith("searchain") and r.get("status") == "ok":
                r = {**r, "trace": relabel(r["trace"])}
            f.write(json.dumps(r) + "\n")


def changed_answers(run: Path, older: Path) -> None:
    """The items whose answer differs between ``run`` and an older run of the same items."""
    new = {r["id"]: r["trace"]["answer"] for r in searchain_records(run)}
    old = {r["id"]: r["trace"]["answer"] for r in searchain_records(older)}
    shared = [i for i in new if i in old]
    changed = [i for i in shared if new[i].strip() != old[i].strip()]
    print(f"against {older.name}: {len(shared)} shared items, {len(changed)} answers differ")
    for i in changed:
        print(f"  {i}: {old[i]!r} -> {new[i]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="*", type=Path)
    parser.add_argument("--pairs", action="store_true", help="list the pairs AGREEMENT_F1 decides")
    parser.add_argument("--write", type=Path, help="write a relabelled copy of the one RUN here")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--against", type=Path, help="an older run of the same items")
    args = parser.parse_args()
    runs = args.runs or [ROOT / r for r in RUNS]
    if args.pairs:
        return pairs(runs[0])
    if args.write:
        return write(runs[0], args.write)
    if args.against:
        return changed_answers(runs[0], args.against)
    rows = [compare(run) for run in runs]
    if args.json:
        print(json.dumps(rows, indent=2))
        return None
    for row in rows:
        print(
            f"{row['run']}: {row['items']} SearChain items, labelled by rule {row['recorded_rule']}"
        )
        for when in ("before", "after"):
            t = row[when]
            broken = sum(t["confirmed_breaking_the_rule"].values())
            line = f"  {when:6} labels {t['labels']}; confirmed breaking the rule: {broken}"
            if broken:
                line += f" {t['confirmed_breaking_the_rule']}"
            if "verified_right" in t:
                got, of = t["verified_right"]
                line += f"; verified right {got}/{of} ({100 * got / max(of, 1):.1f} %)"
            print(line)
    return None


if __name__ == "__main__":
    main()
