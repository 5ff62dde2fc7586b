"""Prompt templates, kept as data files next to this module (one ``.txt`` per prompt).

A template's first line declares its fields: ``# fields: question, documents``. Only those
``{name}`` placeholders are filled, so braces inside few-shot demos are left alone, and a
missing value is an error rather than a silently broken prompt. Users can pass the path of
their own template file wherever a template name is accepted. The file's final newline is
not part of the prompt. Lines starting with ``# `` right after the fields line are a header
(where the demos came from, ...) and are not part of the prompt either.

Every prompt comes in two forms. ``NAME.txt`` is the completion form for base models: one
text the model continues. ``NAME.chat.txt`` is the chat form for instruct models: the same
fields line and header, then messages, each opened by a line ``=== system ===``,
``=== user ===`` or ``=== assistant ===`` (few-shot demos are user/assistant pairs).
``messages(name, **values)`` fills it into the ``[{"role", "content"}]`` list chat APIs take.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

HEADER = "# fields:"
# ``NAME@question-last``: the template with its instruction's inline question taken out, so
# the instruction and demos form a prefix that is the same for every question (computed
# once, kept as a KV snapshot); the question is then only where the template's last
# ``[Question]`` line puts it. The paper's CoQ instruction names the question inline.
QUESTION_LAST = "@question-last"
_INLINE_QUESTION = re.compile(r'\[Question\]\s*:\s*"\s*\{question\}\s*"\s*')
_QUESTION_LAST_TEXT = "[Question] (given after the examples) "


@dataclass(frozen=True, slots=True)
class Template:
    name: str
    fields: tuple[str, ...]
    body: str

    def fill(self, **values: object) -> str:
        missing = [f for f in self.fields if f not in values]
        if missing:
            raise KeyError(f"prompt {self.name!r} needs values for {missing}")
        out = self.body
        for f in self.fields:
            out = out.replace("{" + f + "}", str(values[f]))
        return out


def parse(name: str, text: str) -> Template:
    first, _, body = text.partition("\n")
    if not first.startswith(HEADER):
        raise ValueError(f"prompt {name!r} must start with a '{HEADER} a, b' line")
    fields = tuple(f.strip() for f in first[len(HEADER) :].split(",") if f.strip())
    while body.startswith("# "):  # provenance header lines
        body = body.partition("\n")[2]
    # Editors end files with a newline; a prompt ending "Answer:\n" makes models start a
    # new line instead of answering, so the file's final newline is not part of the prompt.
    return Template(name, fields, body.removesuffix("\n"))


ROLE_LINE = re.compile(r"^=== (system|user|assistant) ===$", re.M)


@dataclass(frozen=True, slots=True)
class ChatTemplate:
    name: str
    fields: tuple[str, ...]
    turns: tuple[tuple[str, str], ...]  # (role, content with {field} placeholders)

    def fill(self, **values: object) -> list[dict[str, str]]:
        missing = [f for f in self.fields if f not in values]
        if missing:
            raise KeyError(f"prompt {self.name!r} needs values for {missing}")
        out = []
        for role, content in self.turns:
            for f in self.fields:
                content = content.replace("{" + f + "}", str(values[f]))
            out.append({"role": role, "content": content})
        return out


def parse_chat(name: str, text: str) -> ChatTemplate:
    base = parse(name, text)
    parts = ROLE_LINE.split(base.body)
    if parts[0].strip():
        raise ValueError(f"chat prompt {name!r}: text before the first '=== role ===' line")
    turns = tuple(
        (role, content.strip("\n")) for role, content in zip(parts[1::2], parts[2::2], strict=True)
    )
    if not turns:
        raise ValueError(f"chat prompt {name!r} has no '=== user ===' message")
    return ChatTemplate(name, base.fields, turns)


def _question_last(name: str, body: str) -> str:
    """``body`` with the first (the instruction's) inline question replaced; the question
    must still occur later in it."""
    out, n = _INLINE_QUESTION.subn(_QUESTION_LAST_TEXT, body, count=1)
    if n == 0 or "{question}" not in out:
        raise ValueError(
            f"prompt {name!r} has no inline '[Question]: \"{{question}}\"' before a last "
            "[Question]; it cannot be put question-last"
        )
    return out


def _variant(name_or_path: str) -> tuple[str, bool]:
    if name_or_path.endswith(QUESTION_LAST):
        return name_or_path[: -len(QUESTION_LAST)], True
    return name_or_path, False


@lru_cache(maxsize=64)
def load_chat(name_or_path: str) -> ChatTemplate:
    base, last = _variant(name_or_path)
    if last:
        t = load_chat(base)
        turns = list(t.turns)
        for i, (role, content) in enumerate(turns):
            if _INLINE_QUESTION.search(content):
                turns[i] = (role, _INLINE_QUESTION.sub(_QUESTION_LAST_TEXT, content, count=1))
                break
        else:
            raise ValueError(f"chat prompt {base!r} has no inline question to take out")
        if not any("{question}" in c for _, c in turns):
            raise ValueError(f"chat prompt {base!r} asks its question only inline")
        return ChatTemplate(name_or_path, t.fields, tuple(turns))
    """The chat form of a template: ``NAME.chat.txt`` beside the completion form (a user
    file ``x.chat.txt`` by path, or the chat sibling of a user file ``x.txt``)."""
    path = Path(name_or_path)
    if path.suffix == ".txt":
        chat = path if path.name.endswith(".chat.txt") else path.with_suffix(".chat.txt")
        if chat.is_file():
            return parse_chat(str(chat), chat.read_text(encoding="utf-8"))
        raise FileNotFoundError(f"no chat form of prompt {name_or_path!r} (looked for {chat})")
    packaged = resources.files(__name__) / f"{name_or_path}.chat.txt"
    if not packaged.is_file():
        raise FileNotFoundError(f"no chat form of prompt template {name_or_path!r}")
    return parse_chat(name_or_path, packaged.read_text(encoding="utf-8"))


def messages(name_or_path: str, **values: object) -> list[dict[str, str]]:
    """The chat form of a template, filled: the messages to send to a chat model."""
    return load_chat(name_or_path).fill(**values)


def has_chat(name_or_path: str) -> bool:
    try:
        load_chat(name_or_path)
    except FileNotFoundError:
        return False
    return True


@lru_cache(maxsize=64)
def load(name_or_path: str) -> Template:
    """A packaged template by name (``"retrieve_read"``) or any template file by path;
    ``NAME@question-last`` is its question-last variant (see ``QUESTION_LAST``)."""
    base, last = _variant(name_or_path)
    if last:
        t = load(base)
        return Template(name_or_path, t.fields, _question_last(base, t.body))
    path = Path(name_or_path)
    if path.suffix == ".txt" and path.is_file():
        return parse(str(path), path.read_text(encoding="utf-8"))
    packaged = resources.files(__name__) / f"{name_or_path}.txt"
    if not packaged.is_file():
        raise FileNotFoundError(f"no prompt template {name_or_path!r}")
    return parse(name_or_path, packaged.read_text(encoding="utf-8"))


def fill(name_or_path: str, **values: object) -> str:
    return load(name_or_path).fill(**values)
