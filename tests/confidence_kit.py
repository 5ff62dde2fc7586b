"""The configuration the shipped calibrators were fit on, read from the package's files: the
confidence tests make their traces with it, so they follow a refit."""

from __future__ import annotations

import json
from importlib import resources

from searchain.methods.searchain.node_labels import LABEL_RULE
from searchain.scoring.confidence.configuration import QUESTION_LAST

SHIPPED_MODEL = "qwen2.5-coder-1.5b"


def shipped_meta(variant: str = "searchain") -> dict[str, object]:
    """The trace meta of the configuration the shipped calibrator ``variant`` was fit on, read
    from the package's file (its certification's configuration), so these tests follow a
    refit: the prompt form, task, corpus, node-label rule, model file and, for SearChain, θ, k,
    the reader, the yes/no check and the CoQ template that says the question position and the
    final step with its evidence sources."""
    name = f"calibrator-{variant}--{SHIPPED_MODEL}.json"
    fitted = json.loads(resources.files("searchain.data").joinpath(name).read_text("utf-8"))
    config = fitted["certification"]["configuration"]
    meta: dict[str, object] = {
        "prompt_form": config["prompt_form"],
        "task": config["task"],
        "corpus": config["corpus"],
        "label_rule": config["label_rule"] or LABEL_RULE,
    }
    # The identity's later fields, where the calibrator names them (bench/calibrator_identity.py):
    # recorded as a trace records them (the evidence step's passages only with that step).
    for field in ("model_file", "template", "theta", "k", "evidence_k", "reader", "yesno_check"):
        if config.get(field) is not None:
            meta[field] = config[field]
    if config["question_position"] is not None:
        last = config["question_position"] == "last"
        meta["template"] = "searchain/coq_multihop" + (QUESTION_LAST if last else "")
    step = config["final_step"]
    if step is not None:  # a chain's configuration: its trace records its rounds' chains
        meta["final_step"], _, sources = step.partition(":")
        if sources:
            meta["evidence_sources"] = sources
        meta["chains"] = []
    return meta


# SearChain's shipped calibrator's configuration (its calibration runs')
SHIPPED_META = shipped_meta()
