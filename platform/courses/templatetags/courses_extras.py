from django import template

register = template.Library()


@register.filter
def dict_get(mapping: dict, key):
    """``{{ scores|dict_get:item.id }}``: templates cannot index a dict by a variable."""
    return mapping.get(key) if mapping else None
