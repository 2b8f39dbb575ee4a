"""A developer's machine: `make run`. Embedded defaults, debug on."""
from config.env import env_bool, env_str
from config.settings.base import *  # noqa: F403

DEBUG = env_bool("DJANGO_DEBUG", True)
# Fine for a laptop, refused by production.py.
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "graphdojo-local-development-key-not-for-production")
