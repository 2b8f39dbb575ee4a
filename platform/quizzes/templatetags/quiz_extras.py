from datetime import datetime

from django import template

register = template.Library()


@register.filter
def epoch_ms(value: datetime) -> int:
    """A datetime as milliseconds since the epoch, for the countdown script."""
    return int(value.timestamp() * 1000)
