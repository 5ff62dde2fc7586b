"""Folders of documents as a search index: Markdown, reStructuredText, HTML, PDF, Word, text,
CSV/Parquet tables. Every passage keeps its source (file, page, heading path, offsets).

>>> from searchain.retrieval.documents import index_documents
>>> index, report = index_documents(["docs/"], "my-index")  # doctest: +SKIP
>>> print(report.summary())  # doctest: +SKIP
"""

from searchain.retrieval.documents.build import (
    MANIFEST,
    DocumentIndexError,
    IndexReport,
    Progress,
    ReadOptions,
    index_documents,
    read_document_passages,
)
from searchain.retrieval.documents.files import KINDS

__all__ = [
    "KINDS",
    "MANIFEST",
    "DocumentIndexError",
    "IndexReport",
    "Progress",
    "ReadOptions",
    "index_documents",
    "read_document_passages",
]
