"""The web table: the browser app ``feudo serve`` serves at ``/`` (static files in ``static/``), a client of the
``feudo.v1`` services over Connect (docs/web.md)."""
