# The web and worker image of docker-compose.yml (the sandbox image is sandbox/image/).
#   docker-compose build                     python:3.11-slim and the package index
#   make stack-images (deploy/build.sh)      offline: BASE=graphdojo-base:bookworm, PIP_ARGS=--no-index
#                                            and the wheels it puts in deploy/wheelhouse
ARG BASE=python:3.11-slim

FROM ${BASE} AS install
ARG PIP_ARGS="--extra-index-url https://download.pytorch.org/whl/cpu"
# Dependencies only, so a change of code reuses this layer.
COPY pyproject.toml /src/
COPY deploy/wheelhouse /wheelhouse
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/python -c "import tomllib; print('\n'.join(tomllib.load(open('/src/pyproject.toml', 'rb'))['project']['dependencies']))" > /src/requirements.txt \
 && /opt/venv/bin/pip install --no-cache-dir -q $PIP_ARGS --find-links /wheelhouse -r /src/requirements.txt gunicorn==23.0.0 \
 && /opt/venv/bin/pip uninstall -y -q pip

FROM ${BASE}
COPY --from=install /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:/usr/local/bin:/usr/bin:/bin PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    PYTHONPATH=/app:/app/platform GRAPHDOJO_VAR_DIR=/var/lib/graphdojo LANG=C.UTF-8
WORKDIR /app
COPY manage.py ./
COPY grader grader
COPY sandbox sandbox
COPY platform platform
COPY exercises exercises
RUN DJANGO_SECRET_KEY=collectstatic-only-$(head -c 24 /dev/urandom | base64) \
    DJANGO_SETTINGS_MODULE=config.settings.production python manage.py collectstatic --noinput -v 0 \
 && chown -R nobody "$GRAPHDOJO_VAR_DIR"
USER nobody
