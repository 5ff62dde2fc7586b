"""Evaluation metrics, each a pure function that cites the definition it implements.

Answer correctness (per item, 0.0 or 1.0 unless stated):

* :func:`cover_em` — SearChain's metric: a gold answer, SQuAD-normalised, occurs in the
  normalised output as whole words (:func:`searchain.text.contains_answer`).
* :func:`exact_match`, :func:`token_f1` — the SQuAD v1.1 evaluation script.
* :func:`label_accuracy` — yes/no (StrategyQA) and SUPPORTS/REFUTES/NOT ENOUGH INFO (FEVER)
  read from free text, "So the (final) answer is X" first.
* :func:`rouge_l` — ALCE's ROUGE-L (``rougeLsum`` of ``rouge-score``, Porter stemmer, lower
  case, one sentence per line), the best over the references.
* :func:`str_em` — ALCE ASQA's STR-EM, :func:`qampari_scores` — ALCE QAMPARI precision,
  recall(-5) and F1, :func:`claim_recall` — ALCE ELI5 claim recall.

Retrieval: :func:`has_answer` (DPR's answer matching over DPR ``SimpleTokenizer`` tokens) and
:func:`recall_at_k` (answer recall or gold passage recall of the top k).

Attribution: :func:`citation_scores` — ALCE citation recall and precision over a pluggable
NLI judge ``nli(premise, hypothesis) -> bool`` (the papers use T5-XXL TRUE).

SearChain analyses: :func:`skc` (Table 4 / §4.3.4), :func:`knowledge_source_split` (Table 2),
:func:`ir_effects` / :func:`ir_misleading_rate` (Table 3), :func:`efficiency` (Table 5).
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from searchain.citations import marks, strip_marks
from searchain.text import contains_answer, normalize_answer
from searchain.types import Passage, Trace

log = logging.getLogger(__name__)

NLI = Callable[[str, str], bool]
"""An entailment judge: ``nli(premise, hypothesis)`` is True when the premise entails the
hypothesis (ALCE: T5-XXL TRUE answering "1" to ``"premise: … hypothesis: …"``)."""

Golds = str | Iterable[str]


def _golds(golds: Golds) -> list[str]:
    return [golds] if isinstance(golds, str) else [g for g in golds if g is not None]


# -- answer correctness --------------------------------------------------------------------


def cover_em(prediction: str, golds: Golds) -> float:
    """Cover-EM (SearChain, Xu et al. 2024, §4.1): 1.0 if any SQuAD-normalised gold answer is
    contained in the normalised prediction as whole words ("1844" is not in "18445")."""
    return float(any(contains_answer(prediction, g) for g in _golds(golds)))


def exact_match(prediction: str, golds: Golds) -> float:
    """SQuAD v1.1 exact match: the normalised prediction equals a normalised gold answer."""
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(g) for g in _golds(golds)))


def _f1(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)  # SQuAD v2: an empty answer scores 1 only against empty
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(ref)
    return 2 * p * r / (p + r)


def token_f1(prediction: str, golds: Golds) -> float:
    """SQuAD token F1: bag-of-normalised-tokens overlap, the best over the gold answers."""
    return max((_f1(prediction, g) for g in _golds(golds)), default=0.0)


YES_NO = ("yes", "no")
FEVER_LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
_FINAL_ANSWER = re.compile(r"(?:\bso,?\s+)?\bthe\s+(?:final\s+)?answer\s+is\s*:?", re.I)
_LABEL_PATTERNS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    "yesno": [("yes", re.compile(r"\byes\b", re.I)), ("no", re.compile(r"\bno\b", re.I))],
    "fever": [
        ("NOT ENOUGH INFO", re.compile(r"\bnot\s+enough\s+info(?:rmation)?\b|\bNEI\b", re.I)),
        ("SUPPORTS", re.compile(r"\bsupport(?:s|ed)?\b", re.I)),
        ("REFUTES", re.compile(r"\brefut(?:es|ed|e)\b", re.I)),
    ],
}


def _label_kind(gold: str) -> str:
    g = " ".join(gold.split())
    if g.lower() in YES_NO:
        return "yesno"
    if g.upper() in FEVER_LABELS:
        return "fever"
    raise ValueError(f"not a yes/no or FEVER label: {gold!r}")


def extract_label(text: str, kind: Literal["yesno", "fever"] = "yesno") -> str | None:
    """The label a free-text answer gives, or None.

    The text after the last "(So) the (final) answer is" is read first, up to the end of
    its line, taking the first label mentioned there. Without that phrase (or without a label
    after it), the whole text is read: a label it starts with, else the last one it
    mentions. Negation is not interpreted ("not supported" reads as SUPPORTS).
    """
    patterns = _LABEL_PATTERNS[kind]

    def found(span: str) -> list[tuple[int, str]]:
        hits = []
        for label, pattern in patterns:
            hits += [(m.start(), label) for m in pattern.finditer(span)]
        # At one position the longer label wins ("not enough info" before "no").
        return sorted(hits, key=lambda h: (h[0], [lb for lb, _ in patterns].index(h[1])))

    finals = list(_FINAL_ANSWER.finditer(text))
    if finals:
        after = text[finals[-1].end() :].lstrip()
        span = after.split("\n", 1)[0]
        hits = found(span)
        if hits:
            return hits[0][1]
    hits = found(text)
    if not hits:
        return None
    return hits[0][1] if hits[0][0] == len(text) - len(text.lstrip()) else hits[-1][1]


def label_accuracy(prediction: str, gold: str) -> float:
    """1.0 if the label read from ``prediction`` (:func:`extract_label`) is ``gold``.
    ``gold`` is ``yes``/``no`` (StrategyQA) or a FEVER label, in any case."""
    kind = _label_kind(gold)
    label = extract_label(prediction, kind)  # type: ignore[arg-type]
    want = gold.strip().lower() if kind == "yesno" else " ".join(gold.upper().split())
    return float(label == want)


# -- ROUGE-L (ALCE) ------------------------------------------------------------------------

_ABBREVIATIONS = (
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "vs", "etc", "e.g", "i.e",
    "u.s", "u.k", "u.n", "no", "vol", "fig", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "inc", "ltd", "co", "corp", "gen", "col", "lt", "sgt",
    "gov", "sen", "rep", "rev", "ave", "approx", "ca", "c",
)  # fmt: skip


@functools.cache
def _sentence_splitter() -> Callable[[str], list[str]]:
    try:
        from nltk.tokenize import sent_tokenize
    except ImportError:
        raise ImportError(
            "sentence splitting for ROUGE-L and citations needs nltk: pip install rouge-score"
        ) from None
    try:
        sent_tokenize("One. Two.")
        return sent_tokenize  # the trained Punkt model ALCE uses
    except LookupError:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

        log.warning(
            "nltk's Punkt model is not installed (python -m nltk.downloader punkt_tab); "
            "splitting sentences with untrained Punkt and a list of common abbreviations"
        )
        params = PunktParameters()
        params.abbrev_types = set(_ABBREVIATIONS)
        return PunktSentenceTokenizer(params).tokenize


def split_sentences(text: str) -> list[str]:
    """Sentences as ALCE splits them (nltk ``sent_tokenize``; without the Punkt model
    installed, untrained Punkt with common English abbreviations)."""
    return [s for s in _sentence_splitter()(text) if s.strip()]


@functools.cache
def _rouge_scorer() -> Any:
    try:
        from rouge_score import rouge_scorer
    except ImportError:
        raise ImportError(
            "rouge_l needs the rouge-score package: pip install rouge-score"
        ) from None
    return rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)


def rouge_l(prediction: str, references: Golds) -> float:
    """ROUGE-L F1 as ALCE computes it (``eval.py: compute_rouge``): citation marks removed,
    lower-cased, one sentence per line, ``rougeLsum`` with the Porter stemmer; the best score
    over the references (ASQA has two). Requires ``rouge-score``; there is no fallback.
    A bare string is one reference."""
    refs = _golds(references)
    if not refs:
        raise ValueError("rouge_l needs at least one reference")
    scorer = _rouge_scorer()

    def prep(text: str) -> str:
        return "\n".join(split_sentences(text.strip().lower()))

    hyp = prep(strip_marks(prediction))
    return max(scorer.score(prep(r), hyp)["rougeLsum"].fmeasure for r in refs)


# -- retrieval -----------------------------------------------------------------------------

_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")


def dpr_tokenize(text: str) -> list[str]:
    """Lower-cased tokens of DPR's ``SimpleTokenizer`` after NFD normalisation: runs of
    letters, digits and combining marks (``[\\p{L}\\p{N}\\p{M}]+``), else any single
    character that is neither a separator nor a control character (``[^\\p{Z}\\p{C}]``)."""
    text = unicodedata.normalize("NFD", text)
    if text.isascii():
        return [t.lower() for t in _ASCII_TOKEN.findall(text)]
    tokens: list[str] = []
    run: list[str] = []
    for ch in text:
        cat = unicodedata.category(ch)[0]
        if cat in "LNM":
            run.append(ch)
            continue
        if run:
            tokens.append("".join(run))
            run = []
        if cat not in "ZC":
            tokens.append(ch)
    if run:
        tokens.append("".join(run))
    return [t.lower() for t in tokens]


def has_answer(answers: Golds, text: str | Passage) -> bool:
    """DPR's ``has_answer`` (string match type): some answer's token sequence occurs in the
    passage's token sequence (:func:`dpr_tokenize`, uncased). A :class:`Passage` is matched
    on its text, not its title, as DPR does. Empty answers never match (DPR's loop would
    count an empty answer as found)."""
    body = text.text if isinstance(text, Passage) else text
    tokens = dpr_tokenize(body)
    for answer in _golds(answers):
        want = dpr_tokenize(answer)
        n = len(want)
        if n and any(tokens[i : i + n] == want for i in range(len(tokens) - n + 1)):
            return True
    return False


PassageLike = Passage | Mapping[str, Any] | str


def _pid(p: PassageLike) -> str:
    if isinstance(p, Passage):
        return p.id
    if isinstance(p, str):
        return p
    return str(p.get("id", ""))


def _ptext(p: PassageLike) -> str:
    if isinstance(p, Passage):
        return p.text
    if isinstance(p, str):
        return p
    return str(p.get("text", ""))


def recall_at_k(
    passages: Sequence[PassageLike],
    golds: Golds,
    k: int,
    *,
    by: Literal["answer", "id"] = "answer",
) -> float:
    """Recall@k of a ranked list.

    ``by="answer"``: DPR's top-k retrieval accuracy — 1.0 if any of the first ``k`` passages
    :func:`has_answer` for one of the gold answers (strings are passage texts).
    ``by="id"``: the fraction of gold passage ids found among the first ``k`` passages
    (strings are passage ids). A retrieved id ``<gold>#<n>`` — a piece of a gold document
    split into passages — counts as that gold id. Raises ValueError without gold ids.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    top = list(passages)[:k]
    if by == "answer":
        answers = _golds(golds)
        return float(any(has_answer(answers, _ptext(p)) for p in top))
    if by != "id":
        raise ValueError(f'by must be "answer" or "id", got {by!r}')
    gold_ids = list(dict.fromkeys(_golds(golds)))
    if not gold_ids:
        raise ValueError("recall_at_k(by='id') needs at least one gold passage id")
    ids = [_pid(p) for p in top]
    found = sum(any(i == g or i.startswith(g + "#") for i in ids) for g in gold_ids)
    return found / len(gold_ids)


# -- attribution (ALCE citation recall / precision) ----------------------------------------


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


# -- ALCE answer metrics -------------------------------------------------------------------


def str_em(prediction: str, answer_groups: Sequence[Sequence[str]]) -> float:
    """ALCE ASQA STR-EM (``compute_str_em``): the fraction of answer groups (the
    disambiguated sub-questions) with a short answer present in the prediction. Presence is
    ALCE's plain substring test on SQuAD-normalised text, not cover-EM's whole words."""
    if not answer_groups:
        raise ValueError("str_em needs at least one answer group")
    text = normalize_answer(strip_marks(prediction))
    hits = [any(normalize_answer(a) in text for a in group) for group in answer_groups]
    return sum(hits) / len(hits)


def qampari_scores(prediction: str, answer_groups: Sequence[Sequence[str]]) -> dict[str, float]:
    """ALCE QAMPARI scores (``compute_qampari_f1``) of a comma-separated answer list:

    * ``precision`` — predicted items equal (normalised) to some gold alias / items;
    * ``recall`` — gold answers (alias groups) with an alias among the predictions / answers;
    * ``recall_top5`` — min(5, hits) / min(5, answers): full recall at 5 correct answers;
    * ``f1`` and ``f1_top5`` — harmonic means of precision with those recalls.
    """
    if not answer_groups:
        raise ValueError("qampari_scores needs at least one answer group")
    text = strip_marks(prediction)
    preds = [normalize_answer(x.strip()) for x in text.rstrip().rstrip(".").rstrip(",").split(",")]
    preds = [p for p in preds if p]
    groups = [[normalize_answer(a) for a in g] for g in answer_groups]
    flat = {a for g in groups for a in g}
    precision = sum(p in flat for p in preds) / len(preds) if preds else 0.0
    hits = sum(any(a in preds for a in g) for g in groups)
    recall = hits / len(groups)
    recall5 = min(5, hits) / min(5, len(groups))

    def f1(p: float, r: float) -> float:
        return 2 * p * r / (p + r) if p + r else 0.0

    return {
        "precision": precision,
        "recall": recall,
        "recall_top5": recall5,
        "f1": f1(precision, recall),
        "f1_top5": f1(precision, recall5),
        "num_preds": float(len(preds)),
    }


def qampari_precision(prediction: str, answer_groups: Sequence[Sequence[str]]) -> float:
    """ALCE QAMPARI precision (see :func:`qampari_scores`)."""
    return qampari_scores(prediction, answer_groups)["precision"]


def qampari_recall_5(prediction: str, answer_groups: Sequence[Sequence[str]]) -> float:
    """ALCE QAMPARI recall-5 (see :func:`qampari_scores`)."""
    return qampari_scores(prediction, answer_groups)["recall_top5"]


def claim_recall(output: str, claims: Sequence[str], nli: NLI) -> float:
    """ALCE ELI5 claim recall (``compute_claims``): the fraction of the gold claims that the
    output, citation marks removed, entails."""
    if not claims:
        raise ValueError("claim_recall needs at least one gold claim")
    premise = strip_marks(output)
    return sum(bool(nli(premise, c)) for c in claims) / len(claims)


# -- SearChain analyses ---------------------------------------------------------------------


def trace_text(trace: Trace) -> str:
    """The text a trace is scored on: its final content, else its short answer."""
    return trace.final_content or trace.answer


def skc(trace: Trace, *, post_hoc: bool = False) -> int:
    """Scope of Knowledge Coverage (SearChain §4.3.4): the number of knowledge items —
    sentences of the final content — marked with a supporting document (a citation that
    resolves to a passage). Post-hoc citations count only with ``post_hoc=True``; the paper
    counts what the LLM marked itself."""
    from searchain.methods.searchain import skc as _skc

    cites = [c for c in trace.citations if post_hoc or c.origin == "model"]
    return _skc(trace.final_content, cites)


KNOWLEDGE_SOURCES = ("llm", "ir-corrected", "ir-completed")
_CHECKED = {"verified", "corrected", "completed"}


def knowledge_source_split(
    traces: Iterable[Trace | None], *, scope: Literal["checked", "path", "all"] = "checked"
) -> dict[str, float]:
    """SearChain Table 2: the share of Tree-of-Reasoning nodes whose knowledge came from the
    LLM, was corrected by IR (verification) or was provided by IR (completion), pooled over
    all traces (node-level, as the paper counts).

    ``scope="checked"`` counts the nodes IR actually checked (status verified, corrected or
    completed; nodes without a status are counted too), ``"path"`` the nodes of the final
    reasoning path (``trace.meta["path"]``), ``"all"`` every node but the root question.
    Returns the fractions keyed by source (other sources, e.g. ``"tool"``, appear when
    present) and ``"nodes"``, the number of nodes counted.
    """
    counts: Counter[str] = Counter()
    for trace in traces:
        if trace is None:
            continue
        nodes = [n for n in trace.nodes if n.source != "question"]
        if scope == "path":
            on_path = set(trace.meta.get("path", []))
            nodes = [n for n in nodes if n.id in on_path]
        elif scope == "checked":
            nodes = [n for n in nodes if n.meta.get("status", "verified") in _CHECKED]
        elif scope != "all":
            raise ValueError(f'scope must be "checked", "path" or "all", got {scope!r}')
        counts.update(n.source for n in nodes)
    total = sum(counts.values())
    out = {s: (counts[s] / total if total else 0.0) for s in (*KNOWLEDGE_SOURCES, *counts)}
    out["nodes"] = float(total)
    return out


def _default_correct(trace: Trace, golds: Sequence[str]) -> bool:
    return cover_em(trace_text(trace), golds) == 1.0


def _answers(g: Any) -> list[str]:
    answers = getattr(g, "answers", g)  # an Example or a list of gold answers
    return _golds(answers)


def ir_effects(
    traces_with_ir: Sequence[Trace | None],
    traces_without_ir: Sequence[Trace | None],
    golds: Sequence[Any],
    *,
    correct: Callable[[Trace, Sequence[str]], bool] | None = None,
) -> dict[str, float]:
    """SearChain Table 3, from aligned runs with and without IR over the same questions.

    * (a) positive effect: S_IR = questions where IR corrected or completed a node of the
      with-IR trace; accuracy without IR on all questions (S) and on S_IR, and with IR on S_IR;
    * (b) negative effect: S_t = questions answered correctly without IR; the misleading
      rate is the fraction of S_t answered wrongly with IR.

    ``golds[i]`` is the gold answer list (or an :class:`~searchain.eval.datasets.Example`);
    ``correct(trace, golds)`` defaults to cover-EM of :func:`trace_text`. A missing trace
    (``None``: the item failed) counts as wrong.
    """
    n = len(golds)
    if len(traces_with_ir) != n or len(traces_without_ir) != n:
        raise ValueError("traces with IR, traces without IR and golds must align one to one")
    judge = correct or _default_correct
    answers = [_answers(g) for g in golds]
    ok_w = [t is not None and judge(t, a) for t, a in zip(traces_with_ir, answers, strict=True)]
    ok_wo = [t is not None and judge(t, a) for t, a in zip(traces_without_ir, answers, strict=True)]
    helped = [
        i
        for i, t in enumerate(traces_with_ir)
        if t is not None and any(nd.source in ("ir-corrected", "ir-completed") for nd in t.nodes)
    ]
    s_t = [i for i in range(n) if ok_wo[i]]
    misled = [i for i in s_t if not ok_w[i]]

    def mean(flags: Iterable[bool]) -> float:
        flags = list(flags)
        return sum(flags) / len(flags) if flags else 0.0

    return {
        "questions": float(n),
        "accuracy_without_ir": mean(ok_wo),
        "accuracy_with_ir": mean(ok_w),
        "ir_helped": float(len(helped)),
        "accuracy_without_ir_on_ir_helped": mean(ok_wo[i] for i in helped),
        "accuracy_with_ir_on_ir_helped": mean(ok_w[i] for i in helped),
        "correct_without_ir": float(len(s_t)),
        "misled": float(len(misled)),
        "misleading_rate": len(misled) / len(s_t) if s_t else 0.0,
    }


def ir_misleading_rate(
    traces_with_ir: Sequence[Trace | None],
    traces_without_ir: Sequence[Trace | None],
    golds: Sequence[Any],
    *,
    correct: Callable[[Trace, Sequence[str]], bool] | None = None,
) -> float:
    """SearChain Table 3(b): of the questions the LLM answers correctly without IR, the
    fraction it answers wrongly with IR (lower is better; 0.0 when none is correct without
    IR). See :func:`ir_effects`."""
    return ir_effects(traces_with_ir, traces_without_ir, golds, correct=correct)["misleading_rate"]


def efficiency(traces: Iterable[Trace | None]) -> dict[str, float]:
    """SearChain Table 5 columns, averaged per question: LLM input (``prompt_tokens``) and
    output (``completion_tokens``) size, ``rounds`` of LLM–IR interaction and wall time
    (``seconds``), plus ``llm_calls`` and ``llm_seconds``. The paper counts words; traces
    record tokens, so the size columns are in tokens. Failed items (None) are skipped."""
    done = [t for t in traces if t is not None]
    n = len(done)

    def mean(values: Iterable[float]) -> float:
        return sum(values) / n if n else 0.0

    return {
        "questions": float(n),
        "prompt_tokens": mean(t.usage.prompt_tokens for t in done),
        "completion_tokens": mean(t.usage.completion_tokens for t in done),
        "rounds": mean(t.rounds for t in done),
        "seconds": mean(t.wall_seconds for t in done),
        "llm_calls": mean(t.usage.llm_calls for t in done),
        "llm_seconds": mean(t.usage.llm_seconds for t in done),
    }


__all__ = [
    "FEVER_LABELS",
    "KNOWLEDGE_SOURCES",
    "NLI",
    "YES_NO",
    "CitationScores",
    "CitedSentence",
    "citation_precision",
    "citation_recall",
    "citation_scores",
    "claim_recall",
    "cover_em",
    "dpr_tokenize",
    "efficiency",
    "exact_match",
    "extract_label",
    "format_document",
    "has_answer",
    "ir_effects",
    "ir_misleading_rate",
    "knowledge_source_split",
    "label_accuracy",
    "parse_cited_sentences",
    "qampari_precision",
    "qampari_recall_5",
    "qampari_scores",
    "recall_at_k",
    "rouge_l",
    "skc",
    "split_sentences",
    "str_em",
    "token_f1",
    "trace_citation_scores",
    "trace_text",
]


def score_item(prediction: str, gold: dict, task: str) -> dict[str, float]:
    """The per-item metrics ``searchain eval`` records, chosen by task family: cover-EM, EM
    and token F1 for answers; label accuracy for yes/no and fact checking; ROUGE-L for
    long-form answers (against the gold answer)."""
    answers = [a for a in gold.get("answers", []) if a]
    out: dict[str, float] = {}
    if task in ("yesno", "factcheck") and gold.get("label"):
        out["accuracy"] = label_accuracy(prediction, gold["label"])
    if task == "longform":
        if answers:
            out["rouge_l"] = rouge_l(prediction, answers)
        return out
    if answers:
        out["cover_em"] = cover_em(prediction, answers)
        out["em"] = exact_match(prediction, answers)
        out["f1"] = token_f1(prediction, answers)
    return out
