"""A developer's machine: `make run`. Embedded defaults; debug pages only with DJANGO_DEBUG=true,
so a 404 shows the site's own page, not the URL list."""
from config.env import env_bool, env_str
from config.settings.base import *  # noqa: F403

DEBUG = env_bool("DJANGO_DEBUG", False)
# Fine for a laptop, refused by production.py.
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "graphdojo-local-development-key-not-for-production")
