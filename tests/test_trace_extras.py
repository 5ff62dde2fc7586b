"""The typed views of a trace's meta: what each reads, and what a key's absence means."""

from __future__ import annotations

import json
from pathlib import Path

from searchain.trace_extras import (
    ChainExtras,
    ChainSettings,
    CheckExtras,
    NodeExtras,
    RetrievalReports,
    RunStamps,
)
from searchain.types import Node, Trace

RESULTS = Path(__file__).resolve().parents[1] / "results"


def test_a_trace_made_before_the_keys_reads_as_their_before_values() -> None:
    bare = Trace(question="q", method="searchain", answer="a")
    chain = ChainExtras.of(bare)
    assert not chain.chain_of_query and chain.path is None and chain.route is None
    assert not chain.read_route and chain.template is None and not chain.dropped_node_answers
    settings = ChainSettings.of(bare)
    assert (settings.final_step, settings.label_rule, settings.yesno_check) == (
        "tracing",
        1,
        "span",
    )
    assert settings.evidence_sources is None and settings.theta is None
    assert RunStamps.of(bare) == RunStamps(None, None, None, None, None)
    assert RetrievalReports.of(bare) == RetrievalReports([], None)
    assert CheckExtras.of(bare) == CheckExtras({}, False)
    assert NodeExtras.of(Node(id="1", query="q")) == NodeExtras(None, None, None)


def test_the_views_read_what_the_trace_records() -> None:
    meta = {
        "chains": [],
        "path": ["1"],
        "route": {"rule": "read-first", "taken": "read"},
        "template": None,  # recorded, but empty: an instruction-position template
        "final_step": "evidence",
        "evidence_sources": "question",
        "label_rule": 3,
        "retrieval": [{"retriever": "llm-url"}, {"retriever": "other"}],
        "k": 5,
        "maxprob": {"value": None},
        "evidence": {"passages": [{"id": "p", "roles": ["question rank 1"]}]},
    }
    trace = Trace(question="q", method="searchain", answer="a", meta=meta)
    chain = ChainExtras.of(trace)
    assert chain.chain_of_query and chain.read_route and chain.template == ""
    assert chain.evidence_read == [{"id": "p", "roles": ["question rank 1"]}]
    settings = ChainSettings.of(trace)
    assert (settings.final_step, settings.evidence_sources, settings.label_rule) == (
        "evidence",
        "question",
        3,
    )
    retrieval = RetrievalReports.of(trace)
    assert retrieval.k == 5 and retrieval.of_retriever("llm-url") == [{"retriever": "llm-url"}]
    assert CheckExtras.of(trace).maxprob_asked
    node = Node(id="1", query="q", meta={"status": "corrected", "reader": {"confidence": -0.5}})
    assert NodeExtras.of(node) == NodeExtras("corrected", -0.5, None)


def test_reading_leaves_the_wire_format_as_it_was() -> None:
    text = (RESULTS / "quality/qwen2.5-coder-1.5b/hotpotqa-100/results.jsonl").read_text(
        encoding="utf-8"
    )
    for record in map(json.loads, text.splitlines()[:20]):
        trace = Trace.from_dict(record["trace"])
        written = json.dumps(trace.to_dict())
        for view in (ChainExtras, ChainSettings, RunStamps, RetrievalReports, CheckExtras):
            view.of(trace)
        assert [NodeExtras.of(n) for n in trace.nodes]
        assert json.dumps(trace.to_dict()) == written and trace.meta == record["trace"]["meta"]
