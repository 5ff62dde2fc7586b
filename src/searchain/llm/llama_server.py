"""A real ``llama_cpp.server`` on 127.0.0.1, started for as long as a block runs: the model
host the OpenAI-compatible backend is measured and tested against (``python -m
bench.eval_throughput``, the tests of :mod:`searchain.llm.openai_backend`)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from searchain.llm.local import default_model_path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_server(
    n_ctx: int = 2048,
    alias: str = "gemma-3-270m",
    n_threads: int = 2,
    model: Path | None = None,
) -> Iterator[str]:
    """Start ``python -m llama_cpp.server`` on 127.0.0.1 with the embedded model (or the GGUF
    ``model``: chat models are served with their own chat template); yield the base URL
    (``http://127.0.0.1:PORT/v1``) and stop it afterwards."""
    port = free_port()
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"llama-server-{port}.log"
    cmd = [
        *(sys.executable, "-m", "llama_cpp.server"),
        *("--model", str(model or default_model_path())),
        *("--model_alias", alias),
        *("--host", "127.0.0.1"),
        *("--port", str(port)),
        *("--n_ctx", str(n_ctx)),
        *("--n_threads", str(n_threads)),
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        wait_ready(proc, base, log)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_ready(proc: subprocess.Popen[bytes], base: str, log: Path, limit_s: float = 120) -> None:
    """Return once the server at ``base`` lists its models; RuntimeError (with the log's
    tail) when it exits first or does not answer within ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"llama_cpp.server did not come up in {limit_s:.0f} s")
        time.sleep(0.3)
