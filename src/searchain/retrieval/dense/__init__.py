"""Dense retrieval: embeddings (the packaged GGUF run by llama.cpp, or a sentence-transformers
model) searched with faiss.

An index directory holds

* ``passages.jsonl`` + offsets: the passage store shared with :class:`BM25Index`;
* ``embeddings.f32``: one unit-length float32 row per passage, read as an ``np.memmap``;
* ``faiss.index`` for the ``ivf`` / ``hnsw`` / factory index types (``flat`` searches the
  memmapped embeddings directly, so the vectors are not stored twice);
* ``metadata.json``: model, dimension, index type and the corpus fingerprint.

Building is resumable. Work happens in ``.<name>.partial`` next to ``out_dir``, which
survives a crash or a kill: passages are encoded in chunks of ``checkpoint_rows``, each
chunk's vectors are written straight to ``embeddings.f32`` and its content digest is
appended to ``progress.json``. Re-running the same build re-reads the corpus (cheap),
skips every chunk whose digest matches and encodes the rest; the finished directory is
then renamed into place, so ``out_dir`` only ever holds a complete index. Because chunks
are matched by content, a corpus that changed (or grew) since the interruption re-encodes
only the chunks from the first difference on.

Threads: the query encoder is the process-wide embedder (``readers.embedders``), which runs
one thread, because it shares the cores with the answering model. Corpus encoding is a batch
job (normally its own CLI step), so :meth:`DenseIndex.build` raises the embedder to
``encode_threads`` (default: all usable cores) for the duration of the build and restores it
afterwards; pass ``encode_threads=1`` when building inside a process that is generating at
the same time.
"""

from __future__ import annotations

from searchain.retrieval.dense.index import DenseIndex
from searchain.retrieval.dense.vectors import DENSE_FORMAT_VERSION, INDEX_TYPES

__all__ = ["DENSE_FORMAT_VERSION", "INDEX_TYPES", "DenseIndex"]
