"""What produced a run besides its configuration, and what changed when it is resumed.

A run's manifest keeps its configuration (hashed: another one is refused) and, apart from
it, the environment that started it: the resolved model and its file, the index's
fingerprint, the versions of the packages that shape the numbers, and the code (``source``:
the commit, the tree of the package's sources and a digest of their uncommitted changes, so
that committing results does not read as new code). Resuming with a different one is still
the same run — its configuration is — but its finished and new items may not compare, so
every difference is said (:func:`environment_changes`). ``eval/reuse.py`` refuses another
model file or index; across package versions and code it lends records of methods whose
resolved settings are the same, and says which differences it crossed.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from searchain.eval.rundir import MANIFEST
from searchain.redaction import clean_url

# Packages whose version can change a run's numbers; recorded when installed.
RECORDED_PACKAGES = (
    "llama-cpp-python",
    "openai",
    "bm25s",
    "numpy",
    "torch",
    "transformers",
    "sentence-transformers",
    "faiss-cpu",
    "rouge-score",
    "ray",
)


def index_fingerprint(retriever: Any) -> Any:
    """What an index was built from and how (corpus hash, passage count, tokenizer and
    scoring settings), without its build time; a list for fused retrievers; the base's with
    the plan's settings for one searched by a query plan (``+parts``, ``+bridge``: the
    default); ``None`` when the retriever does not say (a remote one)."""
    parts = getattr(retriever, "retrievers", None)
    if parts is not None:
        return [index_fingerprint(r) for r in parts]
    plan = getattr(retriever, "plan_settings", None)
    if isinstance(plan, dict):
        return {"query_plan": plan, "base": index_fingerprint(retriever.base)}
    meta = getattr(retriever, "metadata", None)
    if not isinstance(meta, dict):
        return None
    return _without(meta, {"created", "path"})


def _without(value: Any, keys: set[str]) -> Any:
    """``value`` without ``keys`` at any depth: the build time, and file locations, which
    differ between machines that hold the same index (hashes and sizes say what it is)."""
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def runtime_environment(llm: Any = None, retriever: Any = None) -> dict[str, Any]:
    """What produced a run besides its configuration: the resolved model (name, backend,
    endpoint, GGUF file and size), the index (see :func:`index_fingerprint`) and the
    versions of the packages that shape the numbers."""
    from importlib import metadata

    from searchain.llm.base import unwrapped

    packages = {}
    for name in RECORDED_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    env: dict[str, Any] = {
        "packages": packages,
        "platform": platform.platform(),
        "source": source_revision(),
    }
    clients = list(unwrapped(llm))
    inner = clients[-1] if clients else None  # the real backend, under the call cache
    if inner is not None:
        model: dict[str, Any] = {
            "name": getattr(inner, "model", None),
            "backend": getattr(inner, "backend", None),
        }
        path = getattr(inner, "model_path", None)
        if path is not None:
            model["path"] = str(path)
            model["bytes"] = Path(path).stat().st_size
        url = getattr(inner, "base_url", None)
        if url:  # without user-info or query: a key must never land in a run directory
            from urllib.parse import urlsplit

            model["base_url"] = clean_url(urlsplit(str(url))._replace(query="").geturl())
        env["model"] = model
    if retriever is not None:
        env["index"] = index_fingerprint(retriever)
    return env


LABEL_RULE_CHANGE = "SearChain's node labels follow rule"  # how that change is said


ChangeKind = Literal["label_rule", "model", "index", "package", "source"]


@dataclass(frozen=True, slots=True)
class EnvironmentChange:
    kind: ChangeKind
    words: str  # said to the user as a warning on resume


def environment_differences(
    run_dir: str | Path, environment: dict[str, Any]
) -> list[EnvironmentChange]:
    """What differs between the environment that started a run and the one resuming it: a
    different model file or index makes the finished and the new items incomparable, so
    the user must hear of it (the run itself is still resumed: the config is the same)."""
    path = Path(run_dir) / MANIFEST
    if not path.exists():
        return []
    from searchain.methods.searchain.node_labels import FIRST_LABEL_RULE, LABEL_RULE

    manifest = json.loads(path.read_text())
    old = manifest.get("environment") or {}
    changes = []
    if (rule := manifest.get("label_rule", FIRST_LABEL_RULE)) != LABEL_RULE:
        words = f"{LABEL_RULE_CHANGE} {LABEL_RULE} (the run started with rule {rule})"
        changes.append(EnvironmentChange("label_rule", words))
    for key, what in (("model", "the model"), ("index", "the index")):
        # A run whose manifest recorded no index (a remote one, or a query-planned one
        # before it was fingerprinted) has nothing to compare with.
        if old.get(key) is not None and key in environment and old[key] != environment[key]:
            words = f"{what} differs from the one that started this run"
            changes.append(EnvironmentChange(key, words))  # type: ignore[arg-type]
    before, now = old.get("packages", {}), environment.get("packages", {})
    for name in sorted(set(before) & set(now)):
        if before[name] != now[name]:
            words = f"{name} {now[name]} (the run started with {before[name]})"
            changes.append(EnvironmentChange("package", words))
    started, running = _code(old), _code(environment)
    if started and running and started != running:
        changes.append(EnvironmentChange("source", _code_change(old, environment)))
    return changes


def environment_changes(run_dir: str | Path, environment: dict[str, Any]) -> list[str]:
    """:func:`environment_differences`, as the words the user is told."""
    return [c.words for c in environment_differences(run_dir, environment)]


def _code(environment: dict[str, Any]) -> tuple[str, str | None] | None:
    """What the code was: the tree of the package's sources at the commit, and the digest of
    their uncommitted changes (committing results or docs changes neither)."""
    source = environment.get("source")
    if not isinstance(source, dict) or not source.get("code_tree"):
        return None
    return source["code_tree"], source.get("uncommitted_code_sha256")


def _code_change(old: dict[str, Any], now: dict[str, Any]) -> str:
    def said(source: dict[str, Any]) -> str:
        edits = " with uncommitted changes" if source.get("uncommitted_code_sha256") else ""
        return f"commit {str(source.get('git_commit'))[:12]}{edits}"

    return f"the code is at {said(now['source'])} (the run started at {said(old['source'])})"


def source_revision(code_dir: Path | None = None) -> dict[str, Any]:
    """The commit of the checkout this package runs from; the tree of its source folder
    (``code_dir``: ``src/``) there, which only a change to the code changes; and whether
    that folder had uncommitted changes to tracked files, with their digest. An installed
    package (no checkout) says so instead of a commit, and so does a machine without git."""
    code_dir = code_dir or Path(__file__).resolve().parents[2]  # src/searchain/eval/ → src
    try:
        inside = _git(code_dir, "rev-parse", "--is-inside-work-tree") == "true"
    except (OSError, subprocess.SubprocessError):
        inside = False
    if not inside:
        return {"git_commit": None, "why": "not run from a git checkout"}
    try:
        commit = _git(code_dir, "rev-parse", "HEAD")
        tree = _git(code_dir, "rev-parse", "HEAD:./")  # the folder's tree at the commit
        diff = _git(code_dir, "diff", "HEAD", "--", ".")
    except (OSError, subprocess.SubprocessError) as e:
        return {"git_commit": None, "why": f"git could not say: {type(e).__name__}"}
    source: dict[str, Any] = {"git_commit": commit, "code_tree": tree}
    source["uncommitted_code"] = bool(diff)
    if diff:
        source["uncommitted_code_sha256"] = hashlib.sha256(diff.encode()).hexdigest()
    return source


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.strip()
