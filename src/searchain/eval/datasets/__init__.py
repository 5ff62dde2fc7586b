"""Evaluation datasets: every benchmark file in ``../shared/data`` and the public formats users
bring, read into one record type, :class:`Example`.

Named datasets (``load_dataset("hotpotqa")``) map to the files of the data directory,
``$SEARCHAIN_DATA`` or else ``<repo>/../shared/data``:

=========================== ========================================================= ========
name                        file                                                      task
=========================== ========================================================= ========
hotpotqa                    hotpotqa/dev_subsampled.jsonl (IRCoT format)              multihop
musique                     musique/musique_train.json                                multihop
strategyqa                  strategyqa/strategyqa_dev.json                            yesno
fever                       fever/paper_dev.jsonl, SUPPORTS/REFUTES claims only       factcheck
fever-nei                   fever/paper_dev.jsonl, with NOT ENOUGH INFO               factcheck
nq                          nq/NQ-open.dev.jsonl                                      open
nq-efficientqa              nq/NQ-open.efficientqa.test.1.1.jsonl                     open
webq / webq-train           webq/webq-test.jsonl / webq-train.jsonl                   open
compositional-celebrities   compositional_celebrities/compositional_celebrities.json  multihop
eli5                        alce/eli5.json                                            longform
qampari                     alce/qampari.json                                         list
bamboogle                   bamboogle/test.csv                                        multihop
=========================== ========================================================= ========

``fever`` is the SearChain paper's setting (KILT's FEVER: SUPPORTS or REFUTES); its
fingerprint differs from the file's, so runs of the two item sets never mix.

Any other argument is a path; its format is detected from the extension and the fields of
the first record (or forced with ``fmt=``):

* ``ircot``       IRCoT processed multi-hop QA (HotpotQA / 2Wiki / MuSiQue): ``question_id,
  question_text, answers_objects[{spans}], contexts[{title, paragraph_text, is_supporting}]``
* ``hotpotqa``    HotpotQA original (distractor or fullwiki): ``_id, question, answer,
  supporting_facts[[title, sent]], context[[title, [sentences]]], type, level``
* ``2wikimultihopqa``  as HotpotQA plus ``evidences`` (and 2Wiki's ``type`` values)
* ``musique``     MuSiQue (JSON array or JSONL): ``id, question, answer, answer_aliases,
  answerable, question_decomposition, paragraphs[{idx, title, paragraph_text, is_supporting}]``
* ``strategyqa``  ``qid, question, answer (bool), facts, decomposition, term, description``
* ``fever``       ``id, claim, label, verifiable, evidence[[[ann, ev, title, sent]]]``
* ``webquestions`` WebQuestions original: ``utterance, targetValue "(list (description …))"``
* ``alce``        ALCE ASQA (``qa_pairs``, ``annotations``), QAMPARI (``answers`` as alias
  lists) and ELI5 (``claims``), with their retrieved ``docs`` kept in ``meta``
* ``compositional-celebrities``  ``{"data": [{Q1, A1, Q2, A2, Question, Answer, category}]}``
* ``qa``          any ``{id?, question, answers | answer, label?, task?}`` JSON/JSONL record:
  NQ-open (``question, answer[]``), EfficientQA, WebQuestions as used by LLM-URL
  (``id, question, answer[]``), TriviaQA (original ``{"Data": […]}`` with
  ``Question, Answer{Value, Aliases}``, or Hugging Face / DPR JSONL), plain ``{id, question,
  answers}`` files
* ``csv``         a header row with ``question`` and ``answer`` columns (Bamboogle)
* ``dpr-qas``     DPR's ``question<TAB>["answer", …]`` files (``nq-test.qa.csv``)

Files may be gzip-compressed. A malformed record raises :class:`DatasetError` (the corpus
readers' :class:`~searchain.retrieval.CorpusError`, a ``ValueError``) whose message starts
with ``<path>:<line>:``.

Ids are the dataset's own where it has them, else ``q`` + 16 hex digits of the SHA-256 of the
question; a repeated id gets ``~2``, ``~3``… so ids are unique and depend only on the file.
Gold passage ids agree with the ids the corpus readers give the same data: IRCoT files use
the pooled ``<title>#<n>`` ids of :func:`searchain.retrieval.read_hotpotqa_pool`, MuSiQue the
``<title>#<n>`` ids of its pooled corpus file (``musique_train_corpus.json`` read with
:func:`~searchain.retrieval.read_documents`), HotpotQA / 2Wiki originals the article title.
"""

from __future__ import annotations

from searchain.eval.datasets.base import FEVER_LABELS, TASKS, DatasetError, Example
from searchain.eval.datasets.detect import FORMATS, detect_dataset_format
from searchain.eval.datasets.named import (
    DATA_ENV,
    DATASETS,
    data_dir,
    dataset_fingerprint,
    dataset_path,
    load_dataset,
    subsample,
)

__all__ = [
    "DATASETS",
    "DATA_ENV",
    "FEVER_LABELS",
    "FORMATS",
    "TASKS",
    "DatasetError",
    "Example",
    "data_dir",
    "dataset_fingerprint",
    "dataset_path",
    "detect_dataset_format",
    "load_dataset",
    "subsample",
]
