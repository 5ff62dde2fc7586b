"""How far to trust answers to documentation questions: each answer's confidence against the
naive one, on a real-documentation bench run (issue 61's targets, scored on the frozen git-doc
run once, after it is answered; any other set for a dry run).

Per arm: the confidence each answer's trace recorded when it was made (what ``ask`` showed),
labelled by the short-answer golds (``alias_match``, the set's own rule); the **naive
confidence** beside it, the mean token log-probability of the answer as the model's reply to
the question alone (one scoring call an answer, ``assessment.naive_logprob``; kept in
``<arm>.naive.jsonl`` beside the records, so an interrupted scoring resumes). Reported with
95 % bootstrap intervals on the same item resamples (paired):

* the more confident half's share right over all answers' (target ≥ 1.3 ×);
* AURC, the confidence's against the naive's (target: below it, judged on the point
  estimate; the paired CI says whether it excludes 0);
* ECE (10 bins) where every answer's confidence is a calibrated probability (target ≤ 0.15),
  else said to describe a score that is not one.

    .venv/bin/python -m bench.docs_confidence --set git-doc --arms searchain-plan \\
        --out results/real-docs/git-doc/confidence.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.kit import print_and_keep
from bench.real_docs_answers import RESULTS, load_questions
from bench.real_docs_sets import SETS
from searchain.eval.document_records import load_records, load_traces, traces_path
from searchain.eval.selective.intervals import compare
from searchain.eval.selective.metrics import naive_probability
from searchain.scoring.document_answers import rescore
from searchain.types import Trace

TARGETS = {"lift@0.5": 1.3, "ece": 0.15}


def labelled(qset_name: str, arm: str, model: str, out: Path) -> list[tuple[str, Trace, bool]]:
    """(id, trace, right by the short answer) of every finished, traced answer of ``arm``."""
    qset = SETS[qset_name]
    questions = {q["id"]: q for q in load_questions(qset)}
    records_file = qset.records(out, model) / f"{arm}.jsonl"
    records, traces = load_records(records_file), load_traces(traces_path(records_file))
    return [
        (item, Trace.from_dict(traces[item]), rescore(questions[item], r)["right_short"] >= 1.0)
        for item, r in records.items()
        if r.get("status") == "ok" and item in traces and item in questions
    ]


def naive_scores(answers: list[tuple[str, Trace, bool]], path: Path, model: str) -> list[float]:
    """Each answer's naive log-probability, read from ``path`` where already scored, else
    scored with the model (one call) and appended there."""
    done: dict[str, float] = {}
    if path.exists():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        if lines and not text.endswith("\n"):
            lines.pop()  # cut by an interruption mid-write: scored again
        for n, line in enumerate(lines, 1):
            try:
                row = json.loads(line)
                done[row["id"]] = float(row["naive_logprob"])
            except (ValueError, KeyError, TypeError) as e:
                raise SystemExit(f"{path}:{n}: not a naive-score line ({e})") from None
    todo = [(i, t) for i, t, _ in answers if i not in done]
    if todo:
        from searchain.llm import make_llm
        from searchain.scoring.confidence.assessment import naive_logprob

        llm = make_llm("local", model=model, n_threads=1, cache=False)
        with path.open("a", encoding="utf-8") as f:
            for n, (item, trace) in enumerate(todo, 1):
                value, _ = naive_logprob(llm, trace.question, trace.answer or "")
                done[item] = -99.0 if value is None else float(value)  # no answer: least sure
                f.write(json.dumps({"id": item, "naive_logprob": done[item]}) + "\n")
                f.flush()
                print(f"naive {n}/{len(todo)}: {item}", file=sys.stderr)
    return [done[i] for i, _, _ in answers]


def report(arm: str, answers: list[tuple[str, Trace, bool]], naive: list[float]) -> list[str]:
    confidence = [float(t.confidence.value) if t.confidence else 0.0 for _, t, _ in answers]
    right = [float(ok) for _, _, ok in answers]
    calibrated = all(t.confidence is not None and t.confidence.calibrated for _, t, _ in answers)
    c = compare(confidence, naive_probability(naive), right)
    lift, aurc = c.a["lift@0.5"], c.a["aurc"]
    lines = [
        f"## {arm}: {c.items} answers, {int(sum(right))} right",
        "",
        "| | value (95 % CI) | target | met |",
        "|---|---|---|---|",
        f"| more confident half's share right ÷ all answers' | {lift.value:.2f} "
        f"[{lift.lo:.2f}, {lift.hi:.2f}] | ≥ 1.3 | {_met(lift.value >= TARGETS['lift@0.5'])} |",
        f"| AURC, the confidence | {aurc.decimal()} | below the naive's | "
        f"{_met(c.difference['aurc'].value < 0)} |",
        f"| AURC, the naive confidence | {c.b['aurc'].decimal()} | | |",
        f"| AURC, confidence − naive (paired) | {c.difference['aurc'].decimal('+')} | < 0 | "
        f"CI {'excludes' if c.difference['aurc'].hi < 0 else 'includes'} 0 |",
    ]
    ece = c.a["ece"]
    if calibrated:
        lines.append(
            f"| ECE (10 bins) | {ece.decimal()} | ≤ 0.15 | {_met(ece.value <= TARGETS['ece'])} |"
        )
    else:
        lines.append(
            f"| ECE (10 bins) of a score that is not a probability here | {ece.decimal()} "
            "| (≤ 0.15 if shown as a probability) | not shown as one |"
        )
    return [*lines, ""]


def _met(ok: bool) -> str:
    return "**met**" if ok else "**missed**"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", choices=sorted(SETS), default="git-doc")
    p.add_argument("--arms", default="searchain-plan")
    p.add_argument("--model", default="qwen2.5-coder-1.5b")
    p.add_argument("--records", type=Path, default=RESULTS, help="the bench's --out")
    p.add_argument("--out", type=Path, help="write the report (Markdown) here")
    args = p.parse_args()
    lines: list[str] = [f"# Confidence on the {args.set} set", ""]
    for arm in filter(None, args.arms.split(",")):
        answers = labelled(args.set, arm, args.model, args.records)
        if len(answers) < 10:
            raise SystemExit(f"{arm}: {len(answers)} finished answers with traces: too few")
        folder = SETS[args.set].records(args.records, args.model)
        naive = naive_scores(answers, folder / f"{arm}.naive.jsonl", args.model)
        lines += report(arm, answers, naive)
    text = "\n".join(lines)
    print_and_keep(text, args.out)


if __name__ == "__main__":
    main()
