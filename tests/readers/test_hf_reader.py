"""The extractive HF reader on tiny randomly initialised models built locally (no download).

The readers are checked for the DPR input layout, span constraints, exact-substring
answers, batching and error reporting (the span search alone: test_best_span.py).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from searchain.readers import HFExtractiveReader, ReaderOutput, best_span, read_passages
from searchain.readers.base import Reader
from searchain.types import Passage
from span_kit import assert_valid, brute_force

# -- tiny local models ------------------------------------------------------------------------

_WORD_LIST = (  # the tiny vocabulary: every word of the test questions and passages
    "who wrote the book what is capital of france paris city river seine flows through "
    "a in and was born year when did war end nineteen forty five novel author victor hugo "
    "miserables les published london england berlin germany play ##ing ##ed ##s , . ? ' -"
)
WORDS = _WORD_LIST.split()
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

QUESTION = "Who wrote the book Les Miserables?"
PASSAGES = [
    Passage(
        "d#0", "Les Miserables is a novel by Victor Hugo, published in Paris.", "Les Miserables"
    ),
    Passage("d#1", "Paris is the capital of France. The river Seine flows through Paris.", "Paris"),
    Passage("d#2", "The war did end in nineteen forty five and Berlin was playing.", ""),
    Passage("d#3", "Victor Hugo was born in France; he played and wrote in London.", "Victor Hugo"),
]


def _write_vocab(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "vocab.txt").write_text("\n".join(SPECIALS + WORDS) + "\n", encoding="utf-8")
    return d


def _tiny_bert_kwargs() -> dict:
    return dict(
        vocab_size=len(SPECIALS) + len(WORDS),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )


def _torch():
    # torch and transformers come with the test extra: missing, these tests fail, not skip.
    import torch
    import transformers  # noqa: F401

    return torch


@pytest.fixture(scope="module")
def dpr_dir(tmp_path_factory) -> Path:
    torch = _torch()
    from transformers import DPRConfig, DPRReader, DPRReaderTokenizerFast

    d = _write_vocab(tmp_path_factory.mktemp("tiny-dpr-reader"))
    tok = DPRReaderTokenizerFast.from_pretrained(str(d), local_files_only=True)
    torch.manual_seed(0)
    model = DPRReader(DPRConfig(**_tiny_bert_kwargs()))
    model.save_pretrained(str(d))
    tok.save_pretrained(str(d))
    return d


@pytest.fixture(scope="module")
def qa_dir(tmp_path_factory) -> Path:
    torch = _torch()
    from transformers import BertConfig, BertForQuestionAnswering, BertTokenizerFast

    d = _write_vocab(tmp_path_factory.mktemp("tiny-bert-qa"))
    tok = BertTokenizerFast.from_pretrained(str(d), local_files_only=True)
    torch.manual_seed(1)
    model = BertForQuestionAnswering(BertConfig(**_tiny_bert_kwargs()))
    model.save_pretrained(str(d))
    tok.save_pretrained(str(d))
    return d


@pytest.fixture(scope="module")
def dpr(dpr_dir) -> HFExtractiveReader:
    return HFExtractiveReader(dpr_dir, max_answer_tokens=5)


@pytest.fixture(scope="module")
def qa(qa_dir) -> HFExtractiveReader:
    return HFExtractiveReader(qa_dir, max_answer_tokens=5)


@pytest.fixture(params=["dpr", "qa"])
def reader(request) -> HFExtractiveReader:
    return request.getfixturevalue(request.param)


def test_kind_and_theta(dpr, qa):
    assert (dpr.kind, dpr.default_theta) == ("dpr", 1.5)
    assert (qa.kind, qa.default_theta) == ("qa", 0.0)
    assert dpr.name.startswith("dpr-reader:") and qa.name.startswith("hf-qa:")
    assert isinstance(dpr, Reader) and isinstance(qa, Reader)
    assert dpr.max_length == 128  # capped by the tiny model's position embeddings


def test_read_returns_a_substring_of_the_passage_text(reader):
    for p in PASSAGES:
        out = reader.read(QUESTION, p)
        assert isinstance(out, ReaderOutput)
        assert isinstance(out.answer, str) and out.answer
        assert isinstance(out.span_score, float) and math.isfinite(out.span_score)
        assert isinstance(out.confidence, float) and math.isfinite(out.confidence)
        assert out.passage_id == p.id
        assert out.answer in p.text
        assert out.answer == out.answer.strip()
        json.dumps(out.to_dict(), allow_nan=False)


def _chosen_span(reader, question, passage):
    x = reader.encode(question, passage)
    lg = reader.logits([x])[0]
    return x, lg, best_span(lg.start, lg.end, x.allowed, reader.max_answer_tokens)


def test_span_is_the_best_valid_one_inside_the_text(reader):
    for p in PASSAGES:
        x, lg, (s, e, score) = _chosen_span(reader, QUESTION, p)
        assert_valid((s, e, score), x.allowed, reader.max_answer_tokens)
        want = brute_force(list(lg.start), list(lg.end), x.allowed, reader.max_answer_tokens)
        assert score == pytest.approx(want[2], rel=1e-5, abs=1e-5)
        out = reader.read(QUESTION, p)
        assert out.span_score == pytest.approx(score, rel=1e-5, abs=1e-5)
        # the answer covers the chosen tokens' characters (widened to whole words at most)
        lo, hi = x.char_spans[s][0], x.char_spans[e][1]
        assert p.text[lo:hi] in out.answer and out.answer in p.text
        if reader.kind == "dpr":
            assert out.confidence == pytest.approx(lg.relevance, rel=1e-5, abs=1e-5)
        else:
            null = lg.start[x.cls_index] + lg.end[x.cls_index]
            assert out.confidence == pytest.approx(score - null, rel=1e-5, abs=1e-5)


def test_question_and_title_tokens_never_make_the_answer(reader, monkeypatch):
    """Huge logits on the question/title tokens (as the naive argmax would pick) are ignored."""
    p = PASSAGES[0]
    real = reader.logits

    def rigged(inputs):
        out = real(inputs)
        for x, lg in zip(inputs, out, strict=True):
            first_text = x.allowed.index(True)
            lg.start[:first_text] = 100.0
            lg.end[:first_text] = 100.0
            lg.end[first_text] = 50.0  # a huge end right at the text's first token...
            lg.start[first_text + 2] = 60.0  # ...and a huge start after it: end < start
            lg.end[first_text + 3] = 40.0
        return out

    monkeypatch.setattr(reader, "logits", rigged)
    out = reader.read(QUESTION, p)
    x = reader.encode(QUESTION, p)
    ft = x.allowed.index(True)
    assert out.answer == p.text[x.char_spans[ft + 2][0] : x.char_spans[ft + 3][1]]
    assert out.span_score == pytest.approx(100.0)


def test_dpr_input_puts_title_in_title_slot_and_text_in_text_slot(dpr):
    tok = dpr.tokenizer
    p = PASSAGES[1]
    x = dpr.encode(QUESTION, p)
    official = tok(questions=QUESTION, titles=p.title, texts=p.text)["input_ids"][0]
    assert x.input_ids == list(official)
    q_ids = tok(QUESTION, add_special_tokens=False)["input_ids"]
    title_ids = tok(p.title, add_special_tokens=False)["input_ids"]
    text_ids = tok(p.text, add_special_tokens=False)["input_ids"]
    cls, sep = tok.cls_token_id, tok.sep_token_id
    assert x.input_ids == [cls, *q_ids, sep, *title_ids, sep, *text_ids]
    # the title comes before the text, and only the text is selectable
    n_head = len(q_ids) + len(title_ids) + 3
    assert x.allowed == [False] * n_head + [True] * len(text_ids)
    assert all(span is None for span in x.char_spans[:n_head])
    assert [p.text[a:b].lower() for a, b in x.char_spans[n_head:]][:3] == ["paris", "is", "the"]


def test_dpr_empty_title_matches_the_official_tokenizer(dpr):
    p = PASSAGES[2]
    x = dpr.encode(QUESTION, p)
    official = dpr.tokenizer(questions=QUESTION, titles=p.title, texts=p.text)["input_ids"][0]
    assert x.input_ids == list(official)


def test_qa_input_marks_only_the_passage_text(qa):
    p = PASSAGES[0]
    x = qa.encode(QUESTION, p)
    spans = [s for s in x.char_spans if s is not None]
    assert spans and all(0 <= a < b <= len(p.text) for a, b in spans)
    first = x.allowed.index(True)
    assert p.text[slice(*x.char_spans[first])] == "Les"  # the title's "Les" is not allowed
    assert x.input_ids[x.cls_index] == qa.tokenizer.cls_token_id
    assert x.token_type_ids is not None and x.token_type_ids[first] == 1


def test_spans_are_widened_to_whole_words(reader, monkeypatch):
    p = Passage("w", "Berlin was playing in London.", "")
    x = reader.encode(QUESTION, p)
    pieces = [p.text[a:b] for a, b in (s for s in x.char_spans if s is not None)]
    assert "play" in pieces and "ing" in pieces
    ing = next(t for t, s in enumerate(x.char_spans) if s and p.text[s[0] : s[1]] == "ing")
    real = reader.logits

    def rigged(inputs):
        out = real(inputs)
        for lg in out:
            lg.start[ing] = lg.end[ing] = 100.0
        return out

    monkeypatch.setattr(reader, "logits", rigged)
    assert reader.read(QUESTION, p).answer == "playing"


def test_read_batch_equals_read(reader):
    batch = reader.read_batch(QUESTION, PASSAGES, batch_size=3)
    assert read_passages(reader, QUESTION, PASSAGES) == reader.read_batch(QUESTION, PASSAGES)
    assert len(batch) == len(PASSAGES)
    for p, b in zip(PASSAGES, batch, strict=True):
        one = reader.read(QUESTION, p)
        assert b.answer == one.answer
        assert b.passage_id == one.passage_id == p.id
        assert b.span_score == pytest.approx(one.span_score, rel=1e-4, abs=1e-4)
        assert b.confidence == pytest.approx(one.confidence, rel=1e-4, abs=1e-4)
    assert reader.read_batch(QUESTION, []) == []


def test_long_passages_are_truncated_to_max_length(dpr_dir, qa_dir):
    long_text = " ".join(["Paris is the capital of France."] * 60)
    p = Passage("long", long_text, "Paris")
    for d in (dpr_dir, qa_dir):
        r = HFExtractiveReader(d, max_length=48, max_answer_tokens=4)
        x = r.encode(QUESTION, p)
        assert len(x.input_ids) <= 48 and any(x.allowed)
        out = r.read(QUESTION, p)
        assert out.answer and out.answer in long_text


def test_empty_passage_text_gives_no_answer(reader):
    out = reader.read(QUESTION, Passage("e", "", "Paris"))
    assert out.answer == "" and out.span_score == -math.inf
    if reader.kind == "qa":
        assert out.confidence == -math.inf
    else:
        assert math.isfinite(out.confidence)  # the relevance logit exists regardless
    json.dumps(out.to_dict(), allow_nan=False)


def test_missing_path_is_a_clear_error(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(FileNotFoundError, match="no-such-model"):
        HFExtractiveReader(missing)
    empty = tmp_path / "empty-dir"
    empty.mkdir()
    with pytest.raises(ValueError, match="empty-dir"):
        HFExtractiveReader(empty)


def test_non_reader_checkpoints_are_refused(tmp_path):
    torch = _torch()
    from transformers import BertConfig, BertModel

    d = _write_vocab(tmp_path / "plain-bert")
    torch.manual_seed(0)
    BertModel(BertConfig(**_tiny_bert_kwargs())).save_pretrained(str(d))
    with pytest.raises(ValueError, match="plain-bert"):
        HFExtractiveReader(d)
