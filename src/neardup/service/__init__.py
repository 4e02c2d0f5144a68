"""The HTTP service (FastAPI): install with ``pip install 'neardup[service]'``."""
