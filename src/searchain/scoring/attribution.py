"""Attribution: :func:`citation_scores` — ALCE citation recall and precision over a pluggable
NLI judge ``nli(premise, hypothesis) -> bool`` (the papers use T5-XXL TRUE; the judges
themselves are in :mod:`searchain.readers.nli`) — and the parsing of cited sentences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from searchain.citations import marks, strip_marks
from searchain.scoring.recall import PassageLike
from searchain.scoring.sentences import split_sentences
from searchain.types import Passage, Trace

NLI = Callable[[str, str], bool]
"""An entailment judge: ``nli(premise, hypothesis)`` is True when the premise entails the
hypothesis (ALCE: T5-XXL TRUE answering "1" to ``"premise: … hypothesis: …"``)."""


@dataclass(frozen=True, slots=True)
class CitedSentence:
    """A sentence of the output (citation marks removed) and the 1-based marks it carries."""

    text: str
    citations: tuple[int, ...] = ()


def parse_cited_sentences(
    output: str,
    *,
    question: str | None = None,
    list_answer: bool = False,
    splitter: Callable[[str], list[str]] | None = None,
) -> list[CitedSentence]:
    """Split an output into :class:`CitedSentence`\\ s as ALCE does: sentences by
    :func:`split_sentences` (or ``splitter``); for QAMPARI-style list answers
    (``list_answer=True``) the comma-separated items, each prefixed by the question.
    Marks ``[1]``, ``[1][2]`` and ``[1, 2]`` are read (:func:`searchain.citations.marks`)."""
    if list_answer:
        items = output.rstrip().rstrip(".").rstrip(",").split(",")
        prefix = f"{question} " if question else ""
        raw = [prefix + x.strip() for x in items if strip_marks(x).strip()]
    else:
        raw = (splitter or split_sentences)(output)
    return [CitedSentence(strip_marks(s).strip(), tuple(marks(s))) for s in raw if s.strip()]


@dataclass(frozen=True, slots=True)
class CitationScores:
    """ALCE citation recall and precision of one output, with the counts behind them."""

    recall: float
    precision: float
    sentences: int
    citations: int  # citations scored for precision (after the per-sentence cap)
    supported: int  # sentences entailed by their citations
    irrelevant: int  # citations judged irrelevant

    @property
    def f1(self) -> float:
        """Think&Cite's attribution progress reward R_a: F1 of recall and precision."""
        s = self.recall + self.precision
        return 2 * self.recall * self.precision / s if s else 0.0


def format_document(passage: PassageLike) -> str:
    """A passage as ALCE shows it to the NLI model: ``"Title: <title>\\n<text>"``."""
    if isinstance(passage, str):
        return passage
    if isinstance(passage, Passage):
        return f"Title: {passage.title}\n{passage.text}"
    return f"Title: {passage.get('title', '')}\n{passage.get('sent', passage.get('text', ''))}"


def citation_scores(
    sentences: Sequence[CitedSentence | tuple[str, Sequence[int]]],
    passages: Sequence[PassageLike],
    nli: NLI,
    *,
    max_citations: int | None = 3,
) -> CitationScores:
    """ALCE citation recall and precision (Gao et al. 2023, §2.2; ``eval.py:
    compute_autoais``), as Think&Cite's R_a uses them. Mark ``[n]`` cites ``passages[n-1]``.

    * A sentence's citations are its distinct marks; a mark outside ``1..len(passages)``
      makes the sentence unsupported and keeps its citations out of precision (ALCE). Then
      at most ``max_citations`` (ALCE's default 3) are kept, in order.
    * **Recall** of a sentence is 1 iff the concatenation of its cited passages entails it;
      a sentence without citations scores 0. Recall = mean over all sentences.
    * **Precision**: a citation c of sentence s scores 1 iff its citation set C entails s
      (recall 1) and c is not *irrelevant*; c is irrelevant iff C has several citations,
      c alone does not entail s, and C \\ {c} still does. Citations of unsupported
      sentences score 0 (this is what ALCE's code and paper do; the "otherwise 1" of the
      thinkcite.md paraphrase would score them 1). Precision = relevant / all citations,
      0 when there are none.
    * An empty output scores 0 (ALCE skips it; we never drop an item).

    ``nli`` is called with the premise first; repeated judgements are cached per call.
    """
    cache: dict[tuple[str, str], bool] = {}

    def entails(premise: str, hypothesis: str) -> bool:
        key = (premise, hypothesis)
        if key not in cache:
            cache[key] = bool(nli(premise, hypothesis))
        return cache[key]

    def joined(ids: Sequence[int]) -> str:
        return "\n".join(format_document(passages[i - 1]) for i in ids)

    supported = relevant = total = irrelevant = 0
    items = [
        s if isinstance(s, CitedSentence) else CitedSentence(s[0], tuple(s[1])) for s in sentences
    ]
    for sent in items:
        cites = list(dict.fromkeys(sent.citations))
        if not cites or any(not 1 <= c <= len(passages) for c in cites):
            continue  # unsupported; no citation counted for precision
        if max_citations is not None:
            cites = cites[:max_citations]
        total += len(cites)
        if not entails(joined(cites), sent.text):
            continue
        supported += 1
        if len(cites) == 1:
            relevant += 1
            continue
        for c in cites:
            if entails(joined([c]), sent.text):
                relevant += 1
            elif entails(joined([x for x in cites if x != c]), sent.text):
                irrelevant += 1
            else:
                relevant += 1
    n = len(items)
    return CitationScores(
        recall=supported / n if n else 0.0,
        precision=relevant / total if total else 0.0,
        sentences=n,
        citations=total,
        supported=supported,
        irrelevant=irrelevant,
    )


def citation_recall(
    sentences: Sequence[CitedSentence | tuple[str, Sequence[int]]],
    passages: Sequence[PassageLike],
    nli: NLI,
    *,
    max_citations: int | None = 3,
) -> float:
    """ALCE citation recall (see :func:`citation_scores`)."""
    return citation_scores(sentences, passages, nli, max_citations=max_citations).recall


def citation_precision(
    sentences: Sequence[CitedSentence | tuple[str, Sequence[int]]],
    passages: Sequence[PassageLike],
    nli: NLI,
    *,
    max_citations: int | None = 3,
) -> float:
    """ALCE citation precision (see :func:`citation_scores`)."""
    return citation_scores(sentences, passages, nli, max_citations=max_citations).precision


def trace_citation_scores(
    trace: Trace, nli: NLI, *, max_citations: int | None = 3
) -> CitationScores:
    """:func:`citation_scores` of a trace's final content against its numbered references."""
    sentences = parse_cited_sentences(trace.final_content or trace.answer)
    return citation_scores(sentences, trace.references, nli, max_citations=max_citations)
