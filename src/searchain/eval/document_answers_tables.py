"""The tables of answers over real documentation (``python -m bench.real_docs_answers table``),
from the records :mod:`searchain.scoring.document_answers` scores. By the short-answer golds
(issue 62, ``alias_markdown``): each arm right by its whole answer, its short answer and the
short answer derived from its whole answer, with bootstrap CIs, by kind, and paired with chosen
arms. By the evidence-quote golds (issues 39 and 50, ``markdown``): each arm's cover-EM with
bootstrap CIs, the paired differences against one arm, where each item stands, how often
SearChain answered as one hop and which right answers only the node queries' passages made
possible."""

from __future__ import annotations

import statistics
from typing import Any

from searchain.eval.bootstrap import bootstrap_ci
from searchain.eval.compare import paired_difference

PEER = "llamaindex"  # the peer pipeline's arm: its manifest entry names its versions
CATEGORIES = (
    "right, cites the right file",
    "right, cites no right file",
    "failed",
    "plan not parsed",
    "a node had the answer, the final answer lost it",
    "retrieval missed the answer passage",
    "answer passage in hand, answer wrong",
)


def category(r: dict[str, Any]) -> str:
    """Where an item stands: right (citing the right file or not), or where it went wrong."""
    if r["status"] != "ok":
        return "failed"
    if r["cover_em"]:
        return CATEGORIES[0] if r["cite_file"] else CATEGORIES[1]
    if planned(r) and not r.get("nodes"):
        return "plan not parsed"
    if r.get("node_had_answer"):
        return "a node had the answer, the final answer lost it"
    if not r["in_hand"]:
        return "retrieval missed the answer passage"
    return "answer passage in hand, answer wrong"


def planned(r: dict[str, Any]) -> bool:
    """Whether the record's answer came from a Chain-of-Query, whose nodes are its plan
    (``chain_of_query``). A record made before it said so counts its nodes: only a chain's
    could count none (retrieve-read's counts the node of its answer; a peer's has no count)."""
    if "chain_of_query" in r:
        return bool(r["chain_of_query"])
    return r.get("nodes") == 0


def value(r: dict[str, Any], key: str) -> float:
    """A record's score; a failed item counts 0 (as in ``searchain report``)."""
    return float(r.get(key) or 0.0) if r["status"] == "ok" else 0.0


def pct(values: list[float]) -> str:
    if not values:
        return "–"
    mean, lo, hi = bootstrap_ci(values)
    return f"{100 * mean:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def mean_of(rows: list[dict], key: str) -> str:
    known = [r[key] for r in rows if r["status"] == "ok" and r.get(key) is not None]
    return f"{statistics.mean(known):,.0f}" if known else "–"


def timed(rows: dict[str, dict]) -> dict[str, float]:
    """Seconds of the items answered with no cached call (whose seconds are honest)."""
    return {
        i: r["seconds"] for i, r in rows.items() if "seconds" in r and not r.get("cached_calls")
    }


def median_seconds(rows: dict[str, dict]) -> str:
    seconds = timed(rows)
    return f"{statistics.median(seconds.values()):.1f} ({len(seconds)})" if seconds else "–"


def seconds_ratio(rows: dict[str, dict], other: dict[str, dict]) -> str:
    """Median seconds per question over the median of ``other``'s, on the items both timed."""
    mine, theirs = timed(rows), timed(other)
    shared = sorted(set(mine) & set(theirs))
    if not shared:
        return "–"
    ratio = statistics.median(mine[i] for i in shared) / statistics.median(
        theirs[i] for i in shared
    )
    return f"{ratio:.2f}x ({len(shared)})"


def summary_rows(records: dict[str, dict[str, dict]], against: str) -> list[str]:
    head = "| arm | items | cover-EM % (95 % CI) | cites the right file % | right page, PDF % "
    head += f"| s/question (median, items timed) | s vs {against} | prompt tokens "
    head += "| completion tokens "
    head += "| LLM calls | failed |"
    lines = [head, "|---|" + "---:|" * 10]
    for arm, rows in records.items():
        rs = list(rows.values())
        pdf = [r for r in rs if r["type"] == "PDF"]
        cells = [
            arm,
            str(len(rs)),
            pct([value(r, "cover_em") for r in rs]),
            pct([value(r, "cite_file") for r in rs]),
            pct([value(r, "cite_page") for r in pdf]),
            median_seconds(rows),
            seconds_ratio(rows, records.get(against, {})),
            mean_of(rs, "prompt_tokens"),
            mean_of(rs, "completion_tokens"),
            mean_of(rs, "llm_calls"),
            str(sum(r["status"] != "ok" for r in rs)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def paired(records: dict[str, dict[str, dict]], arm: str, against: str, key: str) -> Any:
    """``arm − against`` on ``key``, paired on the items both answered (None: none shared)."""
    scores = {a: {i: value(r, key) for i, r in records[a].items()} for a in (arm, against)}
    return paired_difference(scores, arm, against, key)


def paired_rows(records: dict[str, dict[str, dict]], against: str) -> list[str]:
    lines = [f"| arm − {against} | items | cover-EM Δ (95 % CI) | wins / losses | cites-file Δ |"]
    lines.append("|---|---:|---:|---:|---:|")
    for arm in (a for a in records if a != against):
        cells = [arm]
        for key in ("cover_em", "cite_file"):
            d = paired(records, arm, against, key)
            if d is None:
                cells += ["0", "–", "–"] if key == "cover_em" else ["–"]
            elif key == "cover_em":
                cells += [
                    str(d.items),
                    f"{d}{' *' if d.significant else ''}",
                    f"{d.wins} / {d.losses}",
                ]
            else:
                cells.append(f"{d}{' *' if d.significant else ''}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def group_rows(records: dict[str, dict[str, dict]]) -> list[str]:
    groups = ("PDF", "HTML", "one-passage", "two-passages")
    lines = ["| arm | cover-EM: " + " | ".join(groups) + " |", "|---|" + "---:|" * len(groups)]
    for arm, rows in records.items():
        cells = [arm]
        for g in groups:
            rs = [r for r in rows.values() if g in (r["type"], r["kind"])]
            cells.append(f"{sum(value(r, 'cover_em') for r in rs):.0f}/{len(rs)}" if rs else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def taxonomy_rows(records: dict[str, dict[str, dict]]) -> list[str]:
    lines = ["| arm | " + " | ".join(CATEGORIES) + " |", "|---|" + "---:|" * len(CATEGORIES)]
    for arm, rows in records.items():
        counts = [sum(category(r) == c for r in rows.values()) for c in CATEGORIES]
        lines.append(f"| {arm} | " + " | ".join(map(str, counts)) + " |")
    return lines


def one_hop_rows(records: dict[str, dict[str, dict]]) -> list[str]:
    """How often each SearChain arm answered as one hop (records made before ``hops`` was
    recorded are not counted)."""
    lines = []
    for arm, rows in records.items():
        hops = [r["hops"] for r in rows.values() if r.get("hops") is not None]
        if hops:
            one = sum(h <= 1 for h in hops)
            lines.append(
                f"{arm} answered {one} of {len(hops)} questions as one hop (at most one "
                "answered node on its path)."
            )
    return ["", *lines] if lines else []


def node_only_rows(records: dict[str, dict[str, dict]]) -> list[str]:
    """For each arm with the evidence step: the questions it answered right whose needed
    passages it read only through the node queries (not among the question's own top-k)."""
    lines = []
    for arm, rows in records.items():
        known = [r for r in rows.values() if r.get("in_hand_question") is not None]
        if not known:
            continue
        only = sorted(
            r["id"]
            for r in known
            if r.get("cover_em") and r.get("in_hand") and not r["in_hand_question"]
        )
        right = sum(bool(r.get("cover_em")) for r in known)
        lines.append(
            f"{arm}: {len(only)} of its {right} right answers had their passages in hand only "
            f"through the node queries{': ' + ', '.join(only) if only else ''}."
        )
    return ["", *lines] if lines else []


def markdown(
    records: dict[str, dict[str, dict]], manifest: dict[str, Any], model: str, against: str
) -> str:
    parts = [f"Answers over real documentation, {model}, one thread", ""]
    parts += summary_rows(records, against)
    if against in records and len(records) > 1:
        parts += ["", "Paired on the items both answered (* the 95 % interval excludes 0):", ""]
        parts += paired_rows(records, against)
    parts += ["", *group_rows(records), "", "Where each item stands:", "", *taxonomy_rows(records)]
    parts += one_hop_rows(records)
    parts += node_only_rows(records)
    peer = (manifest.get(PEER) or {}).get("peer") or {}
    if peer.get("versions"):
        versions = ", ".join(f"{k} {v}" for k, v in peer["versions"].items())
        parts += ["", f"LlamaIndex environment: {versions}; {peer.get('nodes')} nodes."]
    return "\n".join(parts)
