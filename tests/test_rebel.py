"""REBEL: the recursion logic on recorded real model outputs (Gemma 3 270M) with a real local
HTTP tool server over the Compositional Celebrities facts, and end to end with the real
model. Re-record with ``SEARCHAIN_RECORD=1`` (delete tests/data/recordings/rebel.jsonl).

Scenario questions and budgets were chosen so the recorded behaviour shows each case of
Algorithm 1; a test fails if a re-recording stops showing its case.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from pathlib import Path

import numpy as np
import pytest

from recordings import RECORD, recorded_llm
from searchain.events import listening
from searchain.llm import LLM, GenerationParams
from searchain.llm.local import LocalLLM
from searchain.methods.rebel import Rebel, RebelConfig
from searchain.methods.rebel_parse import (
    parse_json_object,
    parse_subquestions,
    parse_tool_number,
    parse_yes_no,
)
from searchain.methods.registry import build_method, make_embedder
from searchain.net.safe_http import HttpPolicy
from searchain.tools import HttpTool
from searchain.types import CompletionResult, Trace
from tool_server import FactServer, load_facts

KEY = "sk-rebel+Secret/key=="
KEY_FORMS = (KEY, urllib.parse.quote(KEY, safe=""), urllib.parse.quote_plus(KEY))
NOBEL = "Who won the Nobel Prize in Literature in the year Meryl Streep was born?"
DESCRIPTION = (
    "Fact search: finds short facts about people and countries (birthplace, birth date, "
    "currency, latitude, prizes)."
)


@pytest.fixture(scope="module")
def server(data_dir: Path):
    with FactServer(load_facts(data_dir), KEY) as srv:
        yield srv


@pytest.fixture(scope="module")
def embedder():
    return make_embedder("embedding")


def facts_tool(server: FactServer, **schema) -> HttpTool:
    q = {"type": "string", "description": "what to search for", **schema}
    return HttpTool(
        "facts",
        DESCRIPTION,
        {
            "type": "object",
            "properties": {"q": q},
            "required": ["q"],
            "additionalProperties": False,
        },
        url=server.url + "/search",
        static_params={"api_key": KEY},
        policy=HttpPolicy(allow_private=(f"127.0.0.1:{server.port}",)),
    )


class Observed(LLM):
    """Passes calls through to a real (or replayed) model and keeps the prompts it was sent."""

    backend = "observed"

    def __init__(self, inner: LLM) -> None:
        super().__init__(inner.model)
        self.inner, self.prompts = inner, []

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        self.prompts.append(prompt)
        return self.inner.complete(prompt, params)


def run(server, embedder, question=NOBEL, llm=None, tool=None, **cfg) -> Trace:
    config = RebelConfig(**{"max_depth": 2, "max_llm_calls": 20, "max_tool_calls": 6, **cfg})
    method = Rebel(llm or recorded_llm("rebel"), [tool or facts_tool(server)], config,
                   embedder=embedder)  # fmt: skip
    return method.run(question)


def nodes(trace: Trace) -> dict:
    return {n.id: n for n in trace.nodes}


def check_structure(trace: Trace) -> None:
    ids = {n.id for n in trace.nodes}
    assert trace.nodes[0].id == "q" and trace.nodes[0].query == trace.question
    assert all(n.parent in ids for n in trace.nodes[1:])
    assert trace.answer and trace.answer == trace.nodes[0].answer
    assert trace.usage.llm_calls + trace.usage.cached_calls == trace.meta["llm_calls"]
    assert Trace.from_dict(json.loads(json.dumps(trace.to_dict()))) == trace


# -- parsing what the model writes ----------------------------------------------------------
def test_subquestion_lists_are_parsed_without_comma_splitting() -> None:
    assert parse_subquestions(' ["Who, in 1990, led Peru?", "When?"] extra') == (
        ["Who, in 1990, led Peru?", "When?"], "json",
    )  # fmt: skip
    assert parse_subquestions('```json\n["A?",\n "B?"]\n```') == (["A?", "B?"], "json")
    assert parse_subquestions(' ["A, b?", "B is cut') == (["A, b?"], "json-partial")
    assert parse_subquestions("1. Where, exactly?\n2) When?") == (
        ["Where, exactly?", "When?"],
        "list",
    )
    assert parse_subquestions("Where was he born, and when?") == ([], "unparsed")
    assert parse_subquestions(" []") == ([], "json")


def test_tool_choice_input_and_yes_no_parsing() -> None:
    assert parse_tool_number(" 12", ["a", "b"]) is None  # never "1"+"2" glued into a choice
    assert parse_tool_number("Tool 2, then 1", ["a", "b"]) == 2
    assert parse_tool_number("the calculator", ["search", "calculator"]) == 2
    assert parse_json_object('{"q": "Rumi", "x": "y", "z') == ({"q": "Rumi", "x": "y"},
                                                               "json-partial")  # fmt: skip
    assert parse_json_object('{"q": "Rumi"}</A>') == ({"q": "Rumi"}, "json")
    assert parse_json_object('{"q": what to search for}')[0] is None
    assert (parse_yes_no(" Yes."), parse_yes_no("no"), parse_yes_no(" maybe")) == (
        True,
        False,
        None,
    )


# -- dedup at 0.98 (real MiniLM) --------------------------------------------------------------
def test_dedup_drops_copies_of_the_parent_at_098_and_stops_their_siblings_splitting(
    embedder,
) -> None:
    parent = "What is the currency in the birthplace of Rumi?"
    subs = [parent, "In which country was Rumi born?", "In which country was Rumi born ?",
            "What is the currency of that country?"]  # fmt: skip
    vecs = embedder.encode([parent, *subs])
    cos = vecs @ vecs.T
    assert cos[0, 1] > 0.98 and cos[0, 2] < 0.98 and cos[2, 3] > 0.98 and cos[0, 4] < 0.98
    method = Rebel(recorded_llm("rebel"), [], RebelConfig(), embedder=embedder)
    removed: list = []
    kept, allow_split = method._dedup(parent, subs, removed)
    assert kept == [subs[1], subs[3]]
    assert not allow_split  # a copy of the parent means the rest may not split again
    assert [r["reason"] for r in removed] == ["copies the question", "copies subquestion 2"]
    # Just below the threshold is kept: the paper's strict "> 0.98".
    loose = Rebel(recorded_llm("rebel"), [], RebelConfig(dedup_threshold=float(cos[0, 4]) + 1e-4),
                  embedder=embedder)  # fmt: skip
    assert subs[3] in loose._dedup(parent, subs, [])[0]


# -- the recursion on recorded real model outputs -----------------------------------------------
def test_recursion_facts_in_order_and_tools(server, embedder) -> None:
    before = len(server.requests)
    events: list[dict] = []
    with listening(events.append):
        trace = run(server, embedder)
    check_structure(trace)
    by_id = nodes(trace)
    root = by_id["q"]
    subs = root.meta["split"]["subquestions"]
    assert len(subs) == 2 and [by_id["q.1"].query, by_id["q.2"].query] == subs
    # Facts: each subquestion's answer is a fact, passed on to every later subquestion.
    q1, q2 = by_id["q.1"], by_id["q.2"]
    assert q2.meta["facts"][0] == [q1.query, q1.answer]
    assert root.meta["facts"] == [[q1.query, q1.answer], [q2.query, q2.answer]]
    order = [tuple(f) for f in trace.meta["facts"]]
    assert order.index((q1.query, q1.answer)) < order.index((q2.query, q2.answer))
    # Depth: q.* may split once more (max_depth=2), q.*.* may not.
    assert all(n.meta["depth"] <= 2 for n in trace.nodes)
    for n in trace.nodes:
        if n.meta["depth"] == 2:
            assert "skipped" in n.meta["split"]
    assert "max_depth (2) reached: not split further" in trace.meta["limits"]
    # Tools: every HTTP request is one recorded tool call; only the dynamic input is shown.
    tool_nodes = [n for n in trace.nodes if n.source == "tool"]
    assert tool_nodes and len(server.requests) - before == trace.meta["tool_calls"]
    for n in tool_nodes:
        assert set(n.meta["tool"]["input"]) == {"q"} and n.meta["tool"]["output"]
        assert n.meta["memory_check"]["decision"] == "tool"
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "answer"
    assert [e["text"] for e in events if e["event"] == "subquestion"][:2] == subs
    assert kinds.count("tool") == trace.meta["tool_calls"]


def test_a_copy_of_the_question_is_dropped_and_its_siblings_do_not_split(server, embedder):
    trace = run(server, embedder)
    dropped = [(n, r) for n in trace.nodes for r in n.meta["split"].get("removed", [])]
    assert dropped, "the recording should show a subquestion that copies its parent"
    node, removed = dropped[0]
    assert removed["reason"] == "copies the question" and removed["cosine"] > 0.98
    children = [n for n in trace.nodes if n.parent == node.id]
    assert children and all(
        c.meta["split"] == {"skipped": "the parent split copied its question"} for c in children
    )


def test_memory_check_yes_answers_without_a_tool(server, embedder) -> None:
    trace = run(server, embedder)
    from_memory = [n for n in trace.nodes if n.meta["memory_check"]["decision"] == "memory"]
    assert from_memory, "the recording should show a memory-check 'yes'"
    for n in from_memory:
        assert parse_yes_no(n.meta["memory_check"]["reply"]) is True
        assert "tool" not in n.meta and n.source == "llm" and n.answer
    assert trace.meta["tool_calls"] == sum(1 for n in trace.nodes if "tool" in n.meta)


def test_llm_call_budget_ends_cleanly_with_the_facts_so_far(server, embedder) -> None:
    full = run(server, embedder)
    trace = run(server, embedder, max_llm_calls=6)
    check_structure(trace)
    assert trace.meta["llm_calls"] == 6 < full.meta["llm_calls"]
    assert any("max_llm_calls (6) reached" in note for note in trace.meta["limits"])
    assert trace.nodes[0].meta["stopped"] == "max_llm_calls"
    assert trace.nodes[0].meta["facts"] == trace.meta["facts"]
    assert trace.answer  # the reserved call answered the question from what was found


def test_tool_budget_makes_later_steps_answer_from_memory(server, embedder) -> None:
    before = len(server.requests)
    trace = run(server, embedder, max_tool_calls=1)
    check_structure(trace)
    assert trace.meta["tool_calls"] == 1 and len(server.requests) - before == 1
    capped = [n for n in trace.nodes if "max_tool_calls" in n.meta.get("note", "")]
    assert capped and all(n.source == "llm" and n.answer for n in capped)
    assert any("max_tool_calls (1) reached" in note for note in trace.meta["limits"])


def test_invalid_tool_input_is_rejected_with_no_request(server, embedder) -> None:
    # The API takes at most 12 characters; the model's queries are longer.
    before = len(server.requests)
    trace = run(server, embedder, tool=facts_tool(server, maxLength=12))
    check_structure(trace)
    rejected = [
        n for n in trace.nodes if "input rejected" in n.meta.get("tool", {}).get("error", "")
    ]
    assert rejected, "the recording should show an over-long tool input"
    for n in rejected:
        err = n.meta["tool"]["error"]
        assert err.startswith("tool 'facts' input rejected: input.q: longer than 12 characters")
        assert err.endswith("no call was made")
        assert any(e.endswith(err) for e in trace.errors)
        assert n.source == "llm" and n.answer  # answered from memory instead
    accepted = sum(1 for n in trace.nodes if n.source == "tool")
    assert len(server.requests) - before == accepted


def test_the_static_key_never_reaches_prompts_traces_or_logs(
    server, embedder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    llm = Observed(recorded_llm("rebel"))
    before = len(server.requests)
    trace = run(server, embedder, llm=llm)
    assert trace.meta["tool_calls"] >= 1
    sent = server.requests[before:]
    assert all(f"api_key={urllib.parse.quote_plus(KEY)}" in path for path in sent)  # it was used
    seen = [json.dumps(trace.to_dict()), caplog.text, *llm.prompts, repr(trace)]
    for text in seen:
        for form in KEY_FORMS:
            assert form not in text
    assert any("api_key=***" in n.meta["tool"]["url"] for n in trace.nodes if n.source == "tool")


def test_registry_builds_rebel_from_a_tools_file(tmp_path: Path, server, monkeypatch) -> None:
    monkeypatch.setenv("FACTS_KEY", KEY)
    path = write_tools_file(tmp_path / "tools.yaml", server)
    method = build_method("rebel", recorded_llm("rebel"), None, tools=str(path), max_depth=2,
                          max_llm_calls=20, max_tool_calls=6, dedup="embedding")  # fmt: skip
    assert [t.name for t in method.tools] == ["facts"]  # type: ignore[attr-defined]
    trace = method.run(NOBEL)
    assert trace.answer == run(server, make_embedder("embedding")).answer


# -- the real model, end to end -----------------------------------------------------------------
@pytest.mark.slow
def test_end_to_end_real_model_and_real_tool_server(server, embedder, data_dir: Path) -> None:
    """A Compositional Celebrities question from the data, the real embedded model, the real
    local tool server: the trace shows the recursion and the facts, and matches the
    recordings the fast tests replay."""
    records = json.loads(
        (data_dir / "compositional_celebrities" / "compositional_celebrities.json").read_text()
    )["data"]
    assert any(r["Question"] == NOBEL for r in records)
    before = len(server.requests)
    live = run(server, embedder, llm=LocalLLM())
    check_structure(live)
    assert len(live.nodes) >= 3 and live.meta["facts"]
    assert len(server.requests) - before == live.meta["tool_calls"] >= 1
    if not RECORD:
        replay = run(server, embedder)
        assert [(n.id, n.query, n.answer) for n in live.nodes] == [
            (n.id, n.query, n.answer) for n in replay.nodes
        ], "recordings are stale: re-record with SEARCHAIN_RECORD=1"
    assert np.isfinite(live.wall_seconds)


# -- the command line ---------------------------------------------------------------------------
def write_tools_file(path: Path, server: FactServer) -> Path:
    path.write_text(
        f"tools:\n  - name: facts\n    description: {json.dumps(DESCRIPTION)}\n"
        "    parameters: {q: what to search for}\n"
        f"    http:\n      url: {server.url}/search\n"
        "      static_params: {api_key: '${FACTS_KEY}'}\n"
        f"      allow_private: ['127.0.0.1:{server.port}']\n"
    )
    return path


def test_cli_bad_tools_file_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from searchain.cli import app

    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    bad = tmp_path / "tools.yaml"
    bad.write_text("tools:\n  - builtin: shell\n")
    result = CliRunner().invoke(app, ["ask", "Q?", "--method", "rebel", "--tools", str(bad)])
    assert result.exit_code == 1
    assert "unknown builtin 'shell'" in " ".join(result.output.split())


@pytest.mark.slow
def test_cli_ask_rebel_with_a_tools_file(tmp_path: Path, server, monkeypatch) -> None:
    from typer.testing import CliRunner

    from searchain.cli import app

    monkeypatch.setenv("SEARCHAIN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FACTS_KEY", KEY)
    tools = write_tools_file(tmp_path / "tools.yaml", server)
    before = len(server.requests)
    args = ["ask", NOBEL, "--method", "rebel", "--tools", str(tools), "--max-depth", "1",
            "--max-llm-calls", "8", "--memory-check", "never", "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    trace = json.loads(result.output)
    assert trace["method"] == "rebel" and trace["answer"]
    assert trace["meta"]["tool_calls"] == len(server.requests) - before >= 1
    assert all(n["meta"]["memory_check"]["decision"] == "tool" for n in trace["nodes"]
               if "memory_check" in n["meta"])  # fmt: skip
    for form in KEY_FORMS:
        assert form not in result.output
    shown = CliRunner().invoke(app, [*args[:-1], "--show-tree"])  # cached calls: fast
    assert shown.exit_code == 0 and "REBEL" in shown.output and "facts" in shown.output
