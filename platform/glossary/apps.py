from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GlossaryConfig(AppConfig):
    """The bilingual glossary's pages."""

    name = "glossary"
    verbose_name = _("Glossary")
