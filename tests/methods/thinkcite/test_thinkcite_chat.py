"""Think&Cite and the LLM NLI judge in chat form: the reply parsers on real chat replies, the
message protocol, and end to end with the real 0.5B instruct model (``chat_llm``) over the
demo BM25 index on HotpotQA questions."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from thinkcite_kit import DOCS, ListRetriever, ScriptedChat, kept_dir, requantised

from searchain import citations, prompts
from searchain.llm import LLM, LLMError
from searchain.llm.base import GenerationParams
from searchain.methods.catalog import build_method
from searchain.methods.thinkcite import chat
from searchain.methods.thinkcite import prompting as tp
from searchain.methods.thinkcite.reward import ProgressReward, RewardConfig
from searchain.readers.nli import LLMJudge, yes_no
from searchain.types import CompletionResult, Trace

# -- reply parsing ------------------------------------------------------------------------------


SHIRLEY = "Shirley Temple played Corliss Archer [1]."
NOT_A_QUERY = "Search for the director of Big Stone Gap"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Search: Corliss Archer Kiss and Tell", ("search", "Corliss Archer Kiss and Tell", True)),
        ("**Search:** Kiss and Tell 1945 film", ("search", "Kiss and Tell 1945 film", True)),
        ('Search: "Big Stone Gap director"', ("search", "Big Stone Gap director", True)),
        ("Search[Animorphs companion books]", ("search", "Animorphs companion books", True)),
        ("Action: Search: Shirley Temple", ("search", "Shirley Temple", True)),
        ("Sure! Here is the next action:\n\nSearch: Temple", ("search", "Temple", True)),
        ("Sure! Search: Shirley Temple", ("search", "Shirley Temple", True)),
        ("```\nOutput: It ran on CBS [2].\n```", ("output", "It ran on CBS [2].", True)),
        ("### Output\n" + SHIRLEY, ("output", SHIRLEY, True)),
        ("- Reflexion: no actress named.", ("reflexion", "no actress named.", True)),
        ("Reflection: search her later career", ("reflexion", "search her later career", True)),
        ("End", ("end", "", True)),
        ("**End**.", ("end", "", True)),
        # Sentences that only start like a label stay sentences.
        ("End of the war came in 1945 [1].", ("", "End of the war came in 1945 [1].", False)),
        (NOT_A_QUERY, ("", NOT_A_QUERY, False)),
        (SHIRLEY, ("", SHIRLEY, False)),
        ("", ("", "", False)),
    ],
)
def test_parse_reply_reads_actions_through_chat_habits(reply, expected):
    assert chat.parse_reply(reply) == expected


def test_reply_argument_notes_a_missing_or_other_label_with_the_raw_reply():
    assert chat.reply_argument("Search: Kiss and Tell", "search") == ("Kiss and Tell", None)
    arg, note = chat.reply_argument("Kiss and Tell film cast", "search")
    assert arg == "Kiss and Tell film cast" and note and "unlabelled" in note
    arg, note = chat.reply_argument("Output: It is a film [1].", "search")
    assert arg == "It is a film [1]." and note and "'output'" in note and "raw" in note
    arg, note = chat.reply_argument("Output:", "output")
    assert arg == "" and note and "empty" in note


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Yes", True), ("No", False), ("yes.", True), ("NO", False), ("**Yes**", True),
        ("Answer: No", False), ("Supported: yes", True), ('"No."', False),
        ("Yes, the premise states it.", True), ("Nope", None), ("Maybe", None), ("", None),
    ],
)  # fmt: skip
def test_yes_no_reads_a_chat_verdict(reply, verdict):
    assert yes_no(reply) is verdict


# -- the message protocol, with a scripted chat client -------------------------------------------


def test_chat_agent_sends_demos_and_path_as_a_dialogue():
    replies = [
        "Sure! Search: Kiss and Tell Corliss Archer",  # first search (labelled after a preamble)
        "Reflexion: the documents do not say her later career.",
        "**Search:** Shirley Temple career",
        "Output: Shirley Temple, who played Corliss Archer [1], was Chief of Protocol [2].",
    ]
    llm = ScriptedChat(replies)
    judge = LLMJudge(llm)
    method = build_method("thinkcite", llm, ListRetriever(DOCS), judge=judge, max_iterations=1,
                          n_children=1, max_reflections=1, k=1, resamples=0, n_demos=2,
                          demo_doc_words=60, hide_seen=True, reward_reference="none")  # fmt: skip
    question = "What government position was held by the woman who played Corliss?"
    trace = method.run(question)
    assert trace.meta["prompt_form"] == "chat"
    calls = [c for c in llm.calls if isinstance(c, list)]
    assert len(calls) == 4
    instruction, demos = tp.header_parts("asqa", 2, 60)
    for msgs in calls:
        assert msgs[0] == {
            "role": "system",
            "content": instruction + "\n\nReply with exactly one action.",
        }
        roles = [m["role"] for m in msgs[1:]]
        assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"]
        # The two demos come first, each opened by its question, then this question.
        opened = [i for i, m in enumerate(msgs) if m["content"].startswith("Question: ")]
        assert len(opened) == 3 and msgs[opened[2]]["content"].startswith("Question: " + question)
        assert msgs[opened[0]]["content"].startswith(demos[0].split("\n")[0])
        assert msgs[opened[2] - 1] == {"role": "assistant", "content": "End"}
    tail = [m["content"] for m in calls[3][-7:]]
    assert tail == [
        f"Question: {question}\n\n{chat.REQUESTS['search']}",
        "Search: Kiss and Tell Corliss Archer",
        f"Document [1](Title: Kiss and Tell): {DOCS[0].text}\n\n{chat.REQUESTS['reflexion']}",
        "Reflexion: the documents do not say her later career.",
        chat.REQUESTS["search"],
        "Search: Shirley Temple career",
        f"Document [2](Title: Shirley Temple): {DOCS[1].text}\n\n"
        + chat.request_text("output", ["[1]", "[2]"]),
    ]
    output = next(n for n in trace.nodes if n.meta["action"] == "output")
    assert output.meta["searches"][0]["query"] == "Kiss and Tell Corliss Archer"
    # The completion form's citation rule applies: a sentence's marks go to its end.
    assert (
        output.answer == "Shirley Temple, who played Corliss Archer, was Chief of Protocol [1][2]."
    )
    assert [c.passage_id for c in trace.citations] == ["p1", "p2"]
    # The judge scored "Yes" / "No" replies to the chat form of its prompt.
    scored = [c for c in llm.calls if isinstance(c, tuple)]
    assert scored and {c[2] for c in scored} == {"Yes", "No"}
    assert trace.meta["judge_modes"]["scored"] > 0 and trace.meta["judge_modes"]["generated"] == 0


def test_dialogue_asks_for_each_action_after_its_observations():
    trace = "Question: Q?\nSearch: a\nDocument [1](Title: T): x\nOutput: It is x [1].\nEnd"
    turns = chat.dialogue(trace, None)
    assert [t["content"] for t in turns] == [
        f"Question: Q?\n\n{chat.REQUESTS['search']}",
        "Search: a",
        "Document [1](Title: T): x\n\n" + chat.request_text("output", ["[1]"]),
        "Output: It is x [1].",
        chat.REQUESTS["next"],
        "End",
    ]
    turns = chat.dialogue("Question: Q?\nSearch: a\nDocument [1](Title: T): x", "reflexion")
    assert turns[-1] == {
        "role": "user",
        "content": f"Document [1](Title: T): x\n\n{chat.REQUESTS['reflexion']}",
    }


def test_judge_without_scoring_reads_generated_replies_and_says_so():
    llm = ScriptedChat(["**Yes**", "No, it does not.", "I cannot tell."], can_score=False)
    judge = LLMJudge(llm)
    assert judge.entails("Paris is in France.", "Paris is in France.")
    assert not judge.entails("Paris is in France.", "Paris is in Spain.")
    assert not judge.entails("Paris is in France.", "Paris has 2 million people.")
    assert judge.modes == {"scored": 0, "generated": 3, "unparsed": 1}
    assert judge.unparsed == ["I cannot tell."]
    assert judge.probability("Paris is in France.", "Paris is in France.") is None


def test_rg_scores_chat_models_on_the_chat_context_and_fails_loudly_without_scoring():
    policy, reference = ScriptedChat([]), ScriptedChat([])
    reward = ProgressReward(RewardConfig(use_ra=False), model=policy, reference=reference)
    assert reward.forms == {"model": "chat", "reference": "chat"}
    r = reward("Who?", ["It was her [1].", "She served [2]."], [])
    assert r.parts["r_g"] == 0.0  # same scores from both models
    _, msgs, cont = policy.calls[-1]
    assert cont == "She served." and "Answer so far: It was her." in msgs[-1]["content"]
    first = policy.calls[0][1][-1]["content"]
    assert first == prompts.messages("thinkcite/reward_context", question="Who?",
                                     answer="(none yet)")[-1]["content"]  # fmt: skip
    blind = ProgressReward(
        RewardConfig(use_ra=False), model=ScriptedChat([], can_score=False), reference=reference
    )
    with pytest.raises(LLMError, match="cannot score"):
        blind("Who?", ["It was her [1]."], [])


# -- the real 0.5B instruct model -----------------------------------------------------------------

PREMISE = (
    "Title: Shirley Temple\nShirley Temple Black was an American actress who later served as "
    "Chief of Protocol of the United States."
)
ENTAILED = "Shirley Temple served as Chief of Protocol of the United States."
CONTRADICTED = "Shirley Temple was a professional football player in Germany."


class Unscored(LLM):
    """A chat client that cannot score continuations (like a chat endpoint without echo)."""

    backend = "unscored"
    form = "chat"

    def __init__(self, inner: LLM) -> None:
        super().__init__(inner.model)
        self.inner = inner
        self.replies: list[str] = []

    def _chat(self, messages: list[dict[str, str]], params: GenerationParams) -> CompletionResult:
        r = self.inner.chat(messages, params)
        self.replies.append(r.text)
        return r

    def _complete(self, prompt: str, params: GenerationParams) -> CompletionResult:
        raise AssertionError("a chat-form client must not get completion prompts")


@pytest.mark.slow
def test_llm_judge_in_chat_form_with_the_real_model(chat_llm):
    judge = LLMJudge(chat_llm)
    assert judge.form == "chat"
    p_yes = judge.probability(PREMISE, ENTAILED)
    p_no = judge.probability(PREMISE, CONTRADICTED)
    assert p_yes is not None and p_no is not None
    assert p_yes > 0.5 > p_no  # observed: 0.605 and 0.109
    assert judge.entails(PREMISE, ENTAILED) and not judge.entails(PREMISE, CONTRADICTED)
    assert judge.modes == {"scored": 2, "generated": 0, "unparsed": 0}
    # A client that cannot score: the reply is read instead, and the judge says so.
    client = Unscored(chat_llm)
    generated = LLMJudge(client)
    assert generated.entails(PREMISE, ENTAILED) and not generated.entails(PREMISE, CONTRADICTED)
    assert generated.modes == {"scored": 0, "generated": 2, "unparsed": 0}
    assert [yes_no(r) for r in client.replies] == [True, False]  # observed: "Yes", "No"


@pytest.fixture(scope="session")
def reference_chat_gguf(request, chat_model_path):
    """The 0.5B instruct GGUF requantised to Q3_K_S by llama.cpp's own quantiser (seconds), a
    genuinely different model with the same chat template; cached in the pytest cache."""
    out = kept_dir(request, "thinkcite-chat-reference") / "qwen-0.5b-q3_k_s.gguf"
    return requantised(chat_model_path, out)


@pytest.mark.slow
def test_rg_of_two_real_chat_models_reads_the_chat_context(chat_llm, reference_chat_gguf):
    from searchain.llm.local import LocalLLM

    reference = LocalLLM(reference_chat_gguf, n_ctx=1024, n_threads=1, api="auto")
    assert reference.form == "chat"
    prm = ProgressReward(RewardConfig(use_ra=False), model=chat_llm, reference=reference)
    assert prm.forms == {"model": "chat", "reference": "chat"} and not prm.status
    question = "Who portrayed Corliss Archer in the film Kiss and Tell?"
    sentences = ["Shirley Temple portrayed Corliss Archer [1].", "She was born in 1928 [2]."]
    r = prm(question, sentences, [])
    ratios = []
    for k, s in enumerate(["Shirley Temple portrayed Corliss Archer.", "She was born in 1928."]):
        answer = " ".join(["Shirley Temple portrayed Corliss Archer."][:k]) or "(none yet)"
        msgs = prompts.messages("thinkcite/reward_context", question=question, answer=answer)
        ratios.append(chat_llm.score_chat(msgs, s).total - reference.score_chat(msgs, s).total)
    assert all(math.isfinite(x) and x != 0.0 for x in ratios)
    assert r.parts["r_g"] == pytest.approx(sum(ratios) / 2, abs=1e-6)
    assert prm.usage.llm_calls == 4  # one scoring call per model and sentence


def run_on_hotpot(chat_llm, question: str, **options: Any):
    from searchain.retrieval.demo import default_index

    small = dict(max_iterations=2, n_children=2, max_reflections=1, n_demos=1,
                 reward_reference="none")  # fmt: skip
    method = build_method("thinkcite", chat_llm, default_index(), **{**small, **options})
    return method.run(question)


@pytest.mark.slow
def test_thinkcite_in_chat_form_answers_hotpotqa_with_citations(chat_llm, hotpot):
    """Two HotpotQA questions on the demo index with the smallest budget. What the 0.5B model
    did (recorded while writing this): it searches on topic ("Search: Kiss and Tell"),
    reflects in the demos' style ("Reflexion: Document [1] does not answer the question;
    better search ..."), writes sentences copied from a retrieved document, usually without
    [n] marks (attached post-hoc and noted), and ends after one sentence."""
    for i in (0, 2):
        trace = run_on_hotpot(chat_llm, hotpot[i]["question_text"])
        assert Trace.from_dict(json.loads(json.dumps(trace.to_dict()))).to_dict() == trace.to_dict()
        meta = trace.meta
        assert meta["prompt_form"] == "chat" and meta["iterations"] >= 1
        assert meta["judge_modes"]["scored"] > 0 and meta["judge_modes"]["unparsed"] == 0
        outputs = [n for n in trace.nodes if n.meta["action"] == "output"]
        assert outputs and all(n.meta["searches"] and n.query for n in outputs)
        for sentence in (x for n in outputs for x in citations.split_sentences(n.answer or "")):
            assert 1 <= len(set(citations.marks(sentence))) <= 3, sentence
        # The final answer: non-empty, every [n] resolves to a passage shown on its path.
        assert trace.final_content.strip()
        assert trace.citations and all(c.passage_id for c in trace.citations)
        refs = {p.id for p in trace.references}
        assert {c.passage_id for c in trace.citations} <= refs
        # Not the demo's content: the dialogue keeps the model on the retrieved documents.
        assert "Mawsynram" not in trace.final_content and "rainfall" not in trace.final_content
        # Every reply that could not be read as asked is on record, with its raw text.
        for note in (note for n in outputs for note in n.meta["notes"]):
            assert any(k in note for k in ("raw", "post-hoc", "top-ranked", "dropped", "stopped"))
        assert trace.usage.llm_calls > 0


def test_search_returns_the_querys_top_k_even_when_shown_before():
    """Issue 29 T4: the paper returns each query's top-K, so a passage already on the path
    comes back under a new number (its own demo shows one passage twice); hide_seen=True is
    this code's earlier behaviour, kept as an option."""
    replies = [
        "Search: Kiss and Tell Corliss Archer",
        "Reflexion: the documents do not say her later career.",
        "Search: Shirley Temple career",
        "Output: Shirley Temple played Corliss Archer [1].",
    ]
    question = "What government position was held by the woman who played Corliss?"
    shown = {}
    for hide in (False, True):
        llm = ScriptedChat(list(replies))
        method = build_method("thinkcite", llm, ListRetriever(DOCS), judge=LLMJudge(llm),
                              max_iterations=1, n_children=1, max_reflections=1, k=1,
                              resamples=0, hide_seen=hide, reward_reference="none")  # fmt: skip
        method.run(question)
        last = [c for c in llm.calls if isinstance(c, list)][-1]
        shown[hide] = next(m["content"] for m in reversed(last)  # this question's, not a demo's
                           if m["content"].startswith("Document [2]"))  # fmt: skip
    assert shown[False].startswith("Document [2](Title: Kiss and Tell)")  # a repeat, renumbered
    assert shown[True].startswith("Document [2](Title: Shirley Temple)")


def test_a_sentence_cites_its_own_steps_documents():
    """Issue 29 T8: the paper's C_t cites D_t, the documents of the step that writes the
    sentence; a mark to an earlier step's document is dropped (noted). cite_scope="path" is
    the completion form's earlier behaviour, kept as an option."""
    from searchain.methods.thinkcite.agent import AgentConfig, ThinkCiteProblem
    from searchain.methods.thinkcite.reward import ProgressReward, RewardConfig

    earlier = tp.Step("output", [tp.Search("Kiss and Tell", 1, [DOCS[0]])],
                      "Shirley Temple played Corliss Archer [1].", [1])  # fmt: skip
    cited = {}
    for scope in ("step", "path"):
        llm = ScriptedChat(["Search: Shirley Temple career",
                            "Output: She later served as Chief of Protocol [1][2]."])  # fmt: skip
        reward = ProgressReward(RewardConfig(use_rg=False), judge=LLMJudge(llm))  # not called
        config = AgentConfig(k=1, reflection=False, cite_scope=scope, resamples=0)
        problem = ThinkCiteProblem("Who played Corliss?", llm, ListRetriever(DOCS), reward, config)
        step = problem.child([tp.Step("root"), earlier], seed=0)
        cited[scope] = (step.citations, step.notes)
    assert cited["step"][0] == [2] and any("dropped citation marks [1]" in n
                                           for n in cited["step"][1])  # fmt: skip
    assert cited["path"][0] == [1, 2]


def test_the_decision_that_may_write_the_sentence_is_sampled_like_it():
    """Issue 29 T9: after a reflection the model decides between reflecting again and writing
    its sentence; that reply may be the sentence, which the paper samples, so it is sampled
    with the child's seed (the reflection and the follow-up search stay greedy)."""
    from searchain.methods.thinkcite.agent import AgentConfig, ThinkCiteProblem
    from searchain.methods.thinkcite.reward import ProgressReward, RewardConfig

    class Recorded(ScriptedChat):
        def _chat(self, messages, params):  # type: ignore[no-untyped-def]
            self.seen = [*getattr(self, "seen", []), params]
            return super()._chat(messages, params)

    llm = Recorded(["Search: Kiss and Tell", "Reflexion: not her later career.",
                    "Search: Shirley Temple career",
                    "Output: She served as Chief of Protocol [2]."])  # fmt: skip
    reward = ProgressReward(RewardConfig(use_rg=False), judge=LLMJudge(llm))  # not called
    config = AgentConfig(k=1, max_reflections=3, resamples=0)
    step = ThinkCiteProblem("Who played Corliss?", llm, ListRetriever(DOCS), reward,
                            config).child([tp.Step("root")], seed=7)  # fmt: skip
    assert step.sentence.startswith("She served as Chief of Protocol")
    temps = [p.temperature for p in llm.seen]
    assert temps[0] == temps[3] == config.temperature  # first action, decision: sampled
    assert temps[1] in (None, 0.0) and temps[2] in (None, 0.0)  # reflection, search: greedy
