"""Answers over real documentation (issue 39): searchain's retrieve-read and SearChain beside a
LlamaIndex pipeline with its documented defaults, on the same documents, model, thread count
and scorer.

The 53 questions are ``bench/data/real_docs_questions.jsonl``; the documents are the four PDFs
and two HTML sites ``bench/real_docs_recall.py`` fetches (its ``setup``, cached under
``~/.cache/searchain-bench``). Three arms:

* ``retrieve-read`` and ``searchain``: the library's one assembler
  (``methods.assembly.Spec``/``assemble``, what ``searchain ask --index`` builds) with the
  offline model (``--model``, default ``qwen2.5-coder-1.5b``), one llama.cpp thread, BM25
  over the index ``searchain index`` makes of the corpus folder, each method's own ``k``
  (5 for retrieve-read, 1 per query for SearChain), no call cache (honest seconds).
* ``llamaindex``: ``bench/real_docs_llamaindex.py`` run by the peer's own Python (a virtual
  environment ``setup`` makes with pip; its versions are printed and recorded), talking to
  the same GGUF behind ``llama_cpp.server`` on 127.0.0.1 (started from searchain's
  environment, where llama-cpp-python is built: the server is the model host, not the peer),
  one thread for prompt and generation alike.

Each arm x question is one JSON line in ``results/real-docs/<model>/<arm>.jsonl`` (``--out``),
its whole trace (for a searchain arm) one line of ``<arm>.traces.jsonl`` beside it (a
calibrator reads its signals and configuration: ``bench/docs_calibrator.py``): resumable,
a recorded line is never redone (``--retry-failed`` redoes failed ones), a failing call is
recorded, not fatal. Scored alike for every arm (``searchain.scoring.document_answers``;
the tables: ``searchain.eval.document_answers_tables``):

* ``right_whole``, ``right_short``, ``right_derived`` (issue 62: the short-answer golds):
  ``scoring.match.alias_match`` of the arm's whole answer (SearChain's and retrieve-read's
  final content, LlamaIndex's response), of its short answer, and of the short answer
  ``answers.short_answer`` reads in the whole answer, against the question's ``answers``
  (aliases; a two-passage question needs one alias of each part). The short answer is the
  recorded one (searchain's ``trace.answer``, made by that same ``short_answer`` for a chat
  model); LlamaIndex writes none, so its short answer IS its whole reply. ``right_derived``
  derives every arm's short answer the same way from its recorded whole answer (like for
  like). ``table`` computes the three from each record's text (``rescore``), so records made
  before these golds are scored by them too; no answer is made again.
* ``cover_em`` (the figures of issues 39 and 50): searchain's cover-EM
  (``scoring.match.cover_em``) of the whole answer against the question's ``answer``, the
  evidence quote (kept for retrieval recall; ``bench/data/real_docs_golds.md`` lists old
  and new golds); a two-passage question needs both of its strings. ``cover_em_short``: the
  same of the short answer.
* ``cite_file``: a cited source names the file each needed passage is in. searchain: the
  passages its ``[n]`` marks cite; LlamaIndex (whose default answer has no marks): its
  response's source nodes (``file_path``). ``cite_page`` (PDF questions): such a citation is
  on the answer's page or holds the answer (a passage may start on the page before).
* ``in_hand``: every needed passage was among what the arm's answering step read (a passage
  of the right file holding the answer string, compared without case, markup and
  whitespace, so pypdf's glued words still count). SearChain's answering step reads only
  some of what its nodes retrieved (``meta.final_read``: tracing its pairs and the feedback
  references in its dialogue, the evidence step its evidence); ``in_hand_retrieved`` is the
  same test over everything the arm retrieved.

Question sets and arms: ``bench/real_docs_sets.py`` (``--set tune`` is for choosing
configurations only; an arm such as ``searchain-evidence`` pins the setting it is named by).
``--cache FILE`` lets arms that share SearChain's chain compute it once (issue 50's runs:
``bench/model_runs/evidence_step_real_docs.sh``); a record with cached calls is left out of
the seconds.

    .venv/bin/python -m bench.real_docs_answers setup [--set tune]    # corpus, index, peer venv
    .venv/bin/python -m bench.real_docs_answers run [--arms retrieve-read,searchain,llamaindex]
        [--model qwen2.5-coder-1.5b] [--limit N] [--set tune] [--cache FILE]   # resumable
    .venv/bin/python -m bench.real_docs_answers table [--against ARM] [--set tune]
        [--golds answers|quote|both] [--paired-with retrieve-read,searchain-evidence-question]

``table`` prints the short-answer golds' table (``--golds answers``: right, whole and short,
by kind, paired differences against each ``--paired-with`` arm recorded), then the cover-EM
tables of the quote golds (``--golds quote``: what issues 39 and 50 printed); both by default.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.kit import RESULTS_DIR
from bench.real_docs_peer import (
    PEER_PACKAGES,
    PEER_VENV,
    SERVER_CTX,
    peer_command,
    peer_python,
    peer_versions,
    run_peer,
)
from bench.real_docs_recall import setup as fetch_documents
from bench.real_docs_records import append, append_trace, git_commit, write_manifest
from bench.real_docs_sets import ARMS, PEER, SETS, QuestionSet, retriever_of
from searchain.eval.document_answers_tables import markdown
from searchain.eval.document_questions import load_git_doc
from searchain.eval.document_records import load_records, settings_changes
from searchain.eval.short_answer_tables import alias_markdown
from searchain.scoring.document_answers import (
    rescore,
    trace_record,
)

RESULTS = RESULTS_DIR / "real-docs"
DEFAULT_ARMS = ("retrieve-read", "searchain", PEER)
# -- questions ------------------------------------------------------------------------------


def load_questions(qset: QuestionSet, limit: int | None = None) -> list[dict[str, Any]]:
    """The set's questions; ``limit`` N: N of them spread evenly over the file (which is
    ordered by document), so a short run still asks about every document."""
    if qset.form == "git-doc":
        rows = load_git_doc(qset.questions, sha256=qset.sha256)
    else:
        lines = qset.questions.read_text().splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
    if not limit or limit >= len(rows):
        return rows
    return [rows[i * len(rows) // limit] for i in range(limit)]


def run_searchain(
    arm: str,
    model: str,
    todo: list[dict],
    out: Path,
    threads: int,
    index: Path,
    cache: Any,
    recorded: dict | None = None,
) -> dict:
    """Answer ``todo`` with the arm's searchain method and settings; returns its settings.
    ``cache``: False (every call computed: honest seconds) or a call cache file, which arms
    sharing a chain share (a record's ``cached_calls`` says how many of its calls it served;
    its seconds are honest only when that is 0). ``recorded``: the settings the manifest holds
    for the arm's records so far, which the rest must be answered with."""
    import dataclasses

    from searchain.methods.assembly import Spec, assemble

    method, options = ARMS[arm]
    spec = Spec(
        method=method,
        model=model,
        retriever=retriever_of(arm),
        index=str(index),
        options=options,
        threads=threads,
        cache=cache,
    )
    runner = assemble(spec)
    settings = {"spec": spec.to_dict(), "method": dataclasses.asdict(runner.method.config)}
    if recorded is not None and out.exists():
        refuse_other_settings(arm, out, recorded, settings)
    for q in todo:
        t0 = time.perf_counter()
        try:
            trace = runner(q["question"])
            record = {"status": "ok", **trace_record(q, trace)}
        except Exception as e:  # recorded per item, not fatal
            record = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
        else:  # before its record: a recorded item always has its trace
            append_trace(out, q, trace)
        append(out, q, arm, model, record, time.perf_counter() - t0)
    return settings


def refuse_other_settings(arm: str, out: Path, recorded: dict, settings: dict) -> None:
    """Stop before a resume would answer the rest of ``out`` with other settings than its
    records were made with (a default that changed between two sessions): one file, one
    configuration."""
    changed = settings_changes(recorded, settings)
    if changed:
        raise SystemExit(
            f"{arm}: the records in {out} were made with other settings than the arm has now "
            f"({'; '.join(changed)}); answering the rest would mix two configurations in one "
            "file: move the records (and their .traces.jsonl) aside, or answer under a new arm"
        )


# -- commands -------------------------------------------------------------------------------


def cmd_setup(args: argparse.Namespace) -> None:
    from searchain.api import index_folder_report
    from searchain.llm.models import model_path

    qset = SETS[args.set]
    corpus = fetch_documents(qset.sources, qset.corpus_name)
    _, report = index_folder_report(corpus, qset.index)
    print(f"index: {qset.index} ({report.passages:,} passages; read {len(report.read)} files)")
    print(f"model: {model_path(args.model)}")
    if args.no_peer:
        return
    if not peer_python().exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    probe = [str(peer_python()), "-c", "import llama_index.retrievers.bm25"]
    if args.upgrade or subprocess.run(probe, capture_output=True).returncode:
        pip = [str(peer_python()), "-m", "pip", "install", "--quiet", "--upgrade"]
        subprocess.run([*pip, *PEER_PACKAGES], check=True)
    print(f"LlamaIndex environment: {PEER_VENV}")
    for name, version in peer_versions().items():
        print(f"  {name} {version}")
    # Read and split the corpus once (the tokenizer and sentence data are loaded here, not in
    # a timed run); no question is asked, so no model is needed.
    command = peer_command(corpus, "http://127.0.0.1:9/v1", args.model)
    done = subprocess.run(command, input="", capture_output=True, text=True, check=True)
    header = json.loads(done.stdout.splitlines()[0])
    print(f"  read {header['documents']} documents into {header['nodes']} nodes", end=" ")
    print(f"in {header['build_seconds']:.0f} s")


def cmd_run(args: argparse.Namespace) -> None:

    # A plain kill ends the run through its ``finally`` blocks: the model server goes too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.environ["SEARCHAIN_THREADS"] = str(args.threads)
    qset = SETS[args.set]
    if qset.frozen and not args.frozen_run:
        raise SystemExit(
            f"{qset.name} is a frozen set: it is answered once, at the very end, with every "
            "default chosen (../shared/splits/README.md); pass --frozen-run for that one run"
        )
    questions = load_questions(qset, args.limit)
    folder = qset.records(args.out, args.model)
    folder.mkdir(parents=True, exist_ok=True)
    corpus = fetch_documents(qset.sources, qset.corpus_name)
    if not (qset.index / "documents.json").exists() and any(a != PEER for a in args.arms):
        raise SystemExit(f"no index at {qset.index}: run `python -m {__spec__.name} setup`")
    cache = str(args.cache) if args.cache else False
    if args.interleave:  # question by question, each arm in turn: both meet the same load
        for q in questions:
            for arm in args.arms:
                answer_arm(args, arm, [q], folder, qset, corpus, cache)
        return
    for arm in args.arms:
        answer_arm(args, arm, questions, folder, qset, corpus, cache)


def answer_arm(
    args: argparse.Namespace,
    arm: str,
    questions: list[dict],
    folder: Path,
    qset: QuestionSet,
    corpus: Path,
    cache: Any,
) -> None:
    """Answer those of ``questions`` the arm has no record of, and record its settings."""
    from searchain.llm.models import model_path

    out = folder / f"{arm}.jsonl"
    done = load_records(out)
    todo = [
        q
        for q in questions
        if q["id"] not in done or (args.retry_failed and done[q["id"]]["status"] != "ok")
    ]
    print(f"{arm}: {len(todo)} of {len(questions)} questions to answer", file=sys.stderr)
    manifest = folder / "manifest.json"
    recorded = json.loads(manifest.read_text()) if manifest.exists() else {}
    if not todo and (arm in recorded or arm == PEER):
        return  # (a searchain arm whose settings were never written gets them now)
    config = {"threads": args.threads, "gguf": str(model_path(args.model))}
    if arm == PEER:
        header = run_peer(args.model, todo, out, args.threads, corpus)
        config |= {"corpus": str(corpus), "server_n_ctx": SERVER_CTX, "peer": header}
    else:
        config |= {"index": str(qset.index), "cache": str(cache)}
        config |= run_searchain(
            arm, args.model, todo, out, args.threads, qset.index, cache, recorded.get(arm)
        )
    write_manifest(folder, {arm: config | {"searchain_commit": git_commit()}})


def cmd_table(args: argparse.Namespace) -> None:
    qset = SETS[args.set]
    folder = qset.records(args.out, args.model)
    questions = {q["id"]: q for q in load_questions(qset, args.limit)}
    records: dict[str, dict[str, dict]] = {}
    for arm in args.arms:
        recorded = load_records(folder / f"{arm}.jsonl")
        rows = {i: rescore(questions[i], r) for i, r in recorded.items() if i in questions}
        if rows:
            records[arm] = rows
    if not records:
        raise SystemExit(f"no records under {folder}")
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text()) if path.exists() else {}
    against = args.against or (PEER if PEER in records else "retrieve-read")
    parts = []
    if args.golds in ("answers", "both"):
        parts.append(
            alias_markdown(
                records,
                args.model,
                args.set,
                len(questions),
                args.paired_with,
                quotes=qset.form != "git-doc",  # its quotes are evidence, its golds aliases
            )
        )
    if args.golds == "both":
        parts.append("## Cover-EM against the evidence-quote golds (`answer`; issues 39 and 50)")
    if args.golds in ("quote", "both"):
        parts.append(markdown(records, manifest, args.model, against))
    print("\n\n".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for name in ("setup", "run", "table"):
        p = sub.add_parser(name)
        p.add_argument("--model", default="qwen2.5-coder-1.5b", help="an offline model's name")
        p.add_argument("--set", choices=sorted(SETS), default="reported",
                       help="question set (tune: for choosing configurations only)")  # fmt: skip
        if name == "setup":
            p.add_argument("--upgrade", action="store_true", help="upgrade the peer's packages")
            p.add_argument(
                "--no-peer",
                action="store_true",
                help="only the corpus and index: no LlamaIndex environment",
            )
            continue
        p.add_argument("--arms", default=",".join(DEFAULT_ARMS),
                       help="comma-separated: " + ", ".join(ARMS))  # fmt: skip
        p.add_argument("--limit", type=int, help="N questions spread over the documents")
        p.add_argument("--out", type=Path, default=RESULTS, help="records go to OUT/<model>/")
        if name == "run":
            p.add_argument("--threads", type=int, default=1, help="llama.cpp threads, every arm")
            p.add_argument("--retry-failed", action="store_true", help="redo failed items")
            p.add_argument("--frozen-run", action="store_true",
                           help="answer a frozen set (git-doc): its one run")  # fmt: skip
            p.add_argument("--interleave", action="store_true",
                           help="question by question, each arm in turn (fair seconds on a "
                           "shared machine; the peer is not interleaved)")  # fmt: skip
            p.add_argument("--cache", type=Path, default=None,
                           help="a call cache file shared by arms (default: none, every call "
                           "computed); seconds count only items with no cached call")  # fmt: skip
        if name == "table":
            p.add_argument("--against", default=None,
                           help="the quote golds' table: the arm others are paired with "
                           "(default: llamaindex when recorded, else retrieve-read)")  # fmt: skip
            p.add_argument("--golds", choices=("answers", "quote", "both"), default="both",
                           help="answers: right by the short-answer golds (issue 62); quote: "
                           "cover-EM of the evidence quotes (issues 39 and 50)")  # fmt: skip
            p.add_argument("--paired-with", default="retrieve-read,searchain-evidence-question",
                           help="the short-answer golds' table: every arm is paired with each "
                           "of these that is recorded")  # fmt: skip
    args = ap.parse_args()
    if args.command != "setup":
        args.arms = [a for a in args.arms.split(",") if a]
        if args.command == "table":
            args.paired_with = [a for a in args.paired_with.split(",") if a]
        if unknown := set(args.arms) - set(ARMS):
            ap.error(f"unknown arm(s): {', '.join(sorted(unknown))}")
    {"setup": cmd_setup, "run": cmd_run, "table": cmd_table}[args.command](args)


if __name__ == "__main__":
    main()
