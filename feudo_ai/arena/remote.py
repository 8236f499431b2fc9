"""The ``remote`` entrant: a bot whose every decision is asked of an Advisor service over gRPC.

    remote:address=127.0.0.1:50051:seconds=0.5            # host:port, then the search limits
    remote:address=advisor.internal:50051:iterations=2000:algorithm=pimc

The address holds a ``:`` itself, so a remote spec is parsed here (a parameter without ``=`` right after
``address=...`` is its port). Parameters: ``address`` (required), ``seconds``, ``iterations``, ``threads``,
``algorithm`` (``ismcts`` or ``pimc``), ``timeout`` (seconds a call may take; default the limit plus 5 s).
Positions go through :class:`feudo_ai.client.AdvisorClient`, which sends the seat's observation only (R22).
Each decision's search seed is drawn from the bot's seed, as the local search bots do, so with an iteration
budget a remote entrant plays the same games as the same search run locally.
"""

from __future__ import annotations

from typing import Any

from feudo_ai.bots import Bot
from feudo_ai.bots.registry import parse_value

PARAMS = ("address", "seconds", "iterations", "threads", "algorithm", "timeout")


def is_remote(spec: str) -> bool:
    return str(spec).replace(";", ":").split(":", 1)[0].strip() == "remote"


def parse_remote_spec(spec: str) -> dict[str, Any]:
    """``"remote:address=h:50051:seconds=0.5"`` -> {"address": "h:50051", "seconds": 0.5}; ValueError naming
    the bad part otherwise."""
    items = [x.strip() for x in str(spec).replace(";", ":").split(":")[1:]]
    params: dict[str, Any] = {}
    last = None
    for item in items:
        if not item:
            continue
        if "=" not in item:
            if last == "address":  # the port (or the rest of a target) of the address
                params["address"] += ":" + item
                continue
            raise ValueError(f"expected key=value parameters, got {item!r}")
        key, value = (x.strip() for x in item.split("=", 1))
        if key not in PARAMS:
            raise ValueError(f"unknown remote parameter {key!r}; known: {', '.join(PARAMS)}")
        params[key] = value if key == "address" else parse_value(value)
        last = key
    address = params.get("address")
    if not address or ":" not in address:
        raise ValueError("address: expected host:port, e.g. remote:address=127.0.0.1:50051:seconds=0.5")
    for key in ("seconds", "timeout"):
        v = params.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0):
            raise ValueError(f"{key}: expected a positive number, got {v!r}")
    for key in ("iterations", "threads"):
        v = params.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError(f"{key}: expected a positive integer, got {v!r}")
    if params.get("algorithm") not in (None, "ismcts", "pimc"):
        raise ValueError(f"algorithm: expected ismcts or pimc, got {params['algorithm']!r}")
    return params


class RemoteBot(Bot):
    """Plays the Advisor's best action for each decision (``AdvisorClient.suggest``)."""

    name = "remote"

    def __init__(self, seed: int = 0, *, address: str, seconds: float | None = None, iterations: int | None = None,
                 threads: int | None = None, algorithm: str | None = None, timeout: float | None = None):
        super().__init__(seed)
        try:
            # grpc and the generated feudo.v1 stubs: only a remote entrant needs them (a checkout may lack the stubs)
            from ..client import AdvisorClient, AdvisorError
        except ImportError as e:
            raise ValueError(f"the Advisor client is not available ({e})") from None
        self._advisor_error = AdvisorError
        self.address = address
        self.limits = {"seconds": seconds, "iterations": iterations, "threads": threads, "algorithm": algorithm}
        self.timeout = timeout
        self._client = AdvisorClient(address, timeout=timeout)

    def check(self, timeout: float = 5.0) -> None:
        """Reach the service before any game: OSError naming the address when it cannot be reached."""
        try:
            self._client.wait_ready(timeout=timeout)
            status = self._client.health(timeout=timeout)
        except self._advisor_error as e:
            raise OSError(f"Advisor at {self.address} unreachable ({e.details})") from None
        if status != "SERVING":
            raise OSError(f"Advisor at {self.address} is {status}, not SERVING")

    def choose(self, state) -> int:
        seat = state.current_player()
        try:
            advice = self._client.suggest(state, seat, seed=self.rng.getrandbits(31), **self.limits)
        except self._advisor_error as e:
            raise RuntimeError(f"remote bot at {self.address}: {e}") from None
        if advice.best not in state.legal_actions():  # never trust a reply with an illegal action
            raise RuntimeError(f"remote bot at {self.address}: illegal action {advice.best} advised")
        return advice.best

    def close(self) -> None:
        self._client.close()


def make_remote(spec: str, seed: int) -> RemoteBot:
    bot = RemoteBot(seed, **parse_remote_spec(spec))
    bot.name = str(spec)
    return bot
