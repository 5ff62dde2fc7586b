"""Judge a method change on tune items: the paired difference it makes, before it touches a
reported run.

A change (an option, a prompt, a threshold) is run on the quality bench's tune split — the
data set's items outside every reported seed-0 subsample (HotpotQA: the 100 of HotpotQA-100)
and its frozen held-out split (``../shared/splits``) — next to the unchanged
method on the same items, each in its own resumable run directory
``results/quality/<model>/tune/<set>-<name>/``. ``compare`` prints each run's score with its
95 % bootstrap interval, the paired difference variant − baseline with its interval and the
items won and lost, the failure taxonomy of both, and every item whose answer changed.

    SEARCHAIN_THREADS=1 .venv/bin/python -m bench.tune run --set hotpotqa --name searchain
    SEARCHAIN_THREADS=1 .venv/bin/python -m bench.tune run --set hotpotqa --name demos \\
        -O searchain.tracing_context=demos
    .venv/bin/python -m bench.tune compare --set hotpotqa searchain demos
    .venv/bin/python -m bench.tune page --write      # the committed page of comparisons

Round calls that a variant shares with its baseline come from the LLM call cache, so a
change to a late step (tracing, say) costs only that step.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from bench.kit import SEARCHAIN
from bench.quality import RESULTS, _index_for, _prepared, _records
from searchain.eval import report as rep
from searchain.eval.analyses import one_hop_lines
from searchain.eval.compare import item_scores, paired_difference
from searchain.eval.recipes import RECIPES, golds
from searchain.eval.splits import SplitError, tune_split
from searchain.eval.taxonomy import markdown, tabulate

# Scores shown beside the set's own metric when the records have them: token F1 gives
# partial credit ("Thomas Mann" for "Paul Thomas Mann"), so it moves where cover-EM cannot.
ALSO = ("f1", "cover_em_content")
REPORTED = 50  # the reported subsample the tune split leaves out (bench.quality's --limit)


def tune_dir(root: Path, model: str, name: str, variant: str) -> Path:
    return root / model / "tune" / f"{name}-{variant}"


def run(args: argparse.Namespace) -> int:
    recipe = RECIPES[args.set]
    try:
        split = tune_split(recipe, REPORTED, args.root)
    except SplitError as e:  # a split that could hold a reported or held-out item
        raise SystemExit(str(e)) from None
    out = tune_dir(args.root, args.model, args.set, args.name)
    options = [x for o in args.option for x in ("-O", o)]
    _, prepared = _prepared(recipe, args.root, REPORTED)  # its search index, if it has one
    cmd = [*SEARCHAIN, "eval", "--dataset", str(split),
           "--methods", args.methods, "--limit", str(args.limit), "--seed", "0",
           "--model", args.model, "--api", args.api, "--concurrency", "1", "--out", str(out),
           *_index_for(recipe, args.root), *prepared, *recipe.eval_args, *options]  # fmt: skip
    if args.retriever:
        cmd += ["--retriever", args.retriever]
    print("$", " ".join(cmd), flush=True)
    env = {**os.environ, "SEARCHAIN_THREADS": os.environ.get("SEARCHAIN_THREADS", "1")}
    return subprocess.run(cmd, check=False, env=env).returncode


def compare_text(root: Path, model: str, name: str, base: str, variant: str,
                 methods: list[str] | None = None, seed: int = 0) -> str:  # fmt: skip
    """The Markdown comparison of two tune runs of the same set, on the items both have."""
    recipe = RECIPES[name]
    runs = {v: _records(tune_dir(root, model, name, v), recipe) for v in (base, variant)}
    shared = set.intersection(*({(r["method"], r["id"]) for r in rs} for rs in runs.values()))
    if methods:
        shared = {(m, i) for m, i in shared if m in methods}
    kept = {v: [r for r in rs if (r["method"], r["id"]) in shared] for v, rs in runs.items()}
    metrics = [recipe.metric, *(m for m in ALSO if m != recipe.metric and any(
        m in (r.get("metrics") or {}) for rs in kept.values() for r in rs))]  # fmt: skip
    lines = [f"### {name} tune items: {variant} vs {base}", "",
             f"| method | metric | items | {base} (95 % CI) | {variant} (95 % CI) | "
             f"paired Δ {variant} − {base} (95 % CI) | wins / losses |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    rows = {v: {r.method: r for r in rep.summarize([rep.RunRecords(v, rs)], seed)}
            for v, rs in kept.items()}  # fmt: skip
    for method in sorted({m for m, _ in shared}):
        for metric in metrics:
            scores = {v: item_scores([r for r in kept[v] if r["method"] == method],
                                     metric).get(method, {}) for v in kept}  # fmt: skip
            diff = paired_difference(scores, variant, base, metric, seed=seed)
            if diff is None:
                continue
            star = " *" if diff.significant else ""
            cells = [str(rows[v][method].metrics.get(metric, "–")) for v in (base, variant)]
            lines.append(f"| {method} | {metric} | {diff.items} | {cells[0]} | {cells[1]} | "
                         f"{diff}{star} | {diff.wins} / {diff.losses} |")  # fmt: skip
    if hops := one_hop_lines(kept):
        lines += ["", *hops]
    by_id = golds(recipe)
    for v in (base, variant):
        lines += ["", f"Failure taxonomy, {v}:", "",
                  markdown(tabulate(kept[v], by_id, recipe.metric)).rstrip()]  # fmt: skip
    answers = {v: {(r["method"], r["id"]): r for r in rs} for v, rs in kept.items()}
    changed = []
    for key in sorted(shared):
        a, b = answers[base][key], answers[variant][key]
        ta, tb = (x.get("trace") or {} for x in (a, b))
        if ta.get("answer") != tb.get("answer"):
            sa = (a.get("metrics") or {}).get(recipe.metric, 0)
            sb = (b.get("metrics") or {}).get(recipe.metric, 0)
            gold = ", ".join(by_id[key[1]].answers) if key[1] in by_id else "?"
            changed.append(f"| {key[0]} | {key[1]} | {ta.get('answer')!r} ({sa:g}) | "
                           f"{tb.get('answer')!r} ({sb:g}) | {gold} |")  # fmt: skip
    lines += ["", f"Answers that changed ({len(changed)}):", "",
              f"| method | item | {base} | {variant} | gold |", "|---|---|---|---|---|",
              *changed]  # fmt: skip
    return "\n".join(lines) + "\n"


# The comparisons on the committed tune page: (set, baseline, variant, what the variant is).
PAGE = (
    ("hotpotqa", "searchain", "paper",
     "the paper's defaults, re-run after two fixes that make no LLM call (a tracing reply that "
     "copies its prompt is answered from the verified path; a quoted answer is not cut at its "
     "'!'); the baseline `searchain` ran before them, so only those two steps differ"),
    ("hotpotqa", "paper", "demos", "`-O searchain.tracing_context=demos`"),
    ("hotpotqa", "paper", "alone", "`-O searchain.tracing_context=alone`"),
    ("hotpotqa", "paper", "aiq", "`-O searchain.answer_in_query=ignore`"),
    ("hotpotqa", "paper40", "retry40",
     "`-O searchain.echo_retry=alone` on 40 tune items (`--limit 40`; `paper40` is the paper's "
     "defaults on the same 40): a tracing reply that copies the turn is asked again alone "
     "before the verified-path fallback"),
    ("hotpotqa", "paper", "question-last",
     "`-O searchain.question_position=last`: the CoQ instruction without its inline question, "
     "the demos, then the question, so the instruction and demos are one static prefix "
     "prefilled once (issue 31); run with this session's local backend (a 32-position batch "
     "grid instead of 64, which gives the same logits for batches of 8 tokens or more)"),
    ("hotpotqa", "yesno-span", "yesno-nli",
     "`-O searchain.yesno_check=nli` against `span` (the default), on 30 yes/no HotpotQA "
     "items of the calibration split (`results/calibration/splits/hotpotqa-calibration-yesno"
     ".jsonl`, `--limit 30 --seed 0`, the default question-last prompt; none of them "
     "reported): a node answered Yes or No is checked by whether its passage supports that "
     "answer or the opposite (the LLM judge), not by the reader's span; the span arm ran "
     "second, its shared calls from the call cache"),
    ("strategyqa", "plain", "labelled",
     "the chat tracing turn asks the question with its label instruction and names the labels "
     "(`label_in_tracing`, on by default since); `plain` is `-O searchain.label_in_tracing=false`"),
)  # fmt: skip


def page_text(root: Path, model: str) -> str:
    """``results/quality/<model>/tune/README.md``: every comparison of :data:`PAGE`."""
    how = f"`.venv/bin/python -m bench.tune page --model {model} --write`"
    parts = [f"# Tune-split comparisons of {model}", "",
             "Each change judged on the tune items (the data set's items outside the reported "
             "seed-0 subsample of 50; 20 of them unless said) by the paired difference it "
             f"makes, before any reported run uses it. Regenerate with {how}; runs: "
             "`bench/tune.py run` (see its docstring).", "",
             "The comparisons on the tune split ran on it before issue 50, when it left out "
             "only the reported 50: 4 of the first 20 tune items (7 of the first 40) are "
             "HotpotQA-100 items. The split now leaves out HotpotQA-100 and the frozen "
             "held-out 160 too."]  # fmt: skip
    for name, base, variant, what in PAGE:
        parts += ["", f"**{variant}**: {what}.", "",
                  compare_text(root, model, name, base, variant).rstrip()]  # fmt: skip
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("command", choices=("run", "compare", "page"))
    p.add_argument("runs", nargs="*", help="compare: BASELINE VARIANT (their --name)")
    p.add_argument("--set", default="hotpotqa", help=f"of {', '.join(RECIPES)}")
    p.add_argument("--name", default="searchain", help="run: this variant's name")
    p.add_argument("--methods", default="searchain")
    p.add_argument("--model", default="qwen2.5-coder-1.5b")
    p.add_argument("--api", default="auto")
    p.add_argument("--limit", type=int, default=20, help="tune items (seed-0 subsample)")
    p.add_argument("-O", "--option", action="append", default=[],
                   help="run: METHOD.KEY=VALUE, as searchain eval -O")  # fmt: skip
    p.add_argument(
        "--retriever",
        default=None,
        help="run: the retriever (eval's default, bm25, when not given)",
    )
    p.add_argument("--root", type=Path, default=RESULTS)
    p.add_argument("--out", type=Path, default=None, help="compare: also write it here")
    p.add_argument("--write", action="store_true", help="page: write <root>/<model>/tune/README.md")
    args = p.parse_intermixed_args(argv)
    if args.command == "run":
        return run(args)
    if args.command == "page":
        text = page_text(args.root, args.model)
        print(text)
        if args.write:
            (args.root / args.model / "tune" / "README.md").write_text(text, encoding="utf-8")
        return 0
    if len(args.runs) != 2:
        p.error("compare needs two run names: BASELINE VARIANT")
    text = compare_text(args.root, args.model, args.set, *args.runs,
                        methods=args.methods.split(","))  # fmt: skip
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
