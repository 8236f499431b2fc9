"""The Advisor gRPC service (``feudo.v1.Advisor``, protocol in ``proto/feudo/v1/``).

- :mod:`.advisor`: the servicer (DescribeGame, Suggest, Analyze, LegalActions) and its caps (:class:`ServiceConfig`);
- :mod:`.server`: the gRPC server with health, reflection, TLS, token, metrics; ``feudo serve`` / ``server.py``;
- :mod:`.convert`: wire messages <-> engine positions and advice.

The typed client is :class:`feudo_ai.client.AdvisorClient`.
"""
