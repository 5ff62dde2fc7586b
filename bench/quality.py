"""Answer quality of every method on the shared benchmarks, beside the papers' numbers.

One resumable ``searchain eval`` run per data set (all its methods answer the same items, one
after another), under ``results/quality/<model>/<set>/``; then one table per set: each
method's score with its 95 % bootstrap interval, the paper's number, and the paired difference
to the set's proposed method (SearChain, REBEL, Think&Cite) on the same items — the figure
that says whether the papers' ordering holds here — and the failure taxonomy
(``searchain.eval.taxonomy``): for each wrong item, the first place it went wrong.

    .venv/bin/python -m bench.quality run --sets hotpotqa,musique --limit 50 \\
        --model qwen2.5-coder-1.5b            # resumable: re-run to continue
    .venv/bin/python -m bench.quality table --model qwen2.5-coder-1.5b [--png out.png]
    .venv/bin/python -m bench.quality prepare --sets strategyqa,fever  # what run builds first

The sets and what the papers reported on them: ``searchain.eval.recipes``. Splits
(``searchain.eval.splits``): the reported items are the seed-0 subsample of ``--limit``
(``--split report``, the default). ``--split tune`` writes the data set's other items to
``results/quality/splits/`` and runs on those, so prompt and threshold work never sees a
reported item.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from bench.kit import DATA, RESULTS_DIR, ROOT, SEARCHAIN
from bench.quality_sections import chart, costs, knowledge_sources
from searchain.eval import report as rep
from searchain.eval.compare import item_scores, paired_difference
from searchain.eval.recipes import RECIPES, Recipe, examples, golds, paper_pins
from searchain.eval.rescore import gold_of, rescore_records
from searchain.eval.splits import SplitError, tune_split
from searchain.eval.taxonomy import markdown, tabulate

RESULTS = RESULTS_DIR / "quality"


def run_dir(root: Path, model: str, name: str, split: str) -> Path:
    return root / model / (name if split == "report" else f"{name}-tune")


def _index_for(recipe: Recipe, root: Path) -> list[str]:
    """``--index DIR`` for a recipe with its own corpus, building the index once."""
    if recipe.corpus is None:
        return []
    out = root / "indexes" / Path(recipe.corpus).stem
    if not out.is_dir() or not any(out.iterdir()):
        subprocess.run([*SEARCHAIN, "index", str(DATA / recipe.corpus), "--out", str(out)],
                       check=True, stdout=sys.stderr)  # fmt: skip
    return ["--index", str(out)]


def strategyqa_facts_index(root: Path) -> Path:
    """A BM25 index of every StrategyQA question's annotated facts (one passage per fact,
    titled by the question's term): the offline stand-in for the paper's Wikipedia, as the
    pooled contexts are for HotpotQA — each question's evidence among all the others'."""
    out = root / "indexes" / "strategyqa-facts"
    if out.is_dir() and any(out.iterdir()):
        return out
    rows = json.loads((DATA / "strategyqa" / "strategyqa_dev.json").read_text(encoding="utf-8"))
    corpus = root / "indexes" / "strategyqa-facts.jsonl"
    corpus.parent.mkdir(parents=True, exist_ok=True)
    corpus.write_text("".join(
        json.dumps({"id": f"{r['qid']}-{i}", "title": r["term"], "text": fact}) + "\n"
        for r in rows for i, fact in enumerate(r["facts"])), encoding="utf-8")  # fmt: skip
    subprocess.run([*SEARCHAIN, "index", str(corpus), "--out", str(out)],
                   check=True, stdout=sys.stderr)  # fmt: skip
    return out


def fever_in_pool(root: Path) -> Path:
    """FEVER's SUPPORTS/REFUTES claims that the offline corpus can decide: some evidence set
    lies wholly in paragraphs of the demo index (HotpotQA's pooled Wikipedia leads), each
    sentence id within its paragraph's sentence count. FEVER ships no evidence text, and a
    claim whose evidence is not in the corpus measures the corpus, not the method; the paper
    searched all of Wikipedia. The file keeps FEVER's own lines, so ids and golds stay."""
    from searchain.citations import split_sentences
    from searchain.eval.datasets.fever import wikipedia_title
    from searchain.retrieval import read_documents
    from searchain.retrieval.demo import demo_corpus_path

    out = root / "indexes" / "fever-in-pool.jsonl"
    if out.is_file():
        return out
    sentences = {d.title: len(split_sentences(d.text)) for d in read_documents(demo_corpus_path())}

    def decidable(group: list) -> bool:
        return bool(group) and all(
            isinstance(ev[3], int) and ev[3] < sentences.get(wikipedia_title(str(ev[2])), 0)
            for ev in group
        )

    keep = []
    for line in (DATA / "fever" / "paper_dev.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["label"] != "NOT ENOUGH INFO" and any(decidable(g) for g in row["evidence"]):
            keep.append(line + "\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(keep), encoding="utf-8")
    return out


def _prepared(recipe: Recipe, root: Path, limit: int) -> tuple[str | None, list[str]]:
    """A recipe's own item file and eval arguments (None, []: the named data set as is)."""
    if recipe.prepare == "sqa-facts":
        return None, ["--index", str(strategyqa_facts_index(root))]
    if recipe.prepare == "fever-pool":
        return str(fever_in_pool(root)), []
    if recipe.prepare != "cc-facts":
        return None, []
    spec = importlib.util.spec_from_file_location("rebel_cc", ROOT / "scripts/rebel_cc_table.py")
    assert spec and spec.loader
    cc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cc)
    data = root / "indexes" / f"cc5-{limit}"
    data.mkdir(parents=True, exist_ok=True)
    subset, _ = cc.write_subset(data, limit // len(cc.CATEGORIES), seed=0)
    return str(subset), ["--index", str(cc.build_facts_index(data))]


def _arms(recipe: Recipe) -> tuple[tuple[str | None, tuple[str, ...]], ...]:
    return recipe.arms or ((None, ()),)


def _fill(arg: str, mirror: str | None, wiki_index: Path | None) -> str:
    if "{wiki_index}" in arg and wiki_index is None:
        raise SystemExit(
            "this recipe's BM25 arm needs --wiki-index DIR: a `searchain index` of a "
            "Wikipedia dump (none is bundled; the paper used the Dec 2018 one)"
        )
    return arg.replace("{mirror}", mirror or "").replace("{wiki_index}", str(wiki_index))


def run(args: argparse.Namespace) -> int:
    """Run (or resume) each set; the exit status is the worst of the evals'."""
    from searchain.retrieval.demo import demo_corpus_path
    from searchain.retrieval.llm_url.mirror import MirrorCorpus, MirrorServer

    worst = 0
    for name in args.sets.split(","):
        recipe = RECIPES[name]
        methods = args.methods or ("direct-retrieval" if recipe.arms else ",".join(recipe.methods))
        own, prepared = _prepared(recipe, args.root, args.limit)
        dataset = (
            str(tune_split(recipe, args.limit, args.root))
            if args.split == "tune"
            else own or recipe.dataset
        )
        for arm, arm_args in _arms(recipe):
            out = run_dir(args.root, args.model, name, args.split)
            mirror = None
            if any("{mirror}" in a for a in arm_args):  # the offline Wikipedia, in-process
                # a fixed port: the URL is part of the run's configuration, checked on resume
                pages = MirrorCorpus.from_files([demo_corpus_path()])
                mirror = MirrorServer(pages, port=args.mirror_port).start()
            try:
                filled = [_fill(a, mirror.url if mirror else None, args.wiki_index)
                          for a in (*recipe.eval_args, *arm_args)]  # fmt: skip
                cmd = [*SEARCHAIN, "eval", "--dataset", dataset,
                       "--methods", methods, "--limit", str(recipe.limit or args.limit),
                       "--seed", "0",
                       "--model", args.model, "--api", args.api, "--concurrency", "1",
                       "--out", str(out / arm if arm else out),
                       *_index_for(recipe, args.root), *prepared, *filled,
                       *paper_pins(methods)]  # fmt: skip
                grown = run_dir(args.root, args.model, recipe.grow_from or "", args.split)
                target = out / arm if arm else out
                if recipe.grow_from and not (target / "results.jsonl").exists():
                    cmd += ["--reuse-from", str(grown / arm if arm else grown)]
                elif args.reuse_from and not (target / "results.jsonl").exists():
                    cmd += ["--reuse-from", str(args.reuse_from / arm if arm else args.reuse_from)]
                print("$", " ".join(cmd), flush=True)
                env = {**os.environ, "SEARCHAIN_THREADS": os.environ.get("SEARCHAIN_THREADS", "1")}
                worst = max(worst, subprocess.run(cmd, check=False, env=env).returncode)
            finally:
                if mirror:
                    mirror.stop()
    return worst


def _records(run_path: Path, recipe: Recipe) -> list[dict]:
    """The run's records scored by today's scoring (as ``searchain report --rescore``, with
    the golds of the recipe's data set: item ids are stable across subsets); a retriever
    comparison's arms relabelled as its methods."""
    by_id = {e.id: gold_of(e) for e in examples(recipe.dataset)}
    if not recipe.arms:
        return rescore_records(rep.load([run_path])[0].records, by_id)
    out = []
    for arm, _ in recipe.arms:
        if (run_path / arm / "results.jsonl").exists():
            records = rescore_records(rep.load([run_path / arm])[0].records, by_id)
            out += [{**r, "method": arm} for r in records]
    return out


def table(run_path: Path, recipe: Recipe, seed: int = 0, run: list[dict] | None = None) -> str:
    """The Markdown section of one set's run: scores with CIs, the paper's numbers, paired
    differences to the focus method, and the failure taxonomy. ``run``: its records, when the
    caller has already read and scored them."""
    run = _records(run_path, recipe) if run is None else run
    # the items every method answered
    records = rep.paired(rep.RunRecords(run_path.name, run)).records
    rows = {r.method: r for r in rep.summarize([rep.RunRecords(run_path.name, records)], seed)}
    scores = item_scores(records, recipe.metric)
    lines = [f"### {run_path.parent.name} / {run_path.name}: {recipe.metric}, "
             f"{len({r['id'] for r in records})} items every method answered", "",
             f"| method | ours (95 % CI) | paper ({recipe.paper_source}) | "
             f"paired Δ vs {recipe.focus} (95 % CI) | wins / losses |",
             "|---|---|---|---|---|"]  # fmt: skip
    for method in [m for m in recipe.methods if m in rows]:
        cell = rows[method].metrics.get(recipe.metric)
        paper = recipe.paper.get(method, "–")
        diff = None if method == recipe.focus else paired_difference(
            scores, method, recipe.focus, recipe.metric, seed=seed)  # fmt: skip
        d = f"{diff}{' *' if diff.significant else ''}" if diff else "–"
        wl = f"{diff.wins} / {diff.losses}" if diff else "–"
        lines.append(f"| {method} | {cell if cell else '–'} | {paper} | {d} | {wl} |")
    lines += _span_metrics(records, rows, recipe, seed)
    if recipe.also:
        lines += [
            "",
            f"| method | {' | '.join(recipe.also)} |",
            "|---" * (len(recipe.also) + 1) + "|",
        ]
        for method in [m for m in recipe.methods if m in rows]:
            cells = [str(rows[method].metrics.get(m) or "–") for m in recipe.also]
            lines.append(f"| {method} | {' | '.join(cells)} |")
    lines += costs(records, [m for m in recipe.methods if m in rows], recipe.focus)
    lines += knowledge_sources(records, [m for m in recipe.methods if m in rows])
    lines += ["", "Δ = method − focus on the same items, in points; * = the 95 % interval "
              "excludes 0.", "", "Failure taxonomy (first place a wrong item went wrong):", "",
              markdown(tabulate(records, golds(recipe), recipe.metric))]  # fmt: skip
    return "\n".join(lines)


def _span_metrics(records: list[dict], rows: dict, recipe: Recipe, seed: int) -> list[str]:
    """Rankings can change with the metric: the recipe's metrics (strict EM, F1 and cover-EM
    for span answers) of every method, each with its CI and its paired difference to the
    focus method (not for a label task: its one metric is its accuracy)."""
    if recipe.metric == "accuracy":
        return []
    metrics = recipe.metrics
    methods = [m for m in recipe.methods if m in rows]
    head = " | ".join(f"{m} (95 % CI) | Δ {m} vs {recipe.focus}" for m in metrics)
    lines = ["", f"| method | {head} |", "|---" * (1 + 2 * len(metrics)) + "|"]
    by_metric = {m: item_scores(records, m) for m in metrics}
    for method in methods:
        cells = []
        for metric in metrics:
            cell = rows[method].metrics.get(metric)
            diff = None if method == recipe.focus else paired_difference(
                by_metric[metric], method, recipe.focus, metric, seed=seed)  # fmt: skip
            cells += [str(cell) if cell else "–",
                      f"{diff}{' *' if diff.significant else ''}" if diff else "–"]  # fmt: skip
        lines.append(f"| {method} | {' | '.join(cells)} |")
    return lines


def has_run(path: Path) -> bool:
    """Whether a set's directory holds a run (a retriever comparison: one per arm)."""
    return (path / "results.jsonl").exists() or any(path.glob("*/results.jsonl"))


def tables_page(model: str, sets: str, text: str) -> str:
    """``results/quality/<model>/README.md``: the tables and the commands that made them;
    tests/bench/test_quality.py checks that it is what the committed runs say."""
    return (
        f"# Quality runs of {model}\n\nMade by (re-run the first to resume or grow a run):\n\n"
        f"```bash\nSEARCHAIN_THREADS=1 .venv/bin/python -m bench.quality run --sets {sets} "
        f"--limit 50 --model {model}\n.venv/bin/python -m bench.quality table --sets {sets} "
        f"--model {model} --write\n```\n\nSets named `-100` take 100 items (their recipe's "
        f"limit, a superset of the 50 grown with `--reuse-from`). Partial runs are reported on "
        f"the items every "
        f"method answered; the count is in each heading.\n\n![scores with 95 % CIs beside "
        f"the papers'](quality.png)\n\n{text}\n"
    )


def tables(args: argparse.Namespace) -> int:
    out: list[str] = []
    panels: list[tuple[rep.RunRecords, Recipe]] = []
    for name in args.sets.split(","):
        path = run_dir(args.root, args.model, name, args.split)
        if has_run(path):
            records = _records(path, RECIPES[name])  # read and scored once for both
            out.append(table(path, RECIPES[name], run=records))
            panels.append((rep.RunRecords(name, records), RECIPES[name]))
    text = "\n\n".join(out) or "(no runs yet)"
    print(text)
    if args.write and out:
        page = args.root / args.model / "README.md"
        page.write_text(tables_page(args.model, args.sets, text), encoding="utf-8")
        print(f"wrote {page} and {chart(panels, page.parent / 'quality.png')}")
    if args.png and out:
        print(f"chart: {chart(panels, args.png)}")
    return 0


def prepare(args: argparse.Namespace) -> int:
    """Build what each set's run needs before it answers (its own item file, its search
    index), once; print where they are, a JSON line per set (the indexer talks on stderr)."""
    for name in args.sets.split(","):
        recipe = RECIPES[name]
        own, prepared = _prepared(recipe, args.root, args.limit)
        eval_args = [*_index_for(recipe, args.root), *prepared]
        print(json.dumps({"set": name, "items": own or recipe.dataset, "eval_args": eval_args}))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("command", choices=("run", "table", "prepare"))
    p.add_argument("--sets", default="hotpotqa,musique", help=f"of {', '.join(RECIPES)}")
    p.add_argument("--model", default="qwen2.5-coder-1.5b")
    p.add_argument("--api", default="auto")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--methods", default=None, help="override the recipe's methods")
    p.add_argument("--split", choices=("report", "tune"), default="report")
    p.add_argument("--png", default=None, help="table: also write a bar chart here")
    p.add_argument("--root", type=Path, default=RESULTS, help="where the runs live")
    p.add_argument("--wiki-index", type=Path, default=None,
                   help="webq-llm-url: a BM25 index of Wikipedia for its BM25 arm")  # fmt: skip
    p.add_argument("--mirror-port", type=int, default=8765, help="llm-url: the mirror's port")
    p.add_argument("--reuse-from", type=Path, default=None,
                   help="run: start from this run's records of the methods whose settings "
                   "did not change (one set; searchain eval --reuse-from)")  # fmt: skip
    p.add_argument("--write", action="store_true",
                   help="table: also write <root>/<model>/README.md")  # fmt: skip
    args = p.parse_args(argv)
    try:
        return {"run": run, "table": tables, "prepare": prepare}[args.command](args)
    except SplitError as e:  # a tune split that could hold a reported or held-out item
        raise SystemExit(str(e)) from None


if __name__ == "__main__":
    sys.exit(main())
