"""Retrieval models below the corpus: embedding models, vector indexes and rank fusion.

* :mod:`worldforge.retrieval.embed`: text to vectors, through a sentence-transformers model folder (its query and
  document prompts) or any OpenAI-compatible ``/v1/embeddings`` endpoint (``vllm serve`` of an embedding model);
* :mod:`worldforge.retrieval.vectors`: a FAISS index of a corpus's page vectors, saved in a folder with the text
  hash of every vector, so that a rebuild embeds only the texts that changed;
* :mod:`worldforge.retrieval.fusion`: reciprocal-rank fusion of ranked lists (hybrid search);
* :mod:`worldforge.retrieval.tiny`: a tiny static embedding model built locally (tests, the demo, the benchmark).

The corpus's search (:func:`worldforge.corpus.search`) chooses among BM25, dense and hybrid retrieval over these.
"""
