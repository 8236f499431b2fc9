"""A Python client of the ``feudo.v1.Matches`` service.

    from feudo_ai.matches.client import MatchesClient
    with MatchesClient("127.0.0.1:50051") as client:
        match_id, tokens = client.create_match(players=4, seats=["external", "ismcts:seconds=1", "greedy", "pimc"],
                                               seed=7)
        obs = client.observation(match_id, 0, tokens[0])           # GetObservationResponse
        client.submit(match_id, 0, tokens[0], obs.legal_actions[0].id, obs.action_count)
        for event in client.watch(match_id, 0, tokens[0]):          # MatchEvent, until the match ends
            print(event.text)

Errors are :class:`MatchesError` with the gRPC status code and the server's message (which names the field).
:meth:`MatchesClient.submit` retries a call whose answer was lost (UNAVAILABLE, DEADLINE_EXCEEDED) with the same
``expected_action_count``: the server applies an action once, however often it is sent.
"""

from __future__ import annotations

import time
from typing import Any, Iterator, Sequence

import grpc

from feudo.v1 import matches_pb2 as mpb
from feudo.v1 import matches_pb2_grpc as mpb_grpc

from .spec import EXTERNAL

__all__ = ["MatchesClient", "MatchesError"]

_RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class MatchesError(Exception):
    """A call that failed: ``code`` is the ``grpc.StatusCode``, ``details`` the server's message."""

    def __init__(self, code: grpc.StatusCode, details: str):
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


def _error(e: grpc.RpcError) -> MatchesError:
    return MatchesError(e.code(), e.details() or "")


class MatchesClient:
    """Calls of the Matches service on one channel. ``api_token``: the server's API token, when it needs one
    (sent as ``authorization: Bearer``); seat tokens go in the calls themselves."""

    def __init__(self, address: str, api_token: str | None = None, credentials: grpc.ChannelCredentials | None = None,
                 timeout: float = 30.0):
        self.channel = (grpc.secure_channel(address, credentials) if credentials is not None
                        else grpc.insecure_channel(address))
        self.stub = mpb_grpc.MatchesStub(self.channel)
        self.timeout = timeout
        self._metadata = [("authorization", f"Bearer {api_token}")] if api_token else None

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "MatchesClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _call(self, method: Any, request: Any) -> Any:
        try:
            return method(request, timeout=self.timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise _error(e) from None

    # -- calls ---------------------------------------------------------------------------------------------
    def create_match(self, players: int, seats: Sequence[str], seed: int = 0, turns: int | None = None,
                     virulent_plague: bool = False, strategy_only: bool = False,
                     board_order: Sequence[int] | None = None, map_seed: int | None = None,
                     castles: Sequence[int] | None = None) -> tuple[str, dict[int, str]]:
        """A new match: its id and the token of each external seat (``"external"`` in ``seats``)."""
        req = mpb.CreateMatchRequest(seed=seed)
        req.setup.players = players
        req.setup.options.virulent_plague = virulent_plague
        req.setup.options.strategy_only = strategy_only
        if turns is not None:
            req.setup.options.turns = turns
        if board_order is not None:
            req.setup.board_order.boards.extend(board_order)
        elif map_seed is not None:
            req.setup.map_seed = map_seed
        else:
            req.setup.map_seed = seed  # the board order drawn from the match seed, as `feudo selfplay` does
        for s in seats:
            req.seats.append(mpb.SeatSpec(external=True) if s == EXTERNAL else mpb.SeatSpec(bot=s))
        if castles:
            req.castle_sites.extend(castles)
        resp = self._call(self.stub.CreateMatch, req)
        return resp.match_id, {t.seat: t.token for t in resp.tokens}

    def observation(self, match_id: str, seat: int, token: str) -> mpb.GetObservationResponse:
        return self._call(self.stub.GetObservation, mpb.GetObservationRequest(match_id=match_id, seat=seat, token=token))

    def submit(self, match_id: str, seat: int, token: str, action: int, expected_action_count: int,
               retries: int = 3) -> mpb.SubmitActionResponse:
        req = mpb.SubmitActionRequest(match_id=match_id, seat=seat, token=token, action=action,
                                      expected_action_count=expected_action_count)
        for attempt in range(retries + 1):
            try:
                return self.stub.SubmitAction(req, timeout=self.timeout, metadata=self._metadata)
            except grpc.RpcError as e:
                if e.code() not in _RETRYABLE or attempt == retries:
                    raise _error(e) from None
                time.sleep(0.2 * (attempt + 1))  # the same request again: applied at most once (idempotent)
        raise AssertionError("unreachable")

    def watch(self, match_id: str, seat: int | None = None, token: str = "",
              from_action_count: int = 0) -> Iterator[mpb.MatchEvent]:
        """The match's events from ``from_action_count`` on (``seat=None``: as a spectator), until it ends."""
        req = mpb.WatchMatchRequest(match_id=match_id, token=token, from_action_count=from_action_count)
        if seat is not None:
            req.seat = seat
        call = self.stub.WatchMatch(req, metadata=self._metadata)
        try:
            for event in call:
                yield event
        except grpc.RpcError as e:
            raise _error(e) from None
        finally:
            call.cancel()  # a caller that stops early frees the server's stream at once

    def list_matches(self) -> list[mpb.MatchSummary]:
        return list(self._call(self.stub.ListMatches, mpb.ListMatchesRequest()).matches)

    def record(self, match_id: str) -> mpb.GetRecordResponse:
        return self._call(self.stub.GetRecord, mpb.GetRecordRequest(match_id=match_id))

    def replay(self, action_count: int, seat: int | None = None, match_id: str | None = None,
               record_json: str | None = None) -> mpb.ReplayRecordResponse:
        """A finished match's record (``match_id``) or a "feudo-game/1" text (``record_json``) at ``action_count``,
        as ``seat`` saw it (``None``: the public view)."""
        req = mpb.ReplayRecordRequest(action_count=action_count, seat=seat)
        if match_id is not None:
            req.match_id = match_id
        if record_json is not None:
            req.record_json = record_json
        return self._call(self.stub.ReplayRecord, req)
