"""The wire room: everything between the ``feudo.v1`` protocol (``proto/feudo/v1/``) and the Python below it.

- :mod:`.plumbing`: what both services are served with: the call's clock from its arrival, its one log line and
  metrics, the API token, domain errors -> status codes (interceptors);
- :mod:`.advisor`: the ``feudo.v1.Advisor`` servicer (DescribeGame, Suggest, Analyze, LegalActions, RenderPosition)
  and its caps (:class:`~.advisor.ServiceConfig`); :mod:`.render`: RenderPosition's picture;
- :mod:`.matches`: the ``feudo.v1.Matches`` servicer over the gRPC-free :mod:`feudo_ai.matches` domain;
- :mod:`.convert`: wire messages <-> engine positions, advice and match setups;
- :mod:`.server`: the server hosting both services as peers, with health, reflection, TLS, token, metrics;
- :mod:`.cli`: ``feudo serve`` / ``server.py`` (flags, logging, signals) and ``feudo advise``.

Imports go one way: the wire imports the matches domain, the search and the engine; nothing there imports the
wire. The typed clients are :class:`feudo_ai.client.AdvisorClient` and :class:`feudo_ai.matches.client.MatchesClient`.
"""
