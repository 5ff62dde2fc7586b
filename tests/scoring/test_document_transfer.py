"""A documentation family's mapping on answers over another documentation index: applied by
``assess`` (what ``ask`` shows) as a labelled transfer score, never a probability, and only
where the family's file says it ranked its held-out items better (``transfer_record``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from searchain.scoring.confidence.assessment import assess, uncalibrated_score
from searchain.scoring.confidence.calibrator import Calibrator, forget_calibrators
from searchain.scoring.confidence.configuration import configuration
from searchain.scoring.confidence.transfer import transfer_record
from searchain.types import Passage, Trace

POOLED = ["bm25:all-answers-bm25", "bm25:answers-bm25"]


def _trace(corpus: str, *, from_files: bool = True) -> Trace:
    source = {"path": "git/git-rebase.html", "heading": ["OPTIONS"]} if from_files else None
    passage = Passage(id="p1", title="git-rebase", text="Use --onto to move a branch.",
                      source=source)  # fmt: skip
    trace = Trace(question="Which option moves a branch?", method="retrieve-read",
                  answer="--onto", references=[passage])  # fmt: skip
    trace.meta.update(corpus=corpus, task="multihop", prompt_form="chat")
    return trace


def _family(folder: Path, fit: dict[str, Any], applies: bool | None) -> None:
    data: dict[str, Any] = {
        "name": "retrieve-read--m--docs", "probability": True, "bias": 0.0,
        "features": ["has_answer"], "weights": [2.0], "means": [0.5], "scales": [0.5],
        "certification": {"configuration": fit},
    }  # fmt: skip
    if applies is not None:
        data["transfer"] = {"applies": applies, "auroc": 0.7, "uncalibrated_auroc": 0.6}
    (folder / "calibrator-retrieve-read--m--docs.json").write_text(json.dumps(data))
    forget_calibrators()


def test_an_answer_over_other_documents_gets_the_transfer_score(own_calibrators: Path) -> None:
    trace = _trace("bm25:git-doc-answers-bm25")
    _family(own_calibrators, {**configuration(trace, "m"), "corpus": POOLED}, applies=True)
    conf = assess(trace, "m")
    assert not conf.calibrated  # a score that ranks, never a probability here
    assert conf.value == pytest.approx(1 / (1 + 2.718281828**-2), rel=1e-6)
    assert (conf.calibrator or {}).get("name") == "retrieve-read--m--docs"
    assert conf.note.startswith("transfer: the mapping of retrieve-read--m--docs")
    assert "applied to an answer over bm25:git-doc-answers-bm25" in conf.note
    assert "not a probability" in conf.note


@pytest.mark.parametrize(
    ("from_files", "applies", "task"),
    [
        (False, True, "multihop"),
        (True, False, "multihop"),
        (True, None, "multihop"),
        (True, True, "yesno"),
    ],
    ids=["not-over-documents", "file-says-no", "file-says-nothing", "differs-beyond-corpus"],
)
def test_otherwise_the_uncalibrated_score_stays(
    own_calibrators: Path, from_files: bool, applies: bool | None, task: str
) -> None:
    trace = _trace("bm25:git-doc-answers-bm25", from_files=from_files)
    fit = {**configuration(trace, "m"), "corpus": POOLED, "task": task}
    _family(own_calibrators, fit, applies)
    conf = assess(trace, "m")
    assert not conf.calibrated and conf.value == uncalibrated_score(conf.signals or {})
    assert not (conf.note or "").startswith("transfer:")


def test_one_of_its_own_indexes_is_mapped_as_a_probability(own_calibrators: Path) -> None:
    trace = _trace("bm25:answers-bm25")
    _family(own_calibrators, {**configuration(trace, "m"), "corpus": POOLED}, applies=True)
    conf = assess(trace, "m")
    assert conf.calibrated and not (conf.note or "").startswith("transfer:")


def _calibrator() -> Calibrator:
    return Calibrator.from_dict(
        {"name": "x--m--docs", "bias": 0.0, "features": ["answer_in_references_rank"],
         "weights": [-1.0], "means": [3.0], "scales": [1.0]}
    )  # fmt: skip


def test_the_transfer_applies_only_where_the_mapping_ranks_held_out_items_better() -> None:
    # the vote share (binary evidence) is the same for every row; the rank separates
    rows = [{"has_answer": 1.0, "answer_in_references_rank": float(r)} for r in (1, 2, 5, 6)]
    better = transfer_record(_calibrator(), rows, [True, True, False, False])
    assert better["applies"] and better["auroc"] == 1.0 and better["uncalibrated_auroc"] == 0.5
    worse = transfer_record(_calibrator(), rows, [False, False, True, True])
    assert not worse["applies"] and worse["auroc"] == 0.0
    one_class = transfer_record(_calibrator(), rows, [True] * 4)  # AUROC undefined: no
    assert not one_class["applies"] and one_class["auroc"] is None


def test_a_bare_yes_or_no_is_not_mapped_by_a_family_fit_on_none(own_calibrators: Path) -> None:
    """Yes/no apart: the documentation family's items held no yes/no answer (its file says
    0), so a bare Yes over one of its own indexes is not given its probability."""
    trace = _trace("bm25:answers-bm25")
    trace.answer = "Yes"
    _family(own_calibrators, {**configuration(trace, "m"), "corpus": POOLED}, applies=True)
    path = own_calibrators / "calibrator-retrieve-read--m--docs.json"
    data = json.loads(path.read_text())
    assert assess(trace, "m").calibrated  # the file does not say: mapped as before
    path.write_text(json.dumps({**data, "fit_on": {"items": 150, "yes_no_items": 0}}))
    conf = assess(trace, "m")
    assert not conf.calibrated and "none of which was a bare Yes or No" in conf.note
    trace.answer = "--onto"
    assert assess(trace, "m").calibrated
