"""The paper's SearChain (``final_step="tracing"``: the ``searchain-paper`` preset the Table
reproductions use; the default is the evidence step since issue 50's measurement) answers as
it did before the evidence step existed.

For every recorded scenario of the SearChain tests (real outputs of the embedded model over
the real HotpotQA index, ``tests/data/recordings/searchain.jsonl``), the answer, the verified
path, the final content and the references are those of ``tests/data/searchain_golden.json``,
written from the code before issue 50. Regenerate only for a deliberate change of the paper's
behaviour (and say so in the commit):
``python tests/methods/searchain/test_searchain_paper_golden.py --write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from searchain.methods.searchain import SEARCHAIN_PAPER

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # recordings.py, as a script

from recordings import recorded_llm

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "searchain_golden.json"
DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "hotpotqa" / "dev_subsampled.jsonl"
# The recordings were made with the paper's CoQ prompt (question in the instruction).
PAPER = SEARCHAIN_PAPER  # the recordings were made with the paper preset's settings
READER_FORM = {**PAPER, "answer_after_feedback": "reader"}
# name: (HotpotQA item, settings): the scenarios tests/methods/searchain/test_searchain*.py replay.
SCENARIOS: dict[str, tuple[int, dict[str, Any]]] = {
    "paper-0": (0, PAPER),
    "paper-1": (1, PAPER),
    "paper-6": (6, PAPER),
    "reader-0": (0, READER_FORM),
    "reader-1": (1, READER_FORM),
    "reader-2": (2, READER_FORM),
    "reader-6": (6, READER_FORM),
    "reader-10-rmax2": (10, {**READER_FORM, "r_max": 2}),
    "reader-0-theta0": (0, {**READER_FORM, "theta": 0.0}),
}


# The scenarios of the paper's own settings, which the preset "searchain-paper" must answer.
PRESET_SCENARIOS = sorted(n for n, (_, settings) in SCENARIOS.items() if settings is PAPER)


def outcome(name: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the scenario ``name`` answers: the golden fields of its trace."""
    from searchain.methods.searchain import SearChain, SearChainConfig
    from searchain.readers.llm_reader import LLMReader
    from searchain.retrieval import default_index

    item, settings = SCENARIOS[name]
    llm = recorded_llm("searchain")
    config = SearChainConfig(**{**settings, **(extra or {})})
    method = SearChain(llm, default_index(), LLMReader(llm), config, embedder=_embedder())
    return fields(method.run(_question(item)))


def preset_outcome(name: str) -> dict[str, Any]:
    """What the scenario ``name`` answers when SearChain is asked for by the preset's name, as
    a user asks for it (the one assembler, the catalog's record and variant; no settings)."""
    from searchain.methods.assembly import Spec, assemble
    from searchain.retrieval import default_index

    runner = assemble(
        Spec(method="searchain-paper", options={"dedup": "embedding"}),
        llm=recorded_llm("searchain"),
        retriever=default_index(),
    )
    trace = runner(_question(SCENARIOS[name][0]))
    assert trace.method == "searchain-paper"
    return fields(trace)


def _question(item: int) -> str:
    return json.loads(DATA.read_text().splitlines()[item])["question_text"]


def fields(trace: Any) -> dict[str, Any]:
    return {
        "answer": trace.answer,
        "path": trace.meta["path"],
        "final_content": trace.final_content,
        "references": [p.id for p in trace.references],
        "node_answers": {n.id: n.answer for n in trace.nodes},
    }


_EMBEDDER: list[Any] = []


def _embedder() -> Any:
    from searchain.methods.catalog import make_embedder

    if not _EMBEDDER:
        _EMBEDDER.append(make_embedder("embedding"))
    return _EMBEDDER[0]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_paper_preset_answers_as_its_golden_traces(name: str) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert outcome(name) == golden[name]


@pytest.mark.parametrize("name", PRESET_SCENARIOS)
def test_the_preset_by_its_name_answers_as_the_papers_golden_traces(name: str) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert preset_outcome(name) == golden[name]


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    result = {name: outcome(name) for name in SCENARIOS}
    GOLDEN.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN} ({len(result)} scenarios)")
