"""What a recorded run's manifest says of its answers' configuration that their traces may not.

A trace records the configuration it was made with (``scoring/confidence/configuration.py``),
but runs made before a field was recorded do not: their manifest still says it. Fitting a calibrator
from such a run stamps each trace with it here, once — the corpus, the node-label rule's
version, the model file an embedded named model answers from, a baseline's prompt template,
and SearChain's θ-adjacent
settings (k, the reader, the evidence step's passages, the yes/no check). A setting the
manifest leaves out was at its ``before`` value (``eval.methods.config_values``); what the
manifest cannot say stays unrecorded, and a calibrator fit on it says so.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from searchain.eval.method_kinds import chain_record
from searchain.eval.runner import MANIFEST
from searchain.llm.models import packaged_file
from searchain.methods.searchain.config import SearChainConfig
from searchain.retrieval.identity import corpus_of_run
from searchain.scoring.confidence.configuration import CORPUS_KEY, LABEL_RULE_KEY, MODEL_FILE_KEY
from searchain.types import Trace

READER_NAMES = {"LLMReader": "llm"}  # a manifest names the reader's class (readers/llm_reader)


def stamped(trace: Trace, config: dict[str, Any]) -> Trace:
    """A recorded trace with what its run's manifest ``config`` says of its configuration
    and the trace itself does not (runs made before answers recorded it)."""
    corpus = corpus_of_run(config)
    if corpus is not None:
        trace.meta.setdefault(CORPUS_KEY, corpus)
    if LABEL_RULE_KEY in config:
        trace.meta.setdefault(LABEL_RULE_KEY, config[LABEL_RULE_KEY])
    embedded = config.get("llm") == "local" and not config.get("base_url")
    file = packaged_file(str(config.get("model"))) if embedded else None
    if file is not None:
        trace.meta.setdefault(MODEL_FILE_KEY, file)
    record = chain_record(trace.method)
    template = ((config.get("method_config") or {}).get(trace.method) or {}).get("template")
    if record is None and template is not None:  # a baseline's answer form
        trace.meta.setdefault("template", template)
    if record is not None:
        # Read under the record's own name, an ablation's trace too (as it always was).
        for key, value in searchain_settings(config, record.name).items():
            trace.meta.setdefault(key, value)
    return trace


def searchain_settings(config: dict[str, Any], method: str) -> dict[str, Any]:
    """SearChain's k, reader, evidence passages and yes/no check as the run's manifest
    records them for ``method`` (those left out: their ``before`` value); {} when it records
    none."""
    recorded = (config.get("method_config") or {}).get(method)
    if not recorded:
        return {}
    before = {
        f.name: f.metadata["before"]
        for f in dataclasses.fields(SearChainConfig)
        if "before" in f.metadata
    }
    settings = before | recorded
    found = {
        "k": settings.get("k"),
        "reader": READER_NAMES.get(str(settings.get("reader")), settings.get("reader")),
        "yesno_check": settings.get("yesno_check"),
    }
    if settings.get("final_step") == "evidence":
        found["evidence_k"] = settings.get("evidence_k")
    return {k: v for k, v in found.items() if v is not None}


def run_config(run: str | Path) -> dict[str, Any]:
    """A run's manifest config, with the label rule's version its meta records."""
    try:
        manifest = json.loads((Path(run) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    config = dict(manifest.get("config") or {})
    if LABEL_RULE_KEY in (manifest.get("meta") or {}):
        config.setdefault(LABEL_RULE_KEY, manifest["meta"][LABEL_RULE_KEY])
    return config
