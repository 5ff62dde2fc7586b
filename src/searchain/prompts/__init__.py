"""Prompt templates, kept as data files next to this module (one ``.txt`` per prompt).

A template's first line declares its fields: ``# fields: question, documents``. Only those
``{name}`` placeholders are filled, so braces inside few-shot demos are left alone, and a
missing value is an error rather than a silently broken prompt. Users can pass the path of
their own template file wherever a template name is accepted. The file's final newline is
not part of the prompt. Lines starting with ``# `` right after the fields line are a header
(where the demos came from, ...) and are not part of the prompt either.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

HEADER = "# fields:"


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


@lru_cache(maxsize=64)
def load(name_or_path: str) -> Template:
    """A packaged template by name (``"retrieve_read"``) or any template file by path."""
    path = Path(name_or_path)
    if path.suffix == ".txt" and path.is_file():
        return parse(str(path), path.read_text(encoding="utf-8"))
    packaged = resources.files(__name__) / f"{name_or_path}.txt"
    if not packaged.is_file():
        raise FileNotFoundError(f"no prompt template {name_or_path!r}")
    return parse(name_or_path, packaged.read_text(encoding="utf-8"))


def fill(name_or_path: str, **values: object) -> str:
    return load(name_or_path).fill(**values)
