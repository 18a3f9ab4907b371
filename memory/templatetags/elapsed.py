"""`{{ when|elapsed }}`: Django's timesince, except that under a minute reads "under a minute", not "0 minutes"
(a live session's last activity is usually seconds ago)."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.timesince import timesince
from django.utils.translation import gettext

register = template.Library()


@register.filter
def elapsed(value: datetime | None) -> str:
    if not value:
        return ""
    if (timezone.now() - value).total_seconds() < 60:
        return gettext("under a minute")
    return timesince(value)
