"""The papers' baselines (direct prompting, CoT, Self-Ask with and without search, ReAct): loop
mechanics on recorded real model outputs over the real HotpotQA demo index, the parsers on the
odd things base models write, and the real model once per family. Re-record with
``SEARCHAIN_RECORD=1`` (delete tests/data/recordings/baselines.jsonl first)."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from recordings import RECORD, recorded_llm
from searchain import prompts
from searchain.eval.datasets import DATASETS, load_dataset
from searchain.eval.methods import describe
from searchain.events import listening
from searchain.llm.local import LocalLLM
from searchain.methods.baseline_util import final_answer
from searchain.methods.catalog import build_method, given_to, method_names
from searchain.methods.react import INVALID, ReAct, parse_action
from searchain.methods.self_ask import SelfAsk, follow_ups, pairs
from searchain.retrieval import BM25Index
from searchain.text import normalize_answer
from searchain.types import Trace

BASELINES = ("direct-prompting", "cot", "self-ask", "self-ask-no-search", "react")


@pytest.fixture(scope="module")
def questions(data_dir) -> list[str]:
    hotpot = [e.question for e in load_dataset("hotpotqa", limit=2, seed=None)]
    return [*hotpot, load_dataset("bamboogle", limit=1, seed=None)[0].question]


@pytest.fixture(scope="module")
def llm():
    return recorded_llm("baselines")


def check_trace(trace: Trace, index: BM25Index, k: int) -> None:
    assert trace.answer.strip() and trace.final_content.strip()
    assert trace.usage.prompt_tokens > 0 and trace.usage.completion_tokens > 0
    retrieved = [p.id for n in trace.nodes for p in n.passages]
    assert [p.id for p in trace.references] == list(dict.fromkeys(retrieved))
    for c in trace.citations:  # every mark points at a retrieved passage holding the answer
        assert c.origin == "post-hoc" and trace.references[c.mark - 1].id == c.passage_id
        assert f"[{c.mark}]" in c.sentence and c.sentence in trace.final_content
    assert Trace.from_dict(json.loads(json.dumps(trace.to_dict()))) == trace


# Direct prompting's recordings are of its 4-demo form; the paper's 0-demo default has its
# own recorded test below.
RECORDED_AS = {"direct-prompting": {"demos": 4}}


@pytest.mark.parametrize("name", BASELINES)
def test_replayed_runs_are_well_formed(name, llm, index, questions) -> None:
    method = build_method(name, llm, index, **RECORDED_AS.get(name, {}))
    for q in questions:
        events: list[dict] = []
        with listening(events.append):
            trace = method.run(q)
        assert trace.method == name and trace.question == q
        check_trace(trace, index, 3)
        assert events[0]["event"] == "start" and events[-1]["event"] == "answer"
        if not RECORD:
            assert trace.usage.llm_calls == 0 and trace.usage.cached_calls >= 1


def test_self_ask_follow_ups_are_answered_from_retrieval(llm, index, questions) -> None:
    method = SelfAsk(llm, index, k=3)
    trace = method.run(questions[0])
    assert trace.nodes and trace.answer
    for node in trace.nodes:
        assert node.source == "retrieval"
        assert [p.id for p in node.passages] == [p.id for p in index.search(node.query, k=3)]
        # The reader's answer went back into the prompt the model continued from.
        assert (
            f"Follow up: {node.query}\nIntermediate answer: {node.answer}."
            in (trace.meta["transcript"])
        )
    assert trace.meta["transcript"].rstrip().endswith(f"So the final answer is: {trace.answer}")
    # The model's calls: one per follow-up to ask it and one to read for it, one to finish.
    assert trace.usage.cached_calls + trace.usage.llm_calls == 2 * len(trace.nodes) + 1


def test_self_ask_follow_up_budget_ends_cleanly_with_a_note(llm, index, questions) -> None:
    trace = SelfAsk(llm, index, k=3, max_follow_ups=1).run(questions[0])
    assert len(trace.nodes) == 1
    assert any("follow-up budget (1) reached" in e for e in trace.errors)
    assert trace.answer and trace.meta["transcript"].count("Follow up:") == 1
    assert trace.meta["transcript"].rstrip().endswith(f"So the final answer is: {trace.answer}")


def test_self_ask_without_search_never_retrieves(llm, questions) -> None:
    trace = SelfAsk(llm, None).run(questions[0])
    assert trace.method == "self-ask-no-search" and not trace.references
    assert trace.nodes and all(n.source == "llm" and n.answer for n in trace.nodes)
    assert trace.usage.cached_calls + trace.usage.llm_calls in (1, 2)


def test_react_search_actions_really_retrieve(llm, index, questions) -> None:
    trace = ReAct(llm, index, k=1).run(questions[0])
    searches = [n for n in trace.nodes if n.meta["action"].startswith("Search[")]
    assert searches, "the recorded model searches at least once"
    seen: dict[str, int] = {}
    for n in searches:
        rank = seen.get(n.query.lower(), 0)  # a repeated query shows the next passage
        expected = index.search(n.query, k=rank + 1)[rank:]
        assert [p.id for p in n.passages] == [p.id for p in expected]
        assert n.meta["observation"].startswith(f"{expected[0].title}:")
        assert f"Observation {n.id}: {n.meta['observation']}" in trace.meta["transcript"]
        seen[n.query.lower()] = rank + 1
    assert trace.nodes[-1].meta["action"] == f"Finish[{trace.answer}]"


def test_react_step_budget_forces_a_finish_with_a_note(llm, index, questions) -> None:
    full = ReAct(llm, index, k=1).run(questions[0])
    assert full.rounds >= 3, "the recorded run needs 3+ steps for this test"
    trace = ReAct(llm, index, k=1, max_steps=2).run(questions[0])
    assert trace.rounds == 2 and len(trace.nodes) == 3
    assert trace.nodes[-1].meta["forced"] and trace.nodes[-1].answer == trace.answer
    assert any("step budget (2) reached" in e for e in trace.errors)
    assert trace.meta["transcript"].endswith("Observation 2: " + trace.nodes[1].meta["observation"])


def test_parsers_on_odd_model_output() -> None:
    assert final_answer("x\nSo the final answer is: Paris.\nQuestion: y") == "Paris"
    assert final_answer('so the answer is "Joseph Ball"') == "Joseph Ball"
    assert final_answer("So the final answer is:") == ""
    assert final_answer("I do not know") is None
    assert follow_ups(" Yes.\nFollow up: A?\nfollow-up : B?\nFollow up:\n") == ["A?", "B?"]
    text = "Follow up: A?\nIntermediate answer: a.\nFollow up: B?\nIntermediate Answer: b\n"
    text += "Follow up: C?"
    assert pairs(text) == [("A?", "a"), ("B?", "b"), ("C?", "")]
    assert parse_action(" Search[Colorado orogeny]\nObservation") == ("search", "Colorado orogeny")
    assert parse_action("finish[ 1,800 to 7,000 ft ]") == ("finish", "1,800 to 7,000 ft")
    assert parse_action("Search[Milhouse named after") == ("search", "Milhouse named after")
    assert parse_action("I should search") == ("", "I should search")
    assert parse_action("Lookup[eastern sector]") == ("lookup", "eastern sector")
    assert "Search[query]" in INVALID


def test_every_name_builds_and_ablations_are_configured(llm, index) -> None:
    for name in method_names():
        method = build_method(name, llm, index, **given_to(name, {"dedup": "exact"}))
        expected = "retrieve-read" if name == "direct-retrieval" else name
        assert method.name == expected
    cfg = build_method("searchain-no-ir", llm, index).config  # type: ignore[attr-defined]
    assert (cfg.use_ir, cfg.verification, cfg.completion) == (False, True, True)
    cfg = build_method("searchain-no-completion", llm, index, dedup="exact").config  # type: ignore[attr-defined]
    assert (cfg.use_ir, cfg.verification, cfg.completion) == (True, True, False)
    with pytest.raises(ValueError, match="needs a retriever"):
        build_method("react", llm, None)
    # What the run manifest records for a name: the resolved configuration.
    d = describe(build_method("searchain-no-verification", llm, index, dedup="exact"))
    assert (d["name"], d["class"], d["verification"], d["use_ir"]) == (
        "searchain-no-verification", "SearChain", False, True,
    )  # fmt: skip
    d = describe(build_method("react", llm, index, k=2))
    assert (d["class"], d["k"], d["max_steps"], d["retriever"]) == ("ReAct", 2, 7, "BM25Index")


def test_a_setting_added_later_keeps_earlier_run_manifests_valid(llm, index, tmp_path) -> None:
    """A SearChain setting that did not exist when a run started is left out of the manifest
    at the value that reproduces the old behaviour, so that run resumes; any other value is
    recorded, so a run made with it is refused as another configuration."""
    from searchain.eval.runner import RunConfigMismatch, prepare_run_dir

    old = describe(build_method("searchain", llm, index, dedup="exact"))
    assert "tracing_context" not in old  # "dialogue": what the chat form did before
    new = describe(build_method("searchain", llm, index, dedup="exact", tracing_context="demos"))
    assert new["tracing_context"] == "demos"
    prepare_run_dir(tmp_path, {"method_config": {"searchain": old}})
    prepare_run_dir(tmp_path, {"method_config": {"searchain": old}})  # resumes
    with pytest.raises(RunConfigMismatch, match="method_config"):
        prepare_run_dir(tmp_path, {"method_config": {"searchain": new}})


def test_a_setting_without_effect_on_the_task_is_left_out_of_the_manifest(llm, index) -> None:
    """The label instruction of tracing changes nothing on a span task (its turn is the same
    word for word), so a HotpotQA run made before the setting existed still lends its records;
    on a labelled task it is recorded, since it changes the turn."""
    span = describe(build_method("searchain", llm, index, dedup="exact"))
    assert "label_in_tracing" not in span
    labelled = describe(build_method("searchain", llm, index, dedup="exact", task="factcheck"))
    assert labelled["label_in_tracing"] is True
    off = describe(build_method("searchain", llm, index, dedup="exact", task="factcheck",
                                label_in_tracing=False))  # fmt: skip
    assert "label_in_tracing" not in off  # the value from before the setting existed


def test_no_demo_comes_from_an_evaluated_data_set(data_dir) -> None:
    demo_questions = set()
    for name in ("direct", "cot", "self_ask", "react"):
        body = prompts.load(f"baselines/{name}").body
        demo_questions |= {q.strip().lower() for q in re.findall(r"^Question: (.+)$", body, re.M)}
    demo_questions.discard("{question}")
    assert len(demo_questions) == 7
    for dataset in DATASETS:
        asked = {e.question.strip().lower() for e in load_dataset(dataset)}
        assert not demo_questions & asked, dataset


# -- the other methods' demos: REBEL (ours), SearChain's and Think&Cite's (the papers') ------
_STOP = set("a an the of in on at to is was what who which when where how for by and or born "
            "it are you do does did that this with from be".split())  # fmt: skip


def _content(q: str) -> frozenset[str]:
    return frozenset(t for t in re.findall(r"[a-z0-9]+", q.lower()) if t not in _STOP)


def _demos(family: str) -> tuple[str, list[str]]:
    """A prompt family's demo text and every question its demos ask (the questions, their
    subquestions, the memory facts' questions)."""
    texts, asked = [], []
    if family == "rebel":
        for name in ("split", "split_empty", "memory_check", "pick_tool", "tool_input",
                     "answer_memory", "answer_tool"):  # fmt: skip
            body = prompts.load(f"rebel/{name}").body
            texts.append(body)
            asked += re.findall(r'^Q: "(.+?)" Is the answer', body, re.M)  # memory check
            asked += re.findall(r'^Q: ([^"].*)$', body, re.M)
            for subs in re.findall(r"^Subquestions: (\[.*\])$", body, re.M):
                asked += json.loads(subs)
            asked += re.findall(r"^(?:Memory: |- )(.+?\?)", body, re.M)
            asked += re.findall(r"<Q>(.+?)</Q>", body)
    elif family == "searchain":
        for name in ("multihop", "yesno", "factcheck", "longform", "noir", "noir_yesno",
                     "noir_factcheck", "noir_longform"):  # fmt: skip
            body = prompts.load(f"searchain/coq_{name}").body
            texts.append(body)
            yes_no = r'(?: \(The answer can only be "Yes" or "No"\))?'
            for q in re.findall(rf'^\[Question\]: ?"(.+?)"{yes_no}$', body, re.M):
                asked.append(re.sub(r"\s*\((?:SUPPORTS or REFUTES)\)\?$", "", q))
            for q in re.findall(r"^\[(?:Unsolved )?Query(?: \d+)?\]: (.+)$", body, re.M):
                asked.append(q.removesuffix(" Instruction: Please stop your generation."))
    else:
        for name in ("asqa", "eli5", "qampari"):
            path = resources.files(prompts) / "thinkcite" / f"alce_{name}.json"
            demos = json.loads(path.read_text("utf-8"))["demos"]
            texts.append(json.dumps(demos, ensure_ascii=False))
            asked += [d["question"] for d in demos]
    return "\n".join(texts), [q.strip() for q in asked if "{" not in q]


@pytest.fixture(scope="module")
def evaluated(data_dir) -> dict:
    """Every question `searchain eval` can load, Compositional Celebrities' sub-questions
    (Q1/Q2) and the celebrities it asks about."""
    asked = {normalize_answer(e.question): name for name in DATASETS
             for e in load_dataset(name, seed=None)}  # fmt: skip
    path = data_dir / "compositional_celebrities" / "compositional_celebrities.json"
    records = json.loads(path.read_text())["data"]
    for r in records:
        for key in ("Q1", "Q2"):
            asked.setdefault(normalize_answer(r[key]), f"compositional-celebrities {key}")
    persons = sorted({r["person"] for r in records})
    # The gold answers that are words (capitals, currencies, laureates...; not the numbers).
    golds = sorted({str(a) for r in records for a in r["Answer"]
                    if re.search(r"[A-Za-z]", str(a)) and len(str(a)) >= 3})  # fmt: skip
    assert len(asked) > 30_000 and len(persons) > 1_000 and len(golds) > 500
    return {"asked": asked, "content": [_content(q) for q in asked], "persons": persons,
            "golds": golds}  # fmt: skip


FAMILIES = ["rebel", "searchain", "thinkcite"]


@pytest.mark.parametrize("family", FAMILIES)
def test_no_demo_question_is_an_evaluated_question_or_subquestion(family, evaluated) -> None:
    _, questions = _demos(family)
    # REBEL: the split demos of both split prompts (the paper's lists a one-tool question as its
    # own subquestion)
    assert len(questions) == {"rebel": 35, "searchain": 101, "thinkcite": 12}[family]
    found = [(q, evaluated["asked"][normalize_answer(q)]) for q in questions
             if normalize_answer(q) in evaluated["asked"]]  # fmt: skip
    assert not found
    # Nor a rewording: a demo question naming something ("... Norway?") whose words all
    # occur in one evaluated question ("In what year was Taylor Swift born?" against the
    # Compositional Celebrities question about Taylor Swift's birth year, say).
    named = [q for q in questions if re.search(r"\s[A-Z0-9]", q)]
    assert named
    reworded = [q for q in named if any(_content(q) <= c for c in evaluated["content"])]
    assert not reworded


# Compositional Celebrities is REBEL's benchmark (the paper's; the README table): its people
# and gold answers must not appear in REBEL's demos. SearChain and Think&Cite are evaluated on
# other data (their demos name e.g. Eddie Murphy or Berlin, harmless there).
@pytest.mark.parametrize("family", ["rebel"])
def test_no_demo_names_a_compositional_celebrity(family, evaluated) -> None:
    text, _ = _demos(family)
    named = [p for p in evaluated["persons"] if re.search(rf"\b{re.escape(p)}\b", text)]
    assert not named


@pytest.mark.parametrize("family", ["rebel"])
def test_no_demo_writes_a_compositional_celebrities_gold_answer(family, evaluated) -> None:
    # A small model copies demo words into its answers; a demo naming "Berlin" would earn
    # cover-EM on every "capital of the birthplace of <someone born in Germany>" item.
    text, _ = _demos(family)
    written = [a for a in evaluated["golds"] if re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text)]
    assert not written


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cot", "self-ask", "react"])  # one per family
def test_recordings_match_the_real_model(name, index, questions) -> None:
    live = build_method(name, LocalLLM(), index).run(questions[0])
    replay = build_method(name, recorded_llm("baselines"), index).run(questions[0])
    check_trace(live, index, 3)
    assert live.final_content == replay.final_content, "recordings are stale: SEARCHAIN_RECORD=1"
    assert [n.query for n in live.nodes] == [n.query for n in replay.nodes]


# The README's Compositional Celebrities table also runs Self-Ask and direct prompting. Their
# demos are the Self-Ask paper's own (written for this benchmark): they name Muhammad Ali and
# Steven Spielberg, who are the subjects of 4 of the 8,693 items, but say nothing those items
# ask (birth years and what happened in them). These checks keep it that way.
CC_BASELINES = ["direct", "cot", "self_ask"]


@pytest.mark.parametrize("name", CC_BASELINES)
def test_baseline_demos_write_no_compositional_celebrities_gold_answer(name, evaluated) -> None:
    text = prompts.load(f"baselines/{name}").body
    written = [a for a in evaluated["golds"] if re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text)]
    assert not written


@pytest.mark.parametrize("name", CC_BASELINES)
def test_baseline_demos_reveal_nothing_about_the_celebrities_they_name(name, data_dir) -> None:
    text = prompts.load(f"baselines/{name}").body
    path = data_dir / "compositional_celebrities" / "compositional_celebrities.json"
    records = json.loads(path.read_text())["data"]
    named = {r["person"] for r in records if re.search(rf"\b{re.escape(r['person'])}\b", text)}
    assert named <= {"Muhammad Ali", "Steven Spielberg"}, "a new demo names another celebrity"
    for r in records:
        if r["person"] in named:
            # Neither the answer nor the intermediate one (the birth year, the country...).
            for a in [*r["Answer"], *r["A1"], *r.get("A2", [])]:
                assert not re.search(rf"(?<!\w){re.escape(str(a))}(?!\w)", text), r["Question"]
