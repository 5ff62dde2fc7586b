"""Documentation questions in the form someone outside the project wrote them: the frozen
git-doc set (``../shared/splits/git-doc/``, issue 62) read into the form the real-documentation
benches score (``scoring/document_answers.py``).

The git-doc form: ``{"id", "question", "answers", "kind", "sources": [{"file", "heading"}],
"evidence": [...], "bridge"?}`` — ``kind`` ``one-hop`` | ``two-part`` | ``bridge``;
``answers`` a flat list of aliases (one-hop, bridge) or one list per part (two-part);
``sources[].file`` relative to the corpus folder (``usr/share/doc/git-doc``); ``evidence``
verbatim, one quote a source; a bridge's first source states the intermediate fact. Its
grading: an alias of every part in the answer (what ``alias_match`` does), a citation right
when it is from a source file or that file's ``.txt`` / ``.html`` twin (the AsciiDoc source
of the page, or the page of the source).

The bench's form (``bench/data/real_docs_questions.md``): ``answer`` the evidence quote(s),
``answers`` the aliases, ``source`` a package's file (one, or a list), ``kind``
``one-passage`` | ``two-passages`` | ``bridge``, and here ``file_twins``: the other files a
citation of a source may name.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

KINDS = {"one-hop": "one-passage", "two-part": "two-passages", "bridge": "bridge"}
# The frozen file's digest (its README): a file that is not it is refused before it is read.
GIT_DOC_SHA256 = "d491e9a5016de54f2f6a64a61eafbe69f03fd3d6ae2a11ac215633107e126b2d"
TWIN_SUFFIXES = (".html", ".txt")


class QuestionFormError(ValueError):
    """A question file that is not in the form it is read as (its file and line named)."""


def twins(file: str) -> list[str]:
    """The other copies of a git-doc file: ``x.html`` ↔ ``x.txt``."""
    for suffix in TWIN_SUFFIXES:
        if file.endswith(suffix):
            stem = file.removesuffix(suffix)
            return [stem + other for other in TWIN_SUFFIXES if other != suffix]
    return []


def from_git_doc(item: dict[str, Any], package: str) -> dict[str, Any]:
    """One git-doc item in the bench's form; ``package``: the corpus folder's name the files
    are under (the bench indexes ``<corpus>/<package>/<file>``)."""
    kind = KINDS.get(item.get("kind", ""))
    if kind is None:
        raise ValueError(f"kind {item.get('kind')!r} is not one of {', '.join(KINDS)}")
    sources = [{"package": package, **s} for s in item["sources"]]
    evidence = list(item["evidence"])
    files = [f"{package}/{s['file']}" for s in sources]
    file_twins = {
        f"{package}/{s['file']}": [f"{package}/{t}" for t in twins(s["file"])] for s in sources
    }
    if len(evidence) != len(sources):
        if kind != "two-passages" or len(evidence) < len(sources):
            raise ValueError(f"{len(sources)} sources but {len(evidence)} evidence quotes")
        # A part that rests on two quotes: which source holds which quote the item does not
        # say, so each quote is looked for in any of its sources (the set's own rule: a
        # citation is right when it is from a source file).
        everywhere = [*files, *(t for f in files for t in file_twins[f])]
        file_twins = {f: [x for x in everywhere if x != f] for f in files}
        sources = [sources[min(i, len(sources) - 1)] for i in range(len(evidence))]
    if kind == "one-passage" and len(sources) != 1:
        raise ValueError(f"a one-hop item with {len(sources)} sources")
    if kind == "bridge" and len(sources) != 2:
        raise ValueError(f"a bridge item with {len(sources)} sources (needs 2)")
    answers = item["answers"]
    if kind == "two-passages" and not all(isinstance(a, list) for a in answers):
        raise ValueError("a two-part item's answers are one list of aliases per part")
    if kind != "two-passages" and not all(isinstance(a, str) for a in answers):
        raise ValueError("a one-hop or bridge item's answers are a flat list of aliases")
    out: dict[str, Any] = {
        "id": item["id"],
        "question": item["question"],
        # every source of a two-part item holds a quote the answer rests on (one part may
        # need two); a bridge's answer is in its last; one-hop's in its only one
        "answer": evidence if kind == "two-passages" else evidence[-1],
        "answers": answers,
        "source": sources[0] if kind == "one-passage" else sources,
        "kind": kind,
        "file_twins": file_twins,
    }
    if "bridge" in item:
        out["bridge"] = item["bridge"]
    return out


def load_git_doc(path: Path, package: str = "git-doc", sha256: str | None = None) -> list[dict]:
    """The git-doc question file in the bench's form; ``sha256``: the digest the file must have
    (a frozen set that changed is refused before anything is answered)."""
    data = path.read_bytes()
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise QuestionFormError(f"{path}: sha256 is not {sha256}: not the frozen file")
    out = []
    for n, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(from_git_doc(json.loads(line), package))
        except (ValueError, KeyError, TypeError) as e:  # JSONDecodeError is a ValueError
            raise QuestionFormError(f"{path}:{n}: {type(e).__name__}: {e}") from None
    return out
