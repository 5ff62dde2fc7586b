"""SearChain reading first and chaining when it must (``route="read-first"``, route.py).

The rule's triggers on first reads built here; the whole route on recorded real outputs of
the 0.5B Qwen instruct model (chat form) over the real HotpotQA index
(``tests/data/recordings/searchain_route.jsonl``; re-record with ``SEARCHAIN_RECORD=1``).
"""

from __future__ import annotations

import pytest

from recordings import Observed, Replayed, recorded_llm
from route_kit import CHAT_MODEL, run
from searchain.methods.searchain import SEARCHAIN_PAPER, SearChainConfig
from searchain.methods.searchain.route import decide, route_words, signals
from searchain.methods.searchain.route_rule import TRIGGERS, parse_triggers
from searchain.retrieval import BM25Index
from searchain.scoring.confidence.configuration import final_step
from searchain.types import Citation, Passage, Trace

TMPFS = Passage(id="fs#3", title="Filesystems", text="A tmpfs holds its files only in memory.")
NOATIME = Passage(id="mount#1", title="mount", text="The noatime option stops atime updates.")


def read_of(answer: str, *, cited: bool = True, passages: tuple[Passage, ...] = (TMPFS,)) -> Trace:
    """A first read as the evidence step leaves it: its answer, references and citations."""
    read = Trace(question="q", method="searchain", answer=answer, final_content=f"{answer} [1]")
    read.references = list(passages)
    origin = "model" if cited else "post-hoc"
    read.citations = [Citation(1, passages[0].id, f"{answer} [1]", origin)]
    return read


def fired(question: str, read: Trace) -> set[str]:
    found = signals(question, read, None, 0.0, ask_reader=False)
    return {t for t in TRIGGERS if found.get(t) is True} - {"always"}


def test_a_stated_cited_answer_to_one_question_fires_nothing() -> None:
    assert fired("Which filesystem holds its files only in memory?", read_of("tmpfs")) == set()
    route, why = decide({"always": True, "two-parts": False}, ("two-parts", "unstated"))
    assert route == "read" and "no trigger fired" in why[0]


def test_each_trigger_fires_on_what_it_names() -> None:
    two = "Which mount option stops atime updates, and which filesystem holds files in memory?"
    assert fired(two, read_of("tmpfs")) == {"two-parts"}
    assert fired("Which filesystem?", read_of("ramfs")) == {"unstated"}  # in no passage read
    assert fired("Which filesystem?", read_of("The documents do not say.")) == {"no-answer"}
    assert fired("Which filesystem?", read_of("")) == {"no-answer"}
    assert fired("Which filesystem?", read_of("tmpfs", cited=False)) == {"uncited"}


def test_the_route_chains_for_every_fired_trigger_and_says_why() -> None:
    found = {"two-parts": True, "unstated": True, "uncited": False, "always": True}
    route, why = decide(found, ("two-parts", "unstated", "uncited"))
    assert route == "chain" and why == [
        "the question asks two things",
        "the first read's answer is not stated in the passages it read",
    ]
    assert decide(found, ("always",))[0] == "chain"


def test_an_unknown_trigger_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown trigger sometimes"):
        parse_triggers("two-parts,sometimes")
    with pytest.raises(ValueError, match="unknown trigger"):
        SearChainConfig(route="read-first", chain_when="sometimes").validate()


def test_without_a_first_read_to_make_searchain_chains_and_the_route_is_inert() -> None:
    """The default reads first; without IR or with the tracing step there is no first read,
    so SearChain chains as the paper does and a run's manifest leaves the route out."""
    assert SearChainConfig().reads_first  # the default since issue 62's tune
    for config in (SearChainConfig(final_step="tracing"), SearChainConfig(use_ir=False)):
        config.validate()
        assert not config.reads_first
        assert {"route", "chain_when"} <= config.inert_settings()
    assert "route" not in SearChainConfig().inert_settings()


def test_the_paper_preset_always_chains_and_its_configuration_says_so() -> None:
    assert SEARCHAIN_PAPER["route"] == "chain"
    meta = {"chains": [], "final_step": "evidence", "evidence_sources": "question"}
    trace = Trace(question="q", method="searchain", meta=meta)
    assert final_step(trace) == "evidence:question"  # a trace without a route chained
    trace.meta["route"] = {"rule": "read-first:two-parts", "taken": "read", "words": "Route: x"}
    assert final_step(trace) == "read-first:two-parts → evidence:question"
    assert route_words(trace) == "Route: x"


# -- the whole route, on recorded real outputs ----------------------------------------------


def test_the_read_route_answers_with_one_call(index: BM25Index, hotpot) -> None:
    """No trigger fires (two-parts alone, on a question that asks one thing): the first read
    is the answer, with no chain planned."""
    llm = Observed(Replayed(recorded_llm("searchain_route", model=CHAT_MODEL)))
    trace = run(index, hotpot[0]["question_text"], llm, chain_when="two-parts")
    route = trace.meta["route"]
    assert route["taken"] == "read" and trace.rounds == 0 and trace.meta["chains"] == []
    # the first read's one call, and the reader's where its reply named no short answer
    read_out = route["first_read"].get("short_answer_read")
    assert len(llm.prompts) == 1 + bool(read_out)
    assert trace.meta.get("short_answer_read") == read_out
    assert trace.answer == route["first_read"]["answer"]
    assert trace.final_content == route["first_read"]["final_content"]
    assert [p.id for p in trace.references] == route["first_read"]["references"]
    assert route_words(trace) == route["words"] and "one read" in route["words"]
    assert trace.usage.prompt_tokens > 0


def test_a_chain_after_the_first_read_loses_nothing_it_found(index: BM25Index, hotpot) -> None:
    """chain_when=always (hotpot[2], whose first read cites): the chain runs, and the passages
    the first read cited lead the evidence it answers from; its answer stays in the trace."""
    llm = Observed(Replayed(recorded_llm("searchain_route", model=CHAT_MODEL)))
    trace = run(index, hotpot[2]["question_text"], llm, chain_when="always")
    route = trace.meta["route"]
    assert route["taken"] == "chain" and trace.rounds >= 1
    assert route["why"] == ["the configuration always chains after the first read"]
    assert "planned a chain of queries because" in route_words(trace)  # type: ignore[operator]
    first = route["first_read"]
    assert first["answer"] and first["cited"]
    evidence = trace.meta["evidence"]["passages"]
    leading = [e["id"] for e in evidence if "cited by the first read" in e["roles"]]
    assert set(leading) == set(first["cited"])
    assert set(first["cited"]) <= {p.id for p in trace.references}
    # every signal is recorded, the reader's included (always asks it)
    assert set(TRIGGERS) <= set(route["signals"]) and route["signals"]["reader"] is not None
