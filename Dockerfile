# The web and worker image of docker-compose.yml (the sandbox image is sandbox/image/).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PYTHONPATH=/app/platform
WORKDIR /app
COPY pyproject.toml README.md ./
COPY grader grader
COPY sandbox sandbox
RUN pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu . gunicorn==23.0.0
COPY . .
RUN DJANGO_SECRET_KEY=collectstatic-only-$(head -c 24 /dev/urandom | base64) \
    DJANGO_SETTINGS_MODULE=config.settings.production python manage.py collectstatic --noinput
USER nobody
