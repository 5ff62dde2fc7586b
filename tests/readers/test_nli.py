"""NLI judges: Hugging Face checkpoints (tiny models built here, no download) and the LLM judge
(the real embedded model, and recorded real outputs for exact checks)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from recordings import recorded_llm
from searchain.readers.nli import HFNLIJudge, LLMJudge, NLIJudge, entailment_index, make_judge
from searchain.scoring import citation_scores

WORDS = (
    "premise hypothesis : 1 0 paris is the capital of france river seine flows through city "
    "a in and was born berlin germany london england . , ' -"
).split()
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
LABELS3 = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}


def _tokenizer(d: Path):
    from transformers import BertTokenizerFast

    d.mkdir(parents=True, exist_ok=True)
    (d / "vocab.txt").write_text("\n".join(SPECIALS + WORDS) + "\n", encoding="utf-8")
    return BertTokenizerFast.from_pretrained(str(d), local_files_only=True)


def _classifier(d: Path, id2label: dict[int, str], bias: list[float]) -> Path:
    """A tiny BERT NLI classifier whose logits are exactly ``bias`` (zero classifier
    weights), so its verdict depends only on the label mapping under test."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    tok = _tokenizer(d)
    cfg = BertConfig(
        vocab_size=len(SPECIALS) + len(WORDS), hidden_size=32, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=128,
        num_labels=len(id2label), id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )  # fmt: skip
    torch.manual_seed(0)
    model = BertForSequenceClassification(cfg)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor(bias))
    model.save_pretrained(str(d))
    tok.save_pretrained(str(d))
    return d


def test_classifier_reads_the_entailment_label_from_id2label(tmp_path):
    d = _classifier(tmp_path / "m", LABELS3, [0.0, 1.0, 3.0])
    judge = HFNLIJudge(d)
    assert isinstance(judge, NLIJudge)
    assert judge.entail_index == 2
    p = judge.probability("paris is the capital of france .", "paris is a city .")
    expected = math.exp(3) / (1 + math.e + math.exp(3))
    assert p == pytest.approx(expected, rel=1e-5)
    assert judge.entails("paris is the capital of france .", "paris is a city .")
    assert judge("a", "b") is True  # callable like the metrics' nli(premise, hypothesis)


def test_same_logits_with_entailment_elsewhere_do_not_entail(tmp_path):
    # Identical logits; only the mapping differs: class 2 is now "neutral".
    labels = {0: "entailment", 1: "contradiction", 2: "neutral"}
    judge = HFNLIJudge(_classifier(tmp_path / "m", labels, [0.0, 1.0, 3.0]))
    assert judge.entail_index == 0
    assert judge.probability("paris .", "berlin .") == pytest.approx(1 / (1 + math.e + math.exp(3)))
    assert not judge.entails("paris .", "berlin .")
    # A threshold replaces the argmax rule.
    low = HFNLIJudge(tmp_path / "m", threshold=0.01)
    assert low.entails("paris .", "berlin .")


def test_unnamed_labels_need_an_explicit_entailment_label(tmp_path):
    d = _classifier(tmp_path / "m", {0: "LABEL_0", 1: "LABEL_1"}, [0.0, 2.0])
    with pytest.raises(ValueError, match="entailment class"):
        HFNLIJudge(d)
    judge = HFNLIJudge(d, entail_label="LABEL_1")
    assert judge.entails("paris .", "paris .")
    assert entailment_index({"0": "not_entailment", "1": "entailment"}) == 1


def test_long_premises_are_judged_in_windows_that_cover_all_of_it(tmp_path):
    d = _classifier(tmp_path / "m", LABELS3, [0.0, 0.0, 2.0])
    judge = HFNLIJudge(d, max_length=32)
    premise = " ".join(f"paris is the capital of france {w} ." for w in WORDS[5:20])
    hypothesis = "the river seine flows through paris ."
    windows = judge.windows(premise, hypothesis)
    assert len(windows) > 2
    for w in windows:
        assert len(judge.tokenizer(w, hypothesis)["input_ids"]) <= 32
    assert premise.startswith(windows[0]) and premise.endswith(windows[-1])
    # Consecutive windows overlap, so no token of the premise falls between two windows.
    start, end = 0, len(windows[0])
    for w in windows[1:]:
        start = premise.index(w, start + 1)
        assert start <= end  # overlaps (or touches) the previous window
        end = start + len(w)
    assert end == len(premise)
    assert judge.entails(premise, hypothesis)
    too_long = " ".join(["paris"] * 40)
    with pytest.raises(ValueError, match="no room"):
        judge.windows(premise, too_long)


def test_t5_style_judge_reads_the_probability_of_answer_one(tmp_path):
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    d = tmp_path / "t5"
    tok = _tokenizer(d)
    cfg = T5Config(vocab_size=len(SPECIALS) + len(WORDS), d_model=16, d_ff=32, d_kv=8,
                   num_layers=1, num_heads=2, decoder_start_token_id=0, pad_token_id=0,
                   tie_word_embeddings=False)  # fmt: skip
    torch.manual_seed(0)
    T5ForConditionalGeneration(cfg).save_pretrained(str(d))
    tok.save_pretrained(str(d))
    judge = HFNLIJudge(d)
    assert judge.seq2seq
    p = judge.probability("paris is the capital of france .", "paris is a city .")
    # By hand: the decoder's first-step logits for "1" and "0" after the start token.
    enc = tok("premise: paris is the capital of france . hypothesis: paris is a city .",
              return_tensors="pt")  # fmt: skip
    with torch.no_grad():
        logits = judge.model(**enc, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long))
    one, zero = tok.convert_tokens_to_ids(["1", "0"])
    lg = logits.logits[0, -1]
    assert p == pytest.approx(float(torch.sigmoid(lg[one] - lg[zero])), rel=1e-5)
    assert judge.entails("paris is the capital of france .", "paris is a city .") == (p >= 0.5)
    # Swapping the "1" and "0" rows of the output layer turns P into 1 - P.
    with torch.no_grad():
        w = judge.model.lm_head.weight
        w[[one, zero]] = w[[zero, one]]
    judge._memo = type(judge._memo)()
    assert judge.probability("paris is the capital of france .", "paris is a city .") == (
        pytest.approx(1 - p, abs=1e-6)
    )


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config\.json"):
        make_judge(str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="needs an LLM"):
        make_judge("llm")


def test_hf_judge_plugs_into_alce_citation_scores(tmp_path):
    judge = HFNLIJudge(_classifier(tmp_path / "m", LABELS3, [0.0, 0.0, 2.0]))
    s = citation_scores([("paris is a city .", [1, 2])], ["paris .", "france ."], judge)
    # Always entails: recall 1; each citation alone entails, so none is irrelevant.
    assert (s.recall, s.precision, s.irrelevant) == (1.0, 1.0, 0)


# -- the LLM judge ------------------------------------------------------------------------------

SUPPORTED = (
    "Title: Mawsynram\nMawsynram is a village in the East Khasi Hills district of Meghalaya "
    "state in north-eastern India. It is reportedly the wettest place on Earth, with an "
    "average annual rainfall of 11,872 mm.",
    "Mawsynram is reportedly the wettest place on Earth.",
)
UNSUPPORTED = (SUPPORTED[0], "Mawsynram is the capital city of Brazil and has a desert climate.")


def test_llm_judge_prompt_keeps_every_paragraph(tmp_path):
    judge = LLMJudge(recorded_llm("nli_judge"))
    premise = "First paragraph about Paris.\n\nSecond paragraph.\n\nThird: the Seine."
    prompt = judge.prompt(premise, "A claim.\n\nWith a second paragraph.")
    assert premise in prompt and "With a second paragraph." in prompt
    assert prompt.endswith("Supported:")


def test_llm_judge_on_recorded_real_outputs():
    llm = recorded_llm("nli_judge")
    judge = LLMJudge(llm)
    p_yes = judge.probability(*SUPPORTED)
    p_no = judge.probability(*UNSUPPORTED)
    assert p_yes is not None and p_no is not None
    assert 0.0 < p_no < p_yes < 1.0
    assert judge.entails(*SUPPORTED) == (p_yes >= 0.5)
    calls = llm.usage.llm_calls + llm.usage.cached_calls
    assert calls == 4  # " Yes" and " No" for each pair
    judge.entails(*SUPPORTED)
    assert llm.usage.llm_calls + llm.usage.cached_calls == calls  # memoised, no new call
    s = citation_scores([(SUPPORTED[1], [1]), (UNSUPPORTED[1], [1])], [SUPPORTED[0]], judge)
    assert s.sentences == 2 and s.citations == 2
    assert s.recall == float(p_yes >= 0.5) / 2 + float(p_no >= 0.5) / 2


@pytest.mark.slow
def test_llm_judge_with_the_real_embedded_model():
    from searchain.llm.local import LocalLLM

    judge = LLMJudge(LocalLLM())
    p_yes = judge.probability(*SUPPORTED)
    p_no = judge.probability(*UNSUPPORTED)
    assert p_yes is not None and p_no is not None
    assert math.isfinite(p_yes) and math.isfinite(p_no)
    assert p_yes > p_no  # the stated fact is more supported than the contradicted one
    assert judge.usage.llm_calls == 4
