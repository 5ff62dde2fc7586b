"""The configuration identity a calibrator holds for includes the model file, θ, k, the reader,
the evidence step's passages and the yes/no check: an answer made otherwise is not mapped and
the note says which; a calibrator fit before the identity named them says why it maps nothing;
a recorded run's manifest stamps what its traces do not record."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from confidence_kit import SHIPPED_MODEL, shipped_meta
from searchain.eval.run_stamps import run_config, stamped
from searchain.llm.base import model_file
from searchain.llm.cache import CachedLLM, SqliteStore
from searchain.llm.openai_backend import OpenAILLM
from searchain.scoring.confidence import assess
from searchain.scoring.confidence.calibrator import Calibrator
from searchain.scoring.confidence.configuration import configuration
from searchain.server.cancellable import CancellableLLM
from searchain.types import Citation, Node, Passage, Trace

PASSAGE = Passage("p1", "Kiss and Tell is a film starring Shirley Temple.", "Kiss and Tell")


def _searchain_trace() -> Trace:
    node = Node(id="r1.1", query="Who starred in Kiss and Tell?", answer="Shirley Temple")
    node.passages, node.meta = [PASSAGE], {"status": "verified"}
    trace = Trace(question="Who portrayed Corliss Archer in Kiss and Tell?", method="searchain")
    trace.answer = trace.final_content = "Shirley Temple"
    trace.nodes, trace.references = [node], [PASSAGE]
    trace.citations = [Citation(mark=1, passage_id="p1")]
    trace.meta.update(shipped_meta("searchain"), path=["r1.1"], rounds=1)
    return trace


def _shipped(variant: str = "searchain") -> dict[str, Any]:
    name = f"calibrator-{variant}--{SHIPPED_MODEL}.json"
    return json.loads(resources.files("searchain.data").joinpath(name).read_text("utf-8"))


def test_the_shipped_calibrators_name_the_wider_identity() -> None:
    fit = _shipped()["certification"]["configuration"]
    assert fit["model_file"] == "qwen2.5-coder-1.5b-instruct.gguf"
    assert (fit["k"], fit["reader"], fit["yesno_check"]) == (1, "llm", "span")
    assert isinstance(fit["theta"], float) and fit["evidence_k"] == 5


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("theta", 1.5, "reader threshold θ 1.5, fit on"),
        ("k", 3, "passages per node k 3, fit on 1"),
        ("evidence_k", 10, "evidence passages 10, fit on 5"),
        ("reader", "hf-qa:bert", "reader hf-qa:bert, fit on llm"),
        ("yesno_check", "nli", "yes/no check nli, fit on span"),
        ("model_file", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "model file qwen2.5"),
    ],
)
def test_an_answer_made_otherwise_is_not_mapped_and_the_note_says_how(
    field: str, value: object, said: str
) -> None:
    trace = _searchain_trace()
    same = assess(trace, SHIPPED_MODEL).note  # the shipped configuration: its calibrator's
    assert "another configuration" not in same, same
    trace.meta[field] = value
    conf = assess(trace, SHIPPED_MODEL)
    assert not conf.calibrated and "another configuration" in conf.note
    assert said in conf.note, conf.note


def test_a_calibrator_fit_before_the_wider_identity_says_why_it_maps_nothing() -> None:
    old = copy.deepcopy(_shipped())
    for field in ("model_file", "theta", "k", "evidence_k", "reader", "yesno_check"):
        del old["certification"]["configuration"][field]
    maps, why = Calibrator.from_dict(old).applies_to(
        configuration(_searchain_trace(), SHIPPED_MODEL)
    )
    assert not maps
    assert "model file qwen2.5-coder-1.5b-instruct.gguf, fit on not recorded" in why
    assert "yes/no check span, fit on not recorded" in why


def test_a_trace_without_a_yesno_setting_was_made_with_span() -> None:
    trace = _searchain_trace()
    del trace.meta["yesno_check"]  # made before the setting: the span check, the only one
    assert configuration(trace, SHIPPED_MODEL)["yesno_check"] == "span"
    other = Trace(question="q", method="retrieve-read", answer="a")
    assert configuration(other, SHIPPED_MODEL)["yesno_check"] is None  # not SearChain's


def test_the_model_file_is_found_through_wrappers(tmp_path: Path, chat_llm: Any) -> None:
    assert model_file(chat_llm) == chat_llm.model_path.name
    cached = CachedLLM(CancellableLLM(chat_llm), SqliteStore(tmp_path / "calls.sqlite"))
    assert model_file(cached) == "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    served = OpenAILLM("my-model", base_url="http://127.0.0.1:9/v1", api_key="x")
    assert model_file(served) == "my-model (API)"
    replay = CachedLLM(None, SqliteStore(tmp_path / "r.sqlite"), backend="local", model="m")
    assert model_file(replay) is None  # a replay cannot know which weights answered


def test_a_run_manifest_stamps_what_its_old_traces_do_not_record(tmp_path: Path) -> None:
    method_config = {"searchain": {"k": 2, "reader": "LLMReader", "final_step": "evidence"}}
    manifest = {
        "config": {"llm": "local", "model": SHIPPED_MODEL, "method_config": method_config},
        "meta": {"label_rule": 2},
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    trace = Trace(question="q", method="searchain", answer="a")
    # An old SearChain trace: it records its chains, not its k, reader or label rule.
    trace.meta.update(
        final_step="evidence", evidence_sources="path+question", theta=-1.3, chains=[]
    )
    said = configuration(stamped(trace, run_config(tmp_path)), SHIPPED_MODEL)
    assert said["model_file"] == "qwen2.5-coder-1.5b-instruct.gguf"
    assert (said["k"], said["reader"], said["label_rule"]) == (2, "llm", 2)
    assert (said["evidence_k"], said["yesno_check"]) == (5, "span")  # left out: `before`
    served = {**manifest["config"], "llm": "openai", "base_url": "http://127.0.0.1:9/v1"}
    trace = Trace(question="q", method="searchain", answer="a")
    assert configuration(stamped(trace, served), SHIPPED_MODEL)["model_file"] is None


RESULTS = Path(__file__).resolve().parents[2] / "results" / "quality" / "qwen2.5-coder-1.5b"
# SearChain with its three ablations and every baseline; SearChain's read-first route.
COMMITTED = (RESULTS / "hotpotqa", RESULTS / "tune" / "hotpotqa-route-always")


@pytest.mark.parametrize("run", COMMITTED, ids=lambda p: p.name)
def test_committed_traces_are_a_chain_s_exactly_when_searchain_made_them(run: Path) -> None:
    """Issue 63: the configuration identity asks the trace whether SearChain's settings apply
    (``trace_kind.chain_of_query``), not its method's name; on the committed runs the two say
    the same, so their identity (and the calibrators fit on them) stays what it was."""
    from searchain.scoring.trace_kind import chain_of_query

    config, seen = run_config(run), set()
    for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if not record.get("trace"):
            continue
        trace = Trace.from_dict(record["trace"])
        searchain = trace.method.startswith("searchain")
        assert chain_of_query(trace) == searchain, trace.method
        said = configuration(stamped(trace, config), SHIPPED_MODEL)
        assert (said["label_rule"] is not None) == searchain
        assert (said["final_step"] is not None) == searchain
        seen.add(trace.method)
    assert "searchain" in seen


OLD_EVIDENCE_RUN = RESULTS / "tune" / "hotpotqa-fresh-evidence"  # before evidence_sources


def test_an_evidence_answer_without_its_sources_is_refused_by_name() -> None:
    """A committed evidence-step run made before ``evidence_sources`` was recorded: its
    configuration cannot be named, and calibrating on it says which run and item, and why
    (it was a bare ``KeyError('evidence_sources')``)."""
    from searchain.eval.calibrate import calibration_rows
    from searchain.scoring.confidence.configuration import UnnamedConfiguration

    trace = Trace(question="q", method="searchain", answer="a")
    trace.meta.update(final_step="evidence", chains=[])
    with pytest.raises(UnnamedConfiguration, match=r"evidence_sources.*answer it again"):
        configuration(trace, SHIPPED_MODEL)
    first = json.loads((OLD_EVIDENCE_RUN / "results.jsonl").read_text("utf-8").split("\n")[0])
    with pytest.raises(ValueError, match=f"hotpotqa-fresh-evidence: item {first['id']}: "):
        calibration_rows([OLD_EVIDENCE_RUN], "searchain")


def test_a_retrieve_read_answer_is_mapped_only_by_a_calibrator_of_its_template() -> None:
    """The shipped retrieve-read calibrators were fit on one-sentence answers (template
    ``retrieve_read``, stamped from their runs' manifests); answers of today's default, which
    end with the short answer (``retrieve_read_answer``), are another configuration."""
    trace = Trace(question="Who directed Jaws?", method="retrieve-read", answer="Spielberg")
    trace.final_content = "Steven Spielberg directed Jaws [1]."
    trace.references, trace.citations = [PASSAGE], [Citation(mark=1, passage_id="p1")]
    trace.meta.update(shipped_meta("retrieve-read"), template="retrieve_read_answer")
    note = assess(trace, SHIPPED_MODEL).note
    assert "prompt template retrieve_read_answer, fit on retrieve_read" in note, note
    trace.meta["template"] = "retrieve_read"
    assert "another configuration" not in assess(trace, SHIPPED_MODEL).note
    del trace.meta["template"]  # made before the template was recorded: the one-sentence form
    assert configuration(trace, SHIPPED_MODEL)["template"] == "retrieve_read"
    assert configuration(_searchain_trace(), SHIPPED_MODEL)["template"] is None


def test_a_family_calibrator_maps_the_answers_of_its_own_configuration(
    own_calibrators: Path,
) -> None:
    """A calibrator fit on documentation questions (``…--docs.json``) sits beside the
    method's own: an answer over one of its corpora is mapped by it (and ``--max-risk``
    finds its certificate by its name); an answer over another corpus is not, and the note
    says why as before."""
    from searchain.scoring.confidence.calibrator import forget_calibrators
    from searchain.scoring.confidence.risk_bound import RiskBound

    trace = _searchain_trace()
    trace.meta["corpus"] = "bm25:all-answers-bm25+parts+bridge"
    docs = copy.deepcopy(_shipped())
    fit = docs["certification"]["configuration"]
    fit.update(configuration(trace, SHIPPED_MODEL))
    fit["corpus"] = ["bm25:all-answers-bm25+parts+bridge", "bm25:answers-bm25+parts+bridge"]
    docs["name"], docs["probability"] = f"searchain--{SHIPPED_MODEL}--docs", True
    path = own_calibrators / f"calibrator-searchain--{SHIPPED_MODEL}--docs.json"
    path.write_text(json.dumps(docs), encoding="utf-8")
    forget_calibrators()
    conf = assess(trace, SHIPPED_MODEL)
    assert conf.calibrated and conf.calibrator["name"] == docs["name"], conf.note
    bound = RiskBound(0.5, 0.1)
    assert bound.certificate(conf).reason != "its calibrator is gone"
    trace.meta["corpus"] = "bm25:git-doc-answers-bm25+parts+bridge"
    other = assess(trace, SHIPPED_MODEL)
    assert not other.calibrated and "another configuration" in other.note
