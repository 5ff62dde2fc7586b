"""Which offline model should the README's first command use? (issue 18, item 5)

For each offline model (Gemma 3 270M base, Qwen2.5-Coder 0.5B and 1.5B Instruct) it measures
what a new user meets on their first run:

* **cold start**: a fresh ``searchain ask`` of the README's demo question in a new process, with
  an empty model cache (the chunked models are assembled and sha256-checked, as on a first
  run) and an empty LLM call cache: wall seconds to the printed answer, and whether it is right;
* **right answers**: SearChain (the first command's method) on the demo questions — the README's
  two questions plus HotpotQA dev items from the tune split (never in the reported quality runs),
  all answerable from the bundled demo corpus — cover-EM with a 95 % bootstrap CI and seconds
  per question, through a resumable ``searchain eval`` run with its own call cache;
* **download**: the model file's size (what ``pip`` fetches on top of the shared install).

    SEARCHAIN_THREADS=1 .venv/bin/python -m bench.default_model run      # resumable
    .venv/bin/python -m bench.default_model table                        # Markdown
    .venv/bin/python -m bench.default_model questions                    # the demo questions

Runs live in ``results/default-model/``; ``tests/bench/test_default_model.py`` recomputes the table.
Compile time of llama.cpp (~6 min on 2 cores) is the same for every model and is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.kit import RESULTS_DIR, SEARCHAIN
from searchain.eval import report as rep
from searchain.eval.datasets import load_dataset
from searchain.llm.models import CHUNKED, DEFAULT_MODEL, MODEL_NAMES
from searchain.scoring.match import cover_em

RESULTS = RESULTS_DIR / "default-model"
README_QUESTIONS = ("5a8c7595554299585d9e36b6", "5a85b2d95542997b5ce40028")  # Corliss, Aladin
REPORTED = 100  # the quality bench reports on the seed-0 subsample of (at most) 100 items
DEMO_SIZE = 10


def demo_questions() -> list[dict[str, object]]:
    """The README's questions, then tune-split HotpotQA items, in file order."""
    everything = load_dataset("hotpotqa")
    reported = {e.id for e in load_dataset("hotpotqa", limit=REPORTED, seed=0)}
    first = [e for e in everything if e.id in README_QUESTIONS]
    rest = [e for e in everything if e.id not in reported and e.id not in README_QUESTIONS]
    return [{"id": e.id, "question": e.question, "answer": list(e.answers)}
            for e in (first + rest)[:DEMO_SIZE]]  # fmt: skip


def model_bytes(name: str) -> int:
    if name == DEFAULT_MODEL:
        from searchain.llm.local import default_model_path

        return default_model_path().stat().st_size
    return CHUNKED[name].size


def cold_ask(name: str, question: str, answers: list[str]) -> dict[str, object]:
    """One first-run ``searchain ask`` in a new process: empty model and call caches."""
    with tempfile.TemporaryDirectory() as models, tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "SEARCHAIN_MODEL_DIR": models, "SEARCHAIN_CACHE_DIR": cache}
        start = time.perf_counter()
        cmd = [*SEARCHAIN, "ask", question, "--model", name, "--json"]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{name}: searchain ask failed:\n{done.stderr[-2000:]}")
    answer = json.loads(done.stdout).get("answer", "")
    return {"model": name, "seconds": round(seconds, 1), "answer": answer,
            "right": bool(cover_em(answer, answers))}  # fmt: skip


def run(args: argparse.Namespace) -> int:
    root: Path = args.root
    root.mkdir(parents=True, exist_ok=True)
    demo = root / "demo-questions.jsonl"
    if not demo.exists():
        demo.write_text("".join(json.dumps(q) + "\n" for q in demo_questions()), encoding="utf-8")
    first = json.loads(demo.read_text(encoding="utf-8").splitlines()[0])
    cold_file = root / "cold-start.jsonl"
    done = {json.loads(ln)["model"] for ln in cold_file.read_text().splitlines()} \
        if cold_file.exists() else set()  # fmt: skip
    for name in args.models.split(","):
        if name not in done:
            row = cold_ask(name, str(first["question"]), list(first["answer"]))
            with cold_file.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
        env = {**os.environ, "SEARCHAIN_CACHE_DIR": str(root / ".cache" / name)}
        cmd = [
            *SEARCHAIN,
            "eval",
            "--dataset",
            str(demo),
            "--methods",
            "searchain",
            "--model",
            name,
            "--concurrency",
            "1",
            "--out",
            str(root / name),
        ]
        print("$", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, env=env)
    return 0


def table(root: Path = RESULTS) -> str:
    cold = {}
    if (root / "cold-start.jsonl").exists():
        for line in (root / "cold-start.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            cold[row["model"]] = row
    lines = ["| model | download | first run: demo question (s, right?) | right on the "
             f"{DEMO_SIZE} demo questions (95 % CI) | s / question (median) |",
             "|---|---|---|---|---|"]  # fmt: skip
    for name in MODEL_NAMES:
        path = root / name
        if not (path / "results.jsonl").exists():
            continue
        records = rep.load([path])[0].records
        if not records:
            continue
        [row] = rep.summarize([rep.RunRecords(name, records)])
        secs = [float(r["seconds"]) for r in records if r.get("seconds") is not None]
        c = cold.get(name)
        first = f"{c['seconds']:.0f} s, {'right' if c['right'] else 'wrong'}" if c else "–"
        lines.append(f"| {name} | {model_bytes(name) / 1e6:.0f} MB | {first} | "
                     f"{row.metrics.get('cover_em')} ({len(records)} answered) | "
                     f"{statistics.median(secs):.0f} |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("command", choices=("run", "table", "questions"))
    p.add_argument("--models", default=",".join(MODEL_NAMES))
    p.add_argument("--root", type=Path, default=RESULTS)
    p.add_argument("--write", action="store_true", help="table: also write <root>/README.md")
    args = p.parse_args(argv)
    if args.command == "run":
        return run(args)
    if args.command == "questions":  # what run writes to <root>/demo-questions.jsonl
        sys.stdout.write("".join(json.dumps(q) + "\n" for q in demo_questions()))
        return 0
    text = table(args.root)
    print(text)
    if args.write:
        (args.root / "README.md").write_text(page(text), encoding="utf-8")
    return 0


def page(text: str) -> str:
    """``results/default-model/README.md``; tests/bench/test_default_model.py checks that it is what
    the committed runs say."""
    return (
        "# Which offline model answers the demo questions? (issue 18, item 5)\n\n"
        "```bash\nSEARCHAIN_THREADS=1 .venv/bin/python -m bench.default_model run\n"
        ".venv/bin/python -m bench.default_model table --write\n```\n\n"
        "SearChain, BM25 over the bundled demo corpus, one llama.cpp thread, on the 2-core "
        "machine while one other 1-thread evaluation ran beside it. *First run*: a new "
        "process with empty model and call caches (the chunked models are assembled and "
        "checked) answering the README's demo question. The demo questions are in "
        "`demo-questions.jsonl`.\n\n" + text + "\n"
    )


if __name__ == "__main__":
    sys.exit(main())
