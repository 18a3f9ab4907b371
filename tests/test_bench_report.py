"""The benchmark report keeps what was written by hand in a section it writes anew from stored numbers."""

from __future__ import annotations

from bench.run_all import NOTES_END, NOTES_START, _report_sections, hand_written

REPORT = f"""# Benchmarks

## Recall latency at scale (one project, up to 100,000 memories)

| memories | p95 |
|---|---|
| 100,000 | 27.34 |

{NOTES_START}
A/B of two commits, alternately, twice each: 19.67 / 26.80 against 16.85 / 23.10.

{NOTES_END}
Generated text after the block.

## Hard forget at scale

{NOTES_START}
Another section's note.
{NOTES_END}
"""


def test_a_sections_hand_written_block_is_found_and_kept_whole():
    sections = _report_sections(REPORT)
    kept = hand_written(sections["recall"])
    assert kept == [NOTES_START, "A/B of two commits, alternately, twice each: 19.67 / 26.80 against 16.85 / 23.10.",
                    "", NOTES_END, ""]
    assert "Generated text after the block." not in kept and "Another section's note." not in kept
    assert hand_written(sections["forget"])[1] == "Another section's note."
    assert hand_written(["## Offline embedders", "", "| a | b |"]) == []
