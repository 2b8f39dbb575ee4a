import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
application = get_wsgi_application()
# Everything loaded so far lives as long as the process: keep it out of the collector's full
# passes. A page that builds thousands of small objects (the 500-student gradebook) starts a
# full pass every few requests, and one over Django's own ~130 000 objects took ~100 ms.
gc.freeze()
