"""Every prompt in two forms: the completion form (base models) and the chat form (messages).

The chat files are data, parsed by ``prompts.parse_chat``; these tests check every packaged
chat form parses, asks for the same fields as its completion form, and fills into messages
that chat APIs accept (alternating user/assistant turns after an optional system message,
ending with a user turn).
"""

from __future__ import annotations

import itertools
from importlib import resources
from pathlib import Path

import pytest

from searchain import prompts
from searchain.answers import short_answer

ROOT = Path(str(resources.files("searchain.prompts")))
CHAT_FILES = sorted(ROOT.rglob("*.chat.txt"))


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT)).removesuffix(".chat.txt")


def test_there_are_chat_forms() -> None:
    names = {_name(p) for p in CHAT_FILES}
    needed = {"reader_extract", "retrieve_read", "baselines/direct", "baselines/cot"}
    needed |= {f"searchain/{n}" for n in ("coq_multihop", "tracing", "feedback_verify")}
    assert needed <= names


@pytest.mark.parametrize("path", CHAT_FILES, ids=_name)
def test_each_chat_form_parses_and_matches_its_completion_form(path: Path) -> None:
    name = _name(path)
    chat = prompts.load_chat(name)
    values = {f: f"<{f}>" for f in chat.fields}
    messages = prompts.messages(name, **values)
    roles = [m["role"] for m in messages]
    assert set(roles) <= {"system", "user", "assistant"}
    assert "system" not in roles[1:], "a system message can only come first"
    turns = [r for r in roles if r != "system"]
    if name.startswith("searchain/feedback") or name == "searchain/tracing":
        assert turns == ["user"]  # one more user turn of the SearChain dialogue
    elif name.endswith("demo"):  # one demo (a user/assistant pair) that others repeat
        assert turns == ["user", "assistant"]
    elif not turns:  # a system message; the method builds the dialogue after it
        assert roles == ["system"]
    else:
        assert turns[-1] == "user"
        assert all(a != b for a, b in itertools.pairwise(turns)), "turns alternate"
    text = "\n".join(m["content"] for m in messages)
    for f in chat.fields:
        assert f"<{f}>" in text  # every field lands somewhere
    assert "=== " not in text and not any(
        m["content"] != m["content"].strip("\n") for m in messages
    )


def test_chat_template_errors_are_clear(tmp_path: Path) -> None:
    bad = tmp_path / "bad.chat.txt"
    bad.write_text("# fields: q\nno role line\n=== user ===\n{q}\n")
    with pytest.raises(ValueError, match="before the first"):
        prompts.load_chat(str(bad))
    user = tmp_path / "mine.txt"
    user.write_text("# fields: q\nQ: {q}\nA:\n")
    with pytest.raises(FileNotFoundError, match="no chat form"):
        prompts.load_chat(str(user))
    assert not prompts.has_chat(str(user))
    (tmp_path / "mine.chat.txt").write_text("# fields: q\n=== user ===\nQ: {q}\n")
    prompts.load_chat.cache_clear()
    assert prompts.messages(str(user), q="why?") == [{"role": "user", "content": "Q: why?"}]
    with pytest.raises(KeyError, match="needs values"):
        prompts.messages(str(user))


@pytest.mark.parametrize(
    ("reply", "short"),
    [
        ("**Toronto**\n\nKevin Drew was born in Toronto, Ontario.", "Toronto"),
        ("The answer is **Paris**.", "Paris"),
        (
            "Arthur's Magazine started in 1844 [1]. So the answer is Arthur's Magazine.",
            "Arthur's Magazine",
        ),
        ("Answer: 1844", "1844"),
        ("Sure!\nTokyo. It is the capital of Japan.", "Tokyo"),
        ("Dr. No was released first. It came out in 1962.", "Dr. No was released first"),
        ("The final answer is: Chief of Protocol.", "Chief of Protocol"),
        ("Yes", "Yes"),
        ("- `Steven Spielberg` directed it [2].", "Steven Spielberg directed it"),
        ("", ""),
        # Qwen2.5-Coder-0.5B's tracing reply on HotpotQA's first question: the marker points
        # to a mark, not a span; the sentence that states something is the answer.
        (
            "The answer is [1]. The woman who portrayed Corliss Archer in the film Kiss and Tell "
            "was held by the Governor of Ontario. So the answer is [1].",
            "The woman who portrayed Corliss Archer in the film Kiss and Tell was held by the "
            "Governor of Ontario",
        ),
        # Qwen2.5-Coder-1.5B's tracing reply on a HotpotQA tune item: the "!" in the quoted
        # title does not end the answer ("Hey Pa" was taken before).
        (
            '[1] "Hey Pa! There\'s a Goat on the Roof" was released in 1966.\n[2] "Poleconomy" '
            'was released in 1980.\nSo the answer is "Hey Pa! There\'s a Goat on the Roof".',
            "Hey Pa! There's a Goat on the Roof",
        ),
        ("So the answer is “Who? What?”. Later text.", "Who? What?"),
    ],
)
def test_short_answer_reads_chat_habits(reply: str, short: str) -> None:
    assert short_answer(reply) == short
