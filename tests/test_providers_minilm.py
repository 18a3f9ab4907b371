"""The offline embedder (all-MiniLM-L6-v2 from its PyPI package): precision choice and vector agreement."""

from __future__ import annotations

import time

import numpy as np
import pytest

from memory.providers.minilm import MiniLMEmbedder, cpu_has_bf16

TEXTS = [
    "The hotel booking in Kyoto failed because the rooms were sold out for 12 to 14 October.",
    "Kyoto hotel reservation could not be made: no rooms left on those dates.",
    "Run the unit tests with pytest before merging the pull request.",
    "用户对花生过敏，订餐时不要选含坚果的菜。",
]


def test_bf16_is_chosen_only_when_the_cpu_has_bfloat16_instructions(tmp_path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f amx_bf16 amx_tile\n")
    assert cpu_has_bf16(cpuinfo)
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f\n")
    assert not cpu_has_bf16(cpuinfo)
    assert not cpu_has_bf16(tmp_path / "missing")
    assert MiniLMEmbedder(precision="fp32").precision == "fp32"
    assert MiniLMEmbedder(precision="auto").precision == ("bf16" if cpu_has_bf16() else "fp32")


def test_an_unknown_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="precision must be one of auto, bf16, fp32"):
        MiniLMEmbedder(precision="int8")


def test_bf16_vectors_agree_with_fp32_ones_and_keep_their_meaning() -> None:
    vectors = {p: np.asarray(MiniLMEmbedder(precision=p, cache_size=0).embed(TEXTS)) for p in ("fp32", "bf16")}
    for found in vectors.values():
        assert found.shape == (len(TEXTS), 384)
        assert np.allclose(np.linalg.norm(found, axis=1), 1.0, atol=1e-5)
        similarity = found @ found.T
        assert similarity[0, 1] > similarity[0, 2] + 0.3  # the paraphrase is far closer than the unrelated text
    agreement = (vectors["fp32"] * vectors["bf16"]).sum(axis=1)
    assert agreement.min() > 0.999, agreement


def test_the_model_leaves_the_cpu_alone_between_calls() -> None:
    """OpenMP's threads stop spinning soon after a call (settings: GOMP_SPINCOUNT), so the statements a
    recall runs right after embedding its query get the CPU. Spinning, ten calls left ~0.06 s of busy
    waiting in the sleeps after them."""
    embedder = MiniLMEmbedder(cache_size=0)
    embedder.embed_one("warm up the model")
    busy = 0.0
    for n in range(10):
        embedder.embed_one(f"{TEXTS[0]} ({n})")
        before = time.process_time()
        time.sleep(0.02)
        busy += time.process_time() - before
    assert busy < 0.03, f"{busy:.3f} s of CPU while idle after the calls"
