"""The home page's "since last activity": a session active seconds ago reads "under a minute", not "0 minutes"."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone, translation

from memory.templatetags.elapsed import elapsed


def test_seconds_ago_reads_under_a_minute_and_longer_reads_as_timesince() -> None:
    now = timezone.now()
    assert elapsed(now - timedelta(seconds=10)) == "under a minute"
    assert elapsed(now - timedelta(minutes=5, seconds=5)) == "5\xa0minutes"
    assert elapsed(None) == ""
    with translation.override("zh-hans"):
        assert elapsed(now - timedelta(seconds=10)) == "不到一分钟"
