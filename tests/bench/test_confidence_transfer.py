"""``python -m bench.confidence --transfer`` (issue 51's MuSiQue figure), whose rule is
``searchain.scoring.confidence.transfer``: a calibrator fit on another corpus, and on nothing
else different, is applied as an uncalibrated score that says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from searchain.scoring.confidence import transfer
from searchain.scoring.confidence.calibrator import Calibrator
from searchain.scoring.confidence.configuration import configuration
from searchain.types import Confidence, Trace


def _trace(corpus: str) -> Trace:
    trace = Trace(question="q", method="retrieve-read", answer="Paris")
    trace.meta.update(corpus=corpus, task="multihop", prompt_form="chat")
    return trace


def _calibrator(fit: dict[str, Any]) -> Calibrator:
    return Calibrator.from_dict(
        {"name": "retrieve-read--m", "bias": 0.0, "features": ["has_answer"],
         "weights": [2.0], "means": [0.5], "scales": [0.5],
         "certification": {"configuration": fit}}
    )  # fmt: skip


@pytest.mark.parametrize(
    "other", [{"corpus": "bm25:demo"}, {"corpus": "bm25:demo", "task": "yesno"}]
)
def test_only_a_corpus_difference_is_transferred(other: dict, monkeypatch) -> None:
    trace = _trace("bm25:musique")
    fit = {**configuration(trace, "m"), **other}
    monkeypatch.setattr(transfer, "find_calibrator", lambda *a: _calibrator(fit))
    before = Confidence(value=0.4, calibrated=False, signals={"has_answer": 1.0}, note="n")
    after = transfer.transferred(before, trace, "m")
    if len(other) == 1:
        assert after.value == pytest.approx(1 / (1 + 2.718281828**-2), rel=1e-6)
        assert not after.calibrated and after.note.startswith("transfer: ")
        assert "fit on corpus bm25:demo, applied to an answer over bm25:musique" in after.note
    else:  # the task differs too (a label instruction): no transfer, the score as it was
        assert (after.value, after.note) == (0.4, "n")


def test_without_maxprob_scores_with_the_plain_calibrator(own_calibrators: Path) -> None:
    """Issue 51's held-out run records MaxProb: ``--without maxprob`` gives its answers the
    confidence `ask` shows (the plain calibrator, MaxProb shown, not used, and kept in the
    trace for the MaxProb baseline); without it, the ``+maxprob`` calibrator's."""
    import json

    from confidence_kit import shipped_meta
    from searchain.scoring.confidence.calibrator import shipped_calibrator

    shipped = shipped_calibrator("searchain", "qwen2.5-coder-1.5b")
    assert shipped is not None
    mine = own_calibrators
    plain = {**shipped.to_dict(), "probability": True}  # copies: whatever the shipped fit beat
    variant = {**plain, "name": "searchain+maxprob--qwen2.5-coder-1.5b", "bias": plain["bias"] + 1}
    (mine / "calibrator-searchain--qwen2.5-coder-1.5b.json").write_text(json.dumps(plain))
    (mine / "calibrator-searchain+maxprob--qwen2.5-coder-1.5b.json").write_text(json.dumps(variant))
    trace = Trace(question="q", method="searchain", answer="Paris")
    trace.meta.update(shipped_meta(), maxprob={"value": 0.9})
    with_signal = transfer.confidence_of(trace, "qwen2.5-coder-1.5b")
    default = transfer.confidence_of(trace, "qwen2.5-coder-1.5b", ("maxprob",))
    assert with_signal.calibrator["name"] == "searchain+maxprob--qwen2.5-coder-1.5b"
    assert default.calibrated and default.calibrator["name"] == "searchain--qwen2.5-coder-1.5b"
    assert "answer_maxprob: shown, not used" in default.note
    assert default.value < with_signal.value and trace.meta["maxprob"] == {"value": 0.9}


def test_a_calibrator_of_pooled_corpora_maps_each_and_transfers_to_others(monkeypatch) -> None:
    """Documentation questions over several manuals' indexes are one configuration whose
    corpus is the list of theirs: an answer over any of them is like the calibrator's items
    (no difference, no transfer); over another index the mapping is a labelled transfer."""
    from searchain.scoring.confidence.configuration import differences, pooled

    a, b = configuration(_trace("bm25:answers"), "m"), configuration(_trace("bm25:all"), "m")
    fit, said = pooled([a, b, a])
    assert (fit["corpus"], said) == (["bm25:all", "bm25:answers"], [])
    assert differences(fit, b) == []
    assert differences(fit, configuration(_trace("bm25:git-doc"), "m")) == [
        "corpus bm25:git-doc, fit on one of bm25:all, bm25:answers"
    ]
    _, said = pooled([a, {**b, "task": "yesno"}])  # unlike in more than the corpus: refused
    assert said and "task yesno" in said[0]
    monkeypatch.setattr(transfer, "find_calibrator", lambda *a: _calibrator(fit))
    before = Confidence(value=0.4, calibrated=False, signals={"has_answer": 1.0}, note="n")
    inside = transfer.transferred(before, _trace("bm25:all"), "m")
    assert (inside.value, inside.note) == (0.4, "n")  # one of its corpora: not a transfer
    other = Confidence(value=0.4, calibrated=False, signals={"has_answer": 1.0}, note="n")
    outside = transfer.transferred(other, _trace("bm25:git-doc"), "m")
    assert "fit on corpus bm25:all, bm25:answers, applied to an answer over bm25:git-doc" in (
        outside.note or ""
    )


def test_a_family_calibrator_transfers_to_another_documentation_index(
    own_calibrators: Path,
) -> None:
    """The documentation family, fit over three indexes, is applied to an answer over a
    fourth (the frozen git-doc set's) as a labelled transfer, found without a stand-in."""
    import json

    from searchain.scoring.confidence.calibrator import forget_calibrators

    trace = _trace("bm25:git-doc")
    fit = {**configuration(trace, "m"), "corpus": ["bm25:all", "bm25:answers"]}
    docs = {**_calibrator(fit).to_dict(), "name": "retrieve-read--m--docs"}
    (own_calibrators / "calibrator-retrieve-read--m--docs.json").write_text(json.dumps(docs))
    (own_calibrators / "calibrator-retrieve-read--m--bak.json").write_text(json.dumps(docs))
    forget_calibrators()
    before = Confidence(value=0.4, calibrated=False, signals={"has_answer": 1.0}, note="n")
    after = transfer.transferred(before, trace, "m")
    assert (after.calibrator or {}).get("name") == "retrieve-read--m--docs"
    assert "fit on corpus bm25:all, bm25:answers, applied to an answer over bm25:git-doc" in (
        after.note or ""
    )
    from searchain.scoring.confidence.calibrator import family_calibrators

    assert [c.name for c in family_calibrators("retrieve-read", "m")] == ["retrieve-read--m--docs"]
