"""FEVER: claims labelled SUPPORTS / REFUTES / NOT ENOUGH INFO, with evidence sentences."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchain.eval.datasets.base import FEVER_LABELS, Ctx, Example, qid, read_records


def _fever_label(ctx: Ctx, value: str | None) -> str | None:
    if value is None:
        return None
    label = " ".join(value.upper().split())
    label = {"NEI": "NOT ENOUGH INFO", "NOT ENOUGH INFORMATION": "NOT ENOUGH INFO"}.get(
        label, label
    )
    if label not in FEVER_LABELS:
        raise ctx.fail(f'field "label" must be one of {", ".join(FEVER_LABELS)}, got {value!r}')
    return label


# FEVER's wiki dump escapes brackets and some punctuation in page titles (PTB style) and uses
# underscores for spaces; Wikipedia (and every corpus here) writes "Ed Wood (film)".
_PTB = {
    "-LRB-": "(",
    "-RRB-": ")",
    "-LSB-": "[",
    "-RSB-": "]",
    "-LCB-": "{",
    "-RCB-": "}",
    "-COLON-": ":",
}


def wikipedia_title(fever_title: str) -> str:
    """A FEVER page id as Wikipedia's title: ``Ed_Wood_-LRB-film-RRB-`` → ``Ed Wood (film)``."""
    for escaped, char in _PTB.items():
        fever_title = fever_title.replace(escaped, char)
    return fever_title.replace("_", " ")


def read_fever(path: Path) -> Iterator[Example]:
    """FEVER. Gold passages are the evidence sentences (id ``<FEVER page id>#<sentence id>``,
    title the page's Wikipedia title, so it matches a corpus's titles; no text: FEVER ships
    none); ``meta["evidence_sets"]`` keeps the sets (any one suffices), with FEVER's page ids."""
    for ctx, record in read_records(path):
        claim = ctx.text(record, "claim")
        label = _fever_label(ctx, ctx.text(record, "label", required=False))
        sets, gold, seen = [], [], set()
        for group in ctx.array(record, "evidence"):
            members = []
            for ev in group if isinstance(group, list) else []:
                if isinstance(ev, list) and len(ev) == 4 and ev[2] is not None:
                    title, sent = str(ev[2]), ev[3]
                    members.append([title, sent])
                    if (title, sent) not in seen:
                        seen.add((title, sent))
                        gold.append(
                            {
                                "id": f"{title}#{sent}",
                                "title": wikipedia_title(title),
                                "text": "",
                                "sentence_id": sent,
                            }
                        )
            if members:
                sets.append(members)
        meta: dict[str, Any] = {"evidence_sets": sets}
        if "verifiable" in record:
            meta["verifiable"] = record["verifiable"]
        yield Example(
            id=ctx.text(record, "id", required=False) or qid(claim),
            question=claim.strip(),
            answers=[label] if label else [],
            label=label,
            task="factcheck",
            gold_passages=gold,
            meta=meta,
        )
