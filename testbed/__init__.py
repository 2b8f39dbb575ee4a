"""What the tests and the benchmarks share to stand a grading site up: real processes (a Redis,
Celery workers, proxies to cut, simulated hosts: network namespaces and CPU slices), a grading
site made of them (site.py, once Django is set up), an HTTP client for a live server, and tiny
exercises on disk.
Never imported by the site: the benchmarks must not reach into tests/, so these live here."""
