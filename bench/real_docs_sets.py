"""The question sets and arms of ``bench/real_docs_answers.py``.

Two question sets over Debian documentation, each with its own documents, index and records:

* ``reported``: the 53 questions of issue 39 (``bench/data/real_docs_questions.jsonl``) over
  six documents; the figures docs/results.md reports.
* ``calibration``: 80 questions written for fitting and certifying a confidence calibrator
  (``bench/data/real_docs_calibration_questions.md``) over all nine documents; never reported.
* ``tune``: 24 questions written for tuning (issue 50,
  ``bench/data/real_docs_tune_questions.jsonl``) over three other documents (the Debian
  project history's PDF, the Debian Linux Kernel Handbook and the Debian Policy Manual as
  HTML). Configurations are chosen on them; they are never reported as a result.
* ``tune-fresh``: 32 more tune questions (issue 62's second route round,
  ``bench/data/real_docs_tune_fresh_questions.jsonl``) over two documents no other set uses
  (the Securing Debian Manual and the Installation Guide for amd64, HTML), in the git-doc
  mix (one-passage, two-part, bridge). Written before any model answered them.
* ``git-doc``: the frozen 60 (``../shared/splits/git-doc/``: 30 one-hop, 15 two-part,
  15 bridge over Debian's git-doc, written outside the project), read from their own form
  (``searchain.eval.document_questions``). Answered once, at the very end, with every default
  chosen: ``run --set git-doc`` refuses without ``--frozen-run``.

An arm is a method of searchain's catalog with settings (what ``-O`` sets), or the
LlamaIndex peer. ``searchain`` is whatever the method's default is when it runs (its
settings are in the manifest); the named variants pin the settings they are about (all of
them: a default that changes later cannot change what an arm's records mean).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.kit import ROOT, SHARED, part_of
from bench.real_docs_recall import CACHE, DOC, QUESTIONS, SOURCES
from searchain.eval.document_answers_tables import PEER
from searchain.eval.document_questions import GIT_DOC_SHA256

TUNE_SOURCES = {
    "debian-history": (f"{DOC}/debian-history/docs", "project-history.en.pdf"),
    "debian-kernel-handbook": (f"{DOC}/debian-kernel-handbook/kernel-handbook.html", "*.html"),
    "debian-policy": (f"{DOC}/debian-policy/policy.html", "*.html"),
}


@dataclass(frozen=True)
class QuestionSet:
    name: str
    questions: Path
    sources: dict[str, tuple[str, str]]
    corpus_name: str  # the folder under <cache>/real-docs the documents are copied into
    index_name: str  # the BM25 index under <cache>/real-docs
    form: str = "searchain"  # the questions' form: "git-doc" (eval/document_questions.py)
    sha256: str | None = None  # the digest a frozen question file must have
    frozen: bool = False  # answered once, at the very end (``run`` asks for --frozen-run)

    @property
    def index(self) -> Path:
        return CACHE / "real-docs" / self.index_name

    def records(self, out: Path, model: str) -> Path:
        """Where this set's records of ``model`` go under ``--out``."""
        return out / model if self.name == "reported" else out / self.name / model


FRESH_TUNE_SOURCES = {
    "harden-doc": (f"{DOC}/harden-doc/html/en-US", "*.html"),
    "installation-guide-amd64": (f"{DOC}/installation-guide-amd64/en", "*.html"),
}

# The frozen set (issue 62, ../shared/splits/git-doc/README.md): Git's documentation as a user
# indexes it, every HTML and text file under the package's folder, subfolders kept.
GIT_DOC = SHARED / "splits" / "git-doc"
GIT_DOC_SOURCES = {"git-doc": (f"{DOC}/git-doc", "**/*.html|**/*.txt")}

SETS = {
    "reported": QuestionSet("reported", QUESTIONS, SOURCES, "corpus", "answers-bm25"),
    "tune": QuestionSet(
        "tune",
        ROOT / "bench" / "data" / "real_docs_tune_questions.jsonl",
        TUNE_SOURCES,
        "tune-corpus",
        "tune-answers-bm25",
    ),
    "tune-fresh": QuestionSet(
        "tune-fresh",
        ROOT / "bench" / "data" / "real_docs_tune_fresh_questions.jsonl",
        FRESH_TUNE_SOURCES,
        "tune-fresh-corpus",
        "tune-fresh-answers-bm25",
    ),
    "git-doc": QuestionSet(
        "git-doc",
        GIT_DOC / "questions.jsonl",
        GIT_DOC_SOURCES,
        "git-doc-corpus",
        "git-doc-answers-bm25",
        form="git-doc",
        sha256=GIT_DOC_SHA256,
        frozen=True,
    ),
    # Issue 61's calibration questions: over all nine documents in one folder (a two-passage
    # or bridge question may join two of them), for fitting and certifying a calibrator only.
    "calibration": QuestionSet(
        "calibration",
        ROOT / "bench" / "data" / "real_docs_calibration_questions.jsonl",
        {**SOURCES, **TUNE_SOURCES},
        "all-corpus",
        "all-answers-bm25",
    ),
}

# arm -> (searchain method, its settings); the peer has none.
ARMS: dict[str, tuple[str, dict[str, Any]]] = {
    # The one-sentence prompt every retrieve-read record before issue 62's short-answer
    # ending was made with (pinned: a rerun means what those records mean).
    "retrieve-read": ("retrieve-read", {"template": "retrieve_read"}),
    "searchain": ("searchain", {}),
    "searchain-tracing": ("searchain", {"final_step": "tracing"}),  # always chains
    # The arms recorded before SearChain read first (issue 62) chain every question, as they
    # did then (route=chain), so a rerun means what their records mean.
    "searchain-evidence": (
        "searchain",
        {"final_step": "evidence", "evidence_sources": "chain+question", "route": "chain"},
    ),
    "searchain-evidence-path": (
        "searchain",
        {"final_step": "evidence", "evidence_sources": "path+question", "route": "chain"},
    ),
    # The ablation: the evidence step reads only what the user's own words retrieved.
    "searchain-evidence-question": (
        "searchain",
        {"final_step": "evidence", "evidence_sources": "question", "route": "chain"},
    ),
    # Issue 62's tune arm: read first, then always chain (the first read, every route signal
    # and the chained answer of each question are recorded, so a route rule is chosen offline:
    # bench/searchain_route.py).
    "searchain-route-always": (
        "searchain",
        {
            "final_step": "evidence",
            "evidence_sources": "path+question",
            "route": "read-first",
            "chain_when": "always",
        },
    ),
    PEER: ("", {}),
}
# The retriever each arm searches with (the library's default since issue 60 is
# bm25+parts+bridge; the arms recorded before it searched BM25 alone, and keep it so a rerun
# means what their records mean). "-plan" arms are the earlier arms on the default retriever.
PLAN = "bm25+parts+bridge"
RETRIEVERS: dict[str, str] = {"searchain-route-always": PLAN, "retrieve-read-plan": PLAN}
ARMS["retrieve-read-plan"] = ARMS["retrieve-read"]
ARMS["searchain-evidence-question-plan"] = ARMS["searchain-evidence-question"]
RETRIEVERS["searchain-evidence-question-plan"] = PLAN
# Retrieve-read's defaults on the default retriever: the one sentence ends with the short
# answer ("So the answer is", as SearChain's evidence step; issue 62).
ARMS["retrieve-read-answer-plan"] = ("retrieve-read", {"template": "retrieve_read_answer"})
RETRIEVERS["retrieve-read-answer-plan"] = PLAN
# SearChain's defaults on the default retriever (issue 62's reported arm: whatever route the
# defaults take at the commit a run is pinned to; its records carry the settings).
ARMS["searchain-plan"] = ARMS["searchain"]
RETRIEVERS["searchain-plan"] = PLAN
# The first round's route rule, the default from 2026-11-28 until the second tune round chose
# reader-disagrees alone (results/searchain-route/tune-round2.md): the records made under it.
ARMS["searchain-plan-uncited"] = (
    "searchain",
    {"route": "read-first", "chain_when": "uncited,reader-disagrees"},
)
RETRIEVERS["searchain-plan-uncited"] = PLAN


def retriever_of(arm: str) -> str:
    """The retriever ``arm`` searches with."""
    return RETRIEVERS.get(arm, "bm25")


if __name__ == "__main__":
    part_of(__doc__, "python -m bench.real_docs_answers (or python -m bench.two_passage_recall)")
