"""A typed Python client of the Advisor gRPC service.

    from feudo_ai.client import AdvisorClient
    with AdvisorClient("127.0.0.1:50051") as client:
        advice = client.suggest(state, seat=2, seconds=0.5)        # a feudo_ai.Advice, as feudo_ai.advise returns
        print(advice.plan, advice.alternatives[:3], advice.beliefs)
        client.render(state, seat=2, png=True).png                  # the board as seat 2 sees it (PNG bytes)

A position is an engine ``State``/``CoreState`` (projected to the seat's observation here: hidden cards never
leave this process), a :class:`feudo_ai.ObservedPosition`, a "feudo-state/1" JSON text (sent whole; the server
projects it) or a ``feudo.v1.Position`` message. Errors are :class:`AdvisorError` with the gRPC status code and
the server's message (which names the bad field). Several replicas: ``AdvisorClient("ipv4:127.0.0.1:5001,
127.0.0.1:5002", load_balancing="round_robin")``, or a DNS name resolving to them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Iterator

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from feudo.v1 import advisor_pb2 as apb
from feudo.v1 import advisor_pb2_grpc as apb_grpc
from feudo.v1 import game_pb2 as gpb

from feudo_ai.search import Advice
from feudo_ai.wire.convert import advice_from_proto, position_from, setup_from_game

__all__ = ["AdvisorClient", "AdvisorError", "AnalyzeUpdate", "Picture"]


class AdvisorError(Exception):
    """A call that failed: ``code`` is the ``grpc.StatusCode``, ``details`` the server's message."""

    def __init__(self, code: grpc.StatusCode, details: str):
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


@dataclass(frozen=True)
class Picture:
    """A RenderPosition answer: the SVG document, its size in pixels at scale 1, and the PNG when asked."""

    svg: str
    width: int
    height: int
    png: bytes | None = None


class AnalyzeUpdate:
    """One message of an Analyze stream: the advice so far, and whether it is the final one."""

    __slots__ = ("advice", "final", "update")

    def __init__(self, advice: Advice, final: bool, update: int):
        self.advice, self.final, self.update = advice, final, update

    def __repr__(self) -> str:
        return f"AnalyzeUpdate(update={self.update}, final={self.final}, best={self.advice.best_text!r})"


def _limits(iterations: int | None, seconds: float | None, threads: int | None, seed: int | None,
            algorithm: str | None) -> apb.Limits:
    limits = apb.Limits()
    if iterations is not None:
        limits.iterations = iterations
    if seconds is not None:
        limits.seconds = seconds
    if threads is not None:
        limits.threads = threads
    if seed is not None:
        limits.seed = seed & 0xFFFFFFFFFFFFFFFF
    if algorithm is not None:
        algorithms = {"ismcts": apb.ALGORITHM_ISMCTS, "pimc": apb.ALGORITHM_PIMC}
        if algorithm not in algorithms:
            raise ValueError(f"algorithm: expected ismcts or pimc, got {algorithm!r}")
        limits.algorithm = algorithms[algorithm]
    return limits


class AdvisorClient:
    """A connection to an Advisor (one gRPC channel; thread-safe, reuse it).

    :param address: ``host:port`` or any gRPC target (``dns:///advisor.internal:50051``, ``ipv4:a:p,b:p``).
    :param token: the API token, sent as ``authorization: Bearer <token>``.
    :param root_certificates: PEM bytes of the CA (or a self-signed certificate): TLS; ``tls=True`` alone uses
        the system's roots.
    :param timeout: default deadline of every call in seconds (a search's limit plus a margin when not given).
    :param load_balancing: a gRPC load-balancing policy name, e.g. ``"round_robin"``.
    :param max_message_bytes: largest message sent or received.
    """

    def __init__(self, address: str, *, token: str | None = None, root_certificates: bytes | None = None,
                 tls: bool = False, timeout: float | None = None, load_balancing: str | None = None,
                 max_message_bytes: int = 1 << 20, server_name: str | None = None):
        options: list[tuple[str, Any]] = [("grpc.max_receive_message_length", max_message_bytes),
                                          ("grpc.max_send_message_length", max_message_bytes)]
        if load_balancing:
            options.append(("grpc.service_config",
                            json.dumps({"loadBalancingConfig": [{load_balancing: {}}]})))
        if server_name:
            options.append(("grpc.ssl_target_name_override", server_name))
        if tls or root_certificates is not None:
            creds = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            self.channel = grpc.secure_channel(address, creds, options=options)
        else:
            self.channel = grpc.insecure_channel(address, options=options)
        self.address = address
        self.timeout = timeout
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self._stub = apb_grpc.AdvisorStub(self.channel)
        self._health = health_pb2_grpc.HealthStub(self.channel)

    # ------------------------------------------------------------------------------------------ plumbing
    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "AdvisorClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _timeout(self, timeout: float | None, seconds: float | None) -> float | None:
        if timeout is not None:
            return timeout
        if self.timeout is not None:
            return self.timeout
        if seconds is None or not math.isfinite(seconds) or not 0 < seconds <= 86_400:
            return None  # no time limit (or an absurd one, which the server rejects)
        return seconds + 5.0

    def _call(self, method: Any, request: Any, timeout: float | None) -> Any:
        try:
            return method(request, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise AdvisorError(e.code(), e.details() or "") from None

    # ------------------------------------------------------------------------------------------ methods
    def suggest(self, position: Any, seat: int, *, seconds: float | None = None, iterations: int | None = None,
                threads: int | None = None, seed: int | None = None, algorithm: str | None = None,
                timeout: float | None = None) -> Advice:
        """Advice for ``seat`` (see :func:`feudo_ai.advise`; ``stats.backend`` is "remote")."""
        request = apb.SuggestRequest(position=position_from(position, seat), seat=seat,
                                     limits=_limits(iterations, seconds, threads, seed, algorithm))
        response = self._call(self._stub.Suggest, request, self._timeout(timeout, seconds))
        return advice_from_proto(response.advice)

    def analyze(self, position: Any, seat: int, *, seconds: float | None = None, iterations: int | None = None,
                threads: int | None = None, seed: int | None = None, algorithm: str | None = None,
                interval: float | None = None, timeout: float | None = None) -> Iterator[AnalyzeUpdate]:
        """The updates of an Analyze stream, the final one last. Breaking out of the loop cancels the call."""
        request = apb.AnalyzeRequest(position=position_from(position, seat), seat=seat,
                                     limits=_limits(iterations, seconds, threads, seed, algorithm),
                                     interval_seconds=interval or 0.0)
        stream = self._stub.Analyze(request, timeout=self._timeout(timeout, seconds), metadata=self._metadata)
        try:
            for msg in stream:
                yield AnalyzeUpdate(advice_from_proto(msg.advice), msg.final, msg.update)
        except grpc.RpcError as e:
            raise AdvisorError(e.code(), e.details() or "") from None
        finally:
            stream.cancel()

    def legal_actions(self, position: Any, seat: int, *, timeout: float | None = None) -> list[tuple[int, str]]:
        """The seat's legal decisions as (action id, text); empty when it has nothing to decide."""
        request = apb.LegalActionsRequest(position=position_from(position, seat), seat=seat)
        response = self._call(self._stub.LegalActions, request, self._timeout(timeout, 10.0))
        return [(a.id, a.text) for a in response.actions]

    def render(self, position: Any, seat: int, *, png: bool = False, png_scale: float | None = None,
               public_view: bool = False, timeout: float | None = None) -> Picture:
        """A picture of the position as ``seat`` sees it (RenderPosition): SVG text, and PNG bytes with ``png``.
        ``public_view`` leaves the seat's own selection out too."""
        request = apb.RenderPositionRequest(position=position_from(position, seat), seat=seat,
                                            public_view=public_view, png=png, png_scale=png_scale or 0.0)
        response = self._call(self._stub.RenderPosition, request, self._timeout(timeout, 30.0))
        return Picture(response.svg, response.width, response.height, response.png if png else None)

    def describe_game(self, game: Any = None, *, players: int = 4, timeout: float | None = None
                      ) -> gpb.GameDescription:
        """The description of a game: an ``engine.Game``, a ``feudo.v1.GameSetup``, or the default with
        ``players``."""
        if game is None:
            setup = gpb.GameSetup(players=players)
        elif isinstance(game, gpb.GameSetup):
            setup = game
        else:
            setup = setup_from_game(game)
        response = self._call(self._stub.DescribeGame, apb.DescribeGameRequest(setup=setup),
                              self._timeout(timeout, 10.0))
        return response.game

    def health(self, service: str = "", *, timeout: float = 5.0) -> str:
        """The server's health status name: "SERVING", "NOT_SERVING", ..."""
        response = self._call(self._health.Check, health_pb2.HealthCheckRequest(service=service), timeout)
        return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)

    def wait_ready(self, timeout: float = 10.0) -> None:
        """Block until the channel is connected (:raises AdvisorError: UNAVAILABLE after ``timeout``)."""
        try:
            grpc.channel_ready_future(self.channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise AdvisorError(grpc.StatusCode.UNAVAILABLE, f"no Advisor at {self.address} after {timeout:g} s") \
                from None


def suggest(address: str, position: Any, seat: int, **kwargs: Any) -> Advice:
    """One-shot :meth:`AdvisorClient.suggest` (opens and closes a channel)."""
    with AdvisorClient(address) as client:
        return client.suggest(position, seat, **kwargs)

