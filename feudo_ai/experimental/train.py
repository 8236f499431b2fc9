"""``feudo train``: self-play games, then the learned evaluation (:mod:`feudo_ai.value`) fitted to their outcomes.

1. **Games** (:func:`generate`): ``games`` self-play games, game i with ``players[i % len(players)]`` players and
   seed ``derive(seed, i)`` (map board order, chance, the bots' seeds), each seat's bot drawn from ``bots`` by the
   game's own generator. Games run in parallel over processes (``jobs``) and every game is a pure function of
   its index and the seed, so the data (and the weights) do not depend on ``jobs``.
2. **Positions**: at the start of every turn (where the search's default truncated playout stops and evaluates:
   the end of a turn), the features of every seat's view (public facts only, R22; the C features, the same as
   :func:`feudo_ai.value.features`), labelled with the game's final R19 returns (1 sole win, 1/k shared).
3. **Fit** (:func:`fit`): per player count, a conditional logit ``softmax_p(w . f_p)`` over the seats in play,
   minimising the cross-entropy to the returns plus an L2 penalty on the standardised weights, by Newton's method
   (deterministic: same data, same weights). Every ``holdout``-th round of games (a round: one game of each
   entry of ``players``) is held out and its positions give the
   validation loss, reported next to the hand-made evaluation's and the uniform guess's on the same positions.
4. **File**: the weights (raw feature units) with format version, feature names, training seed, data size and
   losses (:meth:`feudo_ai.value.ValueModel.to_dict`), as JSON; same seed and options: the same bytes (the date
   is ``SOURCE_DATE_EPOCH``'s when set).

``model="mlp"`` (:func:`train_mlp`): the same games and positions, a one-hidden-layer network per player count
(:func:`fit_mlp`: full-batch Adam, early stopping on the held-out games), fitted by expert iteration over
``rounds`` rounds of ``games`` games each (round k's bots evaluate with the model fitted after round k - 1; every
fit uses the games of all rounds so far). Its file records each round's bots, games, positions, seconds and
held-out losses (against a linear fit of the same games, the hand-made evaluation and the uniform guess); the
wall times are left out when ``SOURCE_DATE_EPOCH`` is set, so that the same seed and options give the same bytes.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import multiprocessing
import os
import random
import re
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
import numpy as np

from .value import KINDS, MAX_HIDDEN, NUM_FEATURES, PLAYER_COUNTS, MLPLayer, ValueModel, model_from_dict

__all__ = ["TrainConfig", "game_seed", "play_one", "generate", "cross_entropy", "fit", "fit_mlp", "train",
           "train_mlp", "command_line", "dumps", "cmd_train", "add_parser"]

DEFAULT_BOTS = "ismcts:iterations=100"
# --model mlp: the product's search at a realistic budget, with truncated playouts (one more turn, as in 3 and 4
# players) so that from round 1 on the bot's leaves are scored by the model being trained (in 2 players the
# product's own playouts go to the end of the game and never read an evaluation)
DEFAULT_MLP_BOTS = "ismcts:iterations=2000:playout_turns=1"
MAX_GAMES = 1_000_000
MAX_ROUNDS = 20
MAX_STEPS = 100_000


@dataclass(frozen=True)
class TrainConfig:
    """What ``feudo train`` does (validated: :raises ValueError: naming the bad field)."""

    games: int = 600  # self-play games in all
    players: tuple[int, ...] = (2, 2, 3, 4)  # player counts, cycled over the games (half the games: 2 players)
    bots: tuple[str, ...] = (DEFAULT_BOTS,)  # bot specs; each seat of a game draws one
    seed: int = 1  # every random choice (games, bots, chance) flows from it
    jobs: int = 1  # processes playing the games
    holdout: int = 5  # every holdout-th round of games (one game per entry of players) is held out (0: none)
    l2: float = 1.0  # L2 penalty on the standardised weights (per player count, in units of positions)
    date: str | None = None  # recorded in the file; None: SOURCE_DATE_EPOCH's date, else today (UTC)
    model: str = "linear"  # "linear" (Newton's method) or "mlp" (Adam, expert iteration over ``rounds``)
    # mlp only:
    rounds: int = 1  # expert iteration: round k's games are played by ``bots`` with the model of round k
    hidden: int = 32  # tanh units per player count
    lr: float = 0.01  # Adam's step size
    steps: int = 3000  # the most full-batch Adam steps of one fit
    patience: int = 300  # early stopping: steps without a better held-out loss before the fit stops

    def __post_init__(self) -> None:
        if not isinstance(self.games, int) or not 1 <= self.games <= MAX_GAMES:
            raise ValueError(f"games: expected an integer in [1, {MAX_GAMES}], got {self.games!r}")
        if not self.players or any(p not in PLAYER_COUNTS for p in self.players):
            raise ValueError(f"players: expected player counts among {PLAYER_COUNTS}, got {self.players!r}")
        if not self.bots:
            raise ValueError("bots: expected at least one bot spec")
        if not isinstance(self.seed, int) or not 0 <= self.seed < 2**63:
            raise ValueError(f"seed: expected an integer in [0, 2^63), got {self.seed!r}")
        if not isinstance(self.jobs, int) or not 1 <= self.jobs <= 256:
            raise ValueError(f"jobs: expected an integer in [1, 256], got {self.jobs!r}")
        if not isinstance(self.holdout, int) or not (self.holdout == 0 or 2 <= self.holdout <= MAX_GAMES):
            raise ValueError(f"holdout: expected 0 or an integer >= 2, got {self.holdout!r}")
        if not isinstance(self.l2, (int, float)) or not 0 <= self.l2 < 1e9:
            raise ValueError(f"l2: expected a number in [0, 1e9), got {self.l2!r}")
        if self.model not in KINDS:
            raise ValueError(f"model: expected one of {', '.join(KINDS)}, got {self.model!r}")
        if not isinstance(self.rounds, int) or not 1 <= self.rounds <= MAX_ROUNDS:
            raise ValueError(f"rounds: expected an integer in [1, {MAX_ROUNDS}], got {self.rounds!r}")
        if self.model == "linear" and self.rounds != 1:
            raise ValueError("rounds: expert iteration (rounds > 1) is for --model mlp only")
        if not isinstance(self.hidden, int) or not 1 <= self.hidden <= MAX_HIDDEN:
            raise ValueError(f"hidden: expected an integer in [1, {MAX_HIDDEN}], got {self.hidden!r}")
        if not isinstance(self.lr, (int, float)) or not 0 < self.lr <= 1:
            raise ValueError(f"lr: expected a number in (0, 1], got {self.lr!r}")
        if not isinstance(self.steps, int) or not 1 <= self.steps <= MAX_STEPS:
            raise ValueError(f"steps: expected an integer in [1, {MAX_STEPS}], got {self.steps!r}")
        if not isinstance(self.patience, int) or not 1 <= self.patience <= MAX_STEPS:
            raise ValueError(f"patience: expected an integer in [1, {MAX_STEPS}], got {self.patience!r}")
        if self.rounds > 1 and any(":evaluation=" in b for b in self.bots):
            raise ValueError("bots: expert iteration sets each bot's evaluation itself; give the bots without one")
        from feudo_ai.bots import make_bot

        for spec in self.bots:
            make_bot(spec, 0)  # an unknown bot or a bad parameter fails here, before any game


def game_seed(seed: int, i: int) -> int:
    """The seed of game i: a 63-bit value from numpy's SeedSequence of (seed, i)."""
    return int(np.random.SeedSequence([seed, i]).generate_state(2, dtype=np.uint64)[0] >> np.uint64(1))


def play_one(args: tuple[int, int, int, tuple[str, ...]]) -> dict:
    """Game ``i``: its positions (features, seats in play, the hand-made rewards) and its returns."""
    i, seed, players, bots = args
    from engine import load_map, new_fast_game, sample_chance

    from feudo_ai import _feudo_game
    from feudo_ai.bots import make_bot

    gs = game_seed(seed, i)
    rng = random.Random(gs)
    state = new_fast_game(players=players, seed=gs, game_map=load_map(None, seed=gs), backend="core")
    specs = [bots[rng.randrange(len(bots))] for _ in range(players)]
    seats = [make_bot(spec, rng.randrange(2**62)) for spec in specs]
    feats, masks, hand = [], [], []
    turn = state.turn
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
        else:
            state.apply_action(seats[state.current_player()](state))
        if state.turn != turn and not state.is_terminal():
            turn = state.turn
            feats.append(_feudo_game.learned_features(state))
            masks.append([not state.tiebreak or bool(state.active[p]) for p in range(players)])
            hand.append(_feudo_game.evaluate_state(state)[1])
    return {"i": i, "players": players, "bots": specs, "X": np.array(feats, dtype=np.float64).reshape(-1, players,
                                                                                                       NUM_FEATURES),
            "mask": np.array(masks, dtype=bool).reshape(-1, players), "hand": np.array(hand).reshape(-1, players),
            "returns": np.array(state.returns(), dtype=np.float64)}


def generate(cfg: TrainConfig, progress=None, first: int = 0, bots: tuple[str, ...] | None = None) -> list[dict]:
    """Play the games of ``cfg`` (in order of index, whatever ``jobs``): indices ``first`` .. ``first + games - 1``
    (expert iteration's round k starts at k x games), with ``bots`` (default ``cfg.bots``)."""
    bots = cfg.bots if bots is None else bots
    tasks = [(first + i, cfg.seed, cfg.players[i % len(cfg.players)], bots) for i in range(cfg.games)]
    out: list[dict] = []
    if cfg.jobs == 1:
        for t in tasks:
            out.append(play_one(t))
            if progress:
                progress(len(out), cfg.games)
        return out
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that may hold search threads
    with ProcessPoolExecutor(cfg.jobs, mp_context=ctx) as pool:
        for r in pool.map(play_one, tasks, chunksize=4):
            out.append(r)
            if progress:
                progress(len(out), cfg.games)
    return out


def _stack(games: list[dict], n: int):
    gs = [g for g in games if g["players"] == n and len(g["X"])]
    if not gs:
        return None
    X = np.concatenate([g["X"] for g in gs])
    M = np.concatenate([g["mask"] for g in gs])
    H = np.concatenate([g["hand"] for g in gs])
    Y = np.concatenate([np.repeat(g["returns"][None, :], len(g["X"]), axis=0) for g in gs])
    return X, M, H, Y


def _probs(X: np.ndarray, M: np.ndarray, w: np.ndarray) -> np.ndarray:
    u = np.where(M, X @ w, -np.inf)
    u = u - u.max(axis=1, keepdims=True)
    e = np.where(M, np.exp(u), 0.0)
    return e / e.sum(axis=1, keepdims=True)


def cross_entropy(P: np.ndarray, Y: np.ndarray) -> float:
    """Mean over positions of -sum_p y_p log P_p (0 log 0 = 0)."""
    P = np.clip(P, 1e-12, 1.0)
    return float(-(Y * np.log(P)).sum(axis=1).mean())


def fit(X: np.ndarray, M: np.ndarray, Y: np.ndarray, l2: float, iterations: int = 50) -> np.ndarray:
    """The weights (raw feature units) of the conditional logit fitted by Newton's method with step halving:
    positions ``X`` (N, n, D), seats in play ``M`` (N, n), returns ``Y`` (N, n)."""
    N, n, D = X.shape
    rows = X[M]
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale = np.where(scale > 1e-9, scale, 1.0)  # a constant feature (e.g. never seen) stays at weight 0
    Z = (X - mean) / scale
    Z = np.where(M[:, :, None], Z, 0.0)
    Yn = Y * M
    Yn = Yn / np.where(Yn.sum(axis=1, keepdims=True) > 0, Yn.sum(axis=1, keepdims=True), 1.0)
    w = np.zeros(D)

    def objective(w: np.ndarray) -> float:
        return cross_entropy(_probs(Z, M, w), Yn) * N + 0.5 * l2 * float(w @ w)

    f = objective(w)
    for _ in range(iterations):
        P = _probs(Z, M, w)
        R = P - Yn
        grad = np.einsum("nsd,ns->d", Z, R) + l2 * w
        zbar = np.einsum("nsd,ns->nd", Z, P)
        H = np.einsum("nsd,ns,nse->de", Z, P, Z) - np.einsum("nd,ne->de", zbar, zbar) + l2 * np.eye(D)
        step = np.linalg.solve(H + 1e-9 * np.eye(D), grad)
        t = 1.0
        while t > 1e-6:
            w_new = w - t * step
            f_new = objective(w_new)
            if f_new <= f:
                break
            t *= 0.5
        else:
            break
        done = f - f_new < 1e-10 * max(1.0, abs(f))
        w, f = w_new, f_new
        if done:
            break
    return w / scale  # raw units: w.(x - mean)/scale = (w/scale).x - const, the constant cancels in the softmax


def _standardise(X: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rows = X[M]
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    return mean, np.where(scale > 1e-9, scale, 1.0)  # a constant feature is only centred


def _normalised_returns(Y: np.ndarray, M: np.ndarray) -> np.ndarray:
    Yn = Y * M
    total = Yn.sum(axis=1, keepdims=True)
    return Yn / np.where(total > 0, total, 1.0)


def _mlp_forward(Z: np.ndarray, M: np.ndarray, w1, b1, w2):
    T = np.tanh(Z @ w1.T + b1)
    return T, _probs_u(np.einsum("nsh,h->ns", T, w2), M)


def _probs_u(u: np.ndarray, M: np.ndarray) -> np.ndarray:
    u = np.where(M, u, -np.inf)
    u = u - u.max(axis=1, keepdims=True)
    e = np.where(M, np.exp(u), 0.0)
    return e / e.sum(axis=1, keepdims=True)


def fit_mlp(X: np.ndarray, M: np.ndarray, Y: np.ndarray, l2: float, hidden: int, seed: int, lr: float = 0.01,
            steps: int = 3000, patience: int = 300, validation: tuple | None = None) -> tuple[MLPLayer, dict]:
    """One hidden layer of ``hidden`` tanh units, the utility ``w2 . tanh(W1 z + b1)`` of the standardised
    features z, fitted by full-batch Adam to the cross-entropy of ``softmax_p(u_p)`` (over the seats in play) to
    the returns, plus ``l2 / 2 x |W1, w2|^2 / N`` (the linear fit's penalty, per position). Positions ``X`` (N, n,
    D), seats in play ``M`` (N, n), returns ``Y`` (N, n). With ``validation`` (X, M, Y of held-out games), early
    stopping: the parameters of the best held-out loss, checked every 10 steps, and the fit stops after
    ``patience`` steps without a better one. Deterministic: the initial weights come from ``seed``; no other
    random choice. Returns the layer (b2 = 0: a constant shared by the seats cancels in the softmax) and a report
    (steps run, best step)."""
    N, n, D = X.shape
    mean, scale = _standardise(X, M)
    Z = np.where(M[:, :, None], (X - mean) / scale, 0.0)
    Yn = _normalised_returns(Y, M)
    if validation is not None:
        Xv, Mv, Yv = validation
        Zv = np.where(Mv[:, :, None], (Xv - mean) / scale, 0.0)
    rng = np.random.default_rng(seed)
    params = [rng.normal(0.0, 1.0 / math.sqrt(D), (hidden, D)), np.zeros(hidden),
              rng.normal(0.0, 1.0 / math.sqrt(hidden), hidden)]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    b1_, b2_, eps = 0.9, 0.999, 1e-8
    lam = l2 / N
    best, best_step, best_params, run = math.inf, 0, [p.copy() for p in params], 0
    for step in range(1, steps + 1):
        w1, b1, w2 = params
        T, P = _mlp_forward(Z, M, w1, b1, w2)
        G = (P - Yn) / N  # d(mean cross-entropy)/du, 0 at the seats out of play
        gw2 = np.einsum("nsh,ns->h", T, G) + lam * w2
        dA = G[:, :, None] * w2 * (1.0 - T * T)
        gw1 = np.einsum("nsh,nsd->hd", dA, Z) + lam * w1
        gb1 = dA.sum(axis=(0, 1))
        for i, g in enumerate((gw1, gb1, gw2)):
            m1[i] = b1_ * m1[i] + (1 - b1_) * g
            m2[i] = b2_ * m2[i] + (1 - b2_) * g * g
            params[i] = params[i] - lr * (m1[i] / (1 - b1_ ** step)) / (np.sqrt(m2[i] / (1 - b2_ ** step)) + eps)
        run = step
        if validation is not None and step % 10 == 0:
            loss = cross_entropy(_mlp_forward(Zv, Mv, *params)[1], Yv)
            if loss < best - 1e-9:
                best, best_step, best_params = loss, step, [p.copy() for p in params]
            elif step - best_step >= patience:
                break
    if validation is None:
        best_params, best_step = params, run
    w1, b1, w2 = best_params
    return MLPLayer(mean, scale, w1, b1, w2, 0.0), {"steps": run, "best_step": best_step}


def _zero_layer() -> MLPLayer:
    """The MLP of a player count without data: every seat's utility 0, so the uniform rewards."""
    return MLPLayer(np.zeros(NUM_FEATURES), np.ones(NUM_FEATURES), np.zeros((1, NUM_FEATURES)), np.zeros(1),
                    np.zeros(1), 0.0)


def _held(cfg: TrainConfig, g: dict) -> bool:
    """Is game g held out? Every ``holdout``-th round of games (a round: one game per entry of ``players``)."""
    return bool(cfg.holdout) and (g["i"] // len(cfg.players)) % cfg.holdout == 0


def _with_evaluation(spec: str, path: str) -> str:
    return f"{spec}:evaluation={path}"


def _seconds_recorded() -> bool:
    """Wall times go in the file unless SOURCE_DATE_EPOCH is set (a reproducible build: same seed and options,
    the same bytes)."""
    return not os.environ.get("SOURCE_DATE_EPOCH")


def train_mlp(cfg: TrainConfig, progress=None, round_dir: str | Path | None = None) -> tuple[ValueModel, dict]:
    """Expert iteration (``cfg.model == "mlp"``): round 0 plays ``cfg.games`` games with ``cfg.bots`` and fits
    model 1; round k plays ``cfg.games`` more (game indices k x games ...) with the bots using model k
    (``evaluation=<its file>``) and fits model k + 1 on the games of all the rounds so far. Model k's file is
    written to ``round_dir`` (a temporary directory if None) as ``round<k>.json`` for the bots to read. Returns
    the last model and a report; the model's ``meta`` records the provenance, round by round."""
    started = time.perf_counter()
    tmp = None
    if round_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="feudo-train-")
        round_dir = tmp.name
    round_dir = Path(round_dir)
    if cfg.rounds > 1:
        round_dir.mkdir(parents=True, exist_ok=True)
    games: list[dict] = []
    rounds: list[dict] = []
    model: ValueModel | None = None
    try:
        for k in range(cfg.rounds):
            t0 = time.perf_counter()
            if k == 0:
                bots, shown = cfg.bots, list(cfg.bots)
            else:
                path = round_dir / f"round{k}.json"
                path.write_text(dumps(model), encoding="utf-8")
                bots = tuple(_with_evaluation(b, str(path)) for b in cfg.bots)
                shown = [_with_evaluation(b, f"<model {k}>") for b in cfg.bots]
            new = generate(cfg, progress, first=k * cfg.games, bots=bots)
            games.extend(new)
            played = time.perf_counter() - t0
            layers, validation = {}, {}
            kept = [g for g in games if not _held(cfg, g)]
            held = [g for g in games if _held(cfg, g)]
            for n in PLAYER_COUNTS:
                tr = _stack(kept, n)
                if tr is None:
                    layers[n] = _zero_layer()
                    continue
                X, M, H, Y = tr
                va = _stack(held, n)
                layer, fit_report = fit_mlp(X, M, Y, cfg.l2, cfg.hidden, seed=game_seed(cfg.seed, 10**9 + 10 * k + n),
                                            lr=cfg.lr, steps=cfg.steps, patience=cfg.patience,
                                            validation=None if va is None else (va[0], va[1], va[3]))
                layers[n] = layer
                entry = {"train_games": sum(1 for g in kept if g["players"] == n), "train_positions": int(len(X)),
                         "train_loss": round(cross_entropy(_probs_u(layer.utilities(X), M), Y), 6), **fit_report}
                if va is not None:
                    Xv, Mv, Hv, Yv = va
                    w = fit(X, M, Y, cfg.l2)  # the linear model on the same data: does the hidden layer pay?
                    entry.update({"validation_games": sum(1 for g in held if g["players"] == n),
                                  "validation_positions": int(len(Xv)),
                                  "validation_loss": round(cross_entropy(_probs_u(layer.utilities(Xv), Mv), Yv), 6),
                                  "validation_loss_linear": round(cross_entropy(_probs(Xv, Mv, w), Yv), 6),
                                  "validation_loss_handmade": round(cross_entropy(Hv, Yv), 6),
                                  "validation_loss_uniform": round(cross_entropy(Mv / Mv.sum(axis=1, keepdims=True),
                                                                                 Yv), 6)})
                validation[str(n)] = entry
            record = {"round": k, "bots": shown, "games": len(new),
                      "positions": int(sum(len(g["X"]) for g in new)), "validation": validation}
            if _seconds_recorded():
                record["seconds_games"] = round(played, 1)
                record["seconds"] = round(time.perf_counter() - t0, 1)
            rounds.append(record)
            untrained = [n for n in PLAYER_COUNTS if _stack(kept, n) is None]
            meta = {"model": "mlp: rewards = softmax over the seats in play of w2 . tanh(w1 @ ((features - mean) / "
                             "scale) + b1) + b2, per player count",
                    "training": {"seed": cfg.seed, "model": "mlp", "rounds": cfg.rounds,
                                 "games_per_round": cfg.games, "players": list(cfg.players), "bots": list(cfg.bots),
                                 "holdout": cfg.holdout, "l2": cfg.l2, "hidden": cfg.hidden, "lr": cfg.lr,
                                 "steps": cfg.steps, "patience": cfg.patience,
                                 "games": len(games), "positions": int(sum(len(g["X"]) for g in games)),
                                 "untrained_players": untrained, "date": _date(cfg), "command": command_line(cfg),
                                 "early_stopping": "on the held-out games, whose losses below are so slightly "
                                                   "optimistic",
                                 "per_round": rounds}}
            model = model_from_dict(ValueModel(None, meta, layers).to_dict(), "trained model")
    finally:
        if tmp is not None:
            tmp.cleanup()
    report = {"games": len(games), "positions": model.meta["training"]["positions"],
              "by_players": rounds[-1]["validation"], "rounds": rounds,
              "seconds": round(time.perf_counter() - started, 1)}
    return model, report


def _date(cfg: TrainConfig) -> str:
    if cfg.date is not None:
        return cfg.date
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (_dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch and epoch.isdigit()
            else _dt.datetime.now(_dt.timezone.utc))
    return when.date().isoformat()


def train(cfg: TrainConfig, progress=None, round_dir: str | Path | None = None) -> tuple[ValueModel, dict]:
    """Generate the games, fit every player count, and return the model and a report (data size, losses);
    ``cfg.model == "mlp"``: :func:`train_mlp` (``round_dir``: where the rounds' models are written)."""
    if cfg.model == "mlp":
        return train_mlp(cfg, progress, round_dir)
    started = time.perf_counter()
    games = generate(cfg, progress)
    played = time.perf_counter() - started
    rounds = len(cfg.players)  # game i is of round i // rounds: a round has every player count once
    held = [g for g in games if cfg.holdout and (g["i"] // rounds) % cfg.holdout == 0]
    kept = [g for g in games if not (cfg.holdout and (g["i"] // rounds) % cfg.holdout == 0)]
    weights: dict[int, np.ndarray] = {}
    report: dict = {"games": len(games), "positions": 0, "by_players": {}}
    for n in PLAYER_COUNTS:
        tr = _stack(kept, n)
        if tr is None:
            weights[n] = np.zeros(NUM_FEATURES)  # no data: every seat equal
            continue
        X, M, H, Y = tr
        w = fit(X, M, Y, cfg.l2)
        weights[n] = w
        entry = {"train_games": sum(1 for g in kept if g["players"] == n), "train_positions": int(len(X)),
                 "train_loss": round(cross_entropy(_probs(X, M, w), Y), 6)}
        va = _stack(held, n)
        if va is not None:
            Xv, Mv, Hv, Yv = va
            uniform = Mv / Mv.sum(axis=1, keepdims=True)
            entry.update({"validation_games": sum(1 for g in held if g["players"] == n),
                          "validation_positions": int(len(Xv)),
                          "validation_loss": round(cross_entropy(_probs(Xv, Mv, w), Yv), 6),
                          "validation_loss_handmade": round(cross_entropy(Hv, Yv), 6),
                          "validation_loss_uniform": round(cross_entropy(uniform, Yv), 6)})
        report["by_players"][str(n)] = entry
        report["positions"] += int(len(X)) + (int(len(va[0])) if va is not None else 0)
    meta = {"model": "conditional logit: rewards = softmax over the seats in play of weights[players] . features",
            "training": {"seed": cfg.seed, "games": cfg.games, "players": list(cfg.players), "bots": list(cfg.bots),
                         "holdout": cfg.holdout, "l2": cfg.l2, "positions": report["positions"],
                         "date": _date(cfg), "command": command_line(cfg)},
            "validation": report["by_players"]}
    model = model_from_dict(ValueModel(weights, meta).to_dict(), "trained model")  # validates what is written
    report["seconds_games"] = round(played, 1)
    report["seconds"] = round(time.perf_counter() - started, 1)
    return model, report


def command_line(cfg: TrainConfig) -> str:
    """The ``feudo train`` command that reproduces ``cfg`` (``--jobs`` and ``--out`` do not change the weights)."""
    line = (f"feudo train --games {cfg.games} --players {','.join(map(str, cfg.players))} --bots "
            f"{','.join(cfg.bots)} --seed {cfg.seed} --holdout {cfg.holdout} --l2 {cfg.l2:g}")
    if cfg.model == "mlp":
        line = (f"feudo train --model mlp --rounds {cfg.rounds} --hidden {cfg.hidden} --lr {cfg.lr:g} --steps "
                f"{cfg.steps} --patience {cfg.patience} " + line[len("feudo train "):])
    return line


def dumps(model: ValueModel) -> str:
    """The weights file's text: indented JSON, every list of numbers or names on one line."""
    text = json.dumps(model.to_dict(), indent=1)
    return re.sub(r"\[[^\[\]{}]*\]", lambda m: re.sub(r"\s*\n\s*", " ", m.group(0)), text) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------------------------

def _ints(text: str, name: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ValueError(f"--{name}: expected comma-separated integers, got {text!r}") from None


def cmd_train(args: argparse.Namespace) -> int:
    spec = args.bots if args.bots is not None else (DEFAULT_MLP_BOTS if args.model == "mlp" else DEFAULT_BOTS)
    bots = tuple(s.strip() for s in spec.split(",") if s.strip())
    mlp = {} if args.model != "mlp" else {k: getattr(args, k) for k in ("rounds", "hidden", "lr", "steps", "patience")
                                          if getattr(args, k) is not None}
    if args.model != "mlp":
        given = [k for k in ("rounds", "hidden", "lr", "steps", "patience") if getattr(args, k) is not None]
        if given:
            raise ValueError(f"--{given[0]}: for --model mlp only")
    cfg = TrainConfig(games=args.games, players=_ints(args.players, "players"), bots=bots, seed=args.seed,
                      jobs=args.jobs, holdout=args.holdout, l2=args.l2, model=args.model, **mlp)
    out = Path(args.out if args.out is not None else
               ("value_mlp.json" if args.model == "mlp" else "value_v1.json"))
    if out.is_dir():
        raise ValueError(f"--out: {out} is a directory; expected a file name")
    clock = {"start": time.perf_counter(), "round": 0, "last": 0.0}

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if not args.quiet and (now - clock["last"] > 5 or done == total):
            clock["last"] = now
            el = now - clock["start"]
            eta = el / done * (total - done)
            label = f"round {clock['round']}: " if cfg.model == "mlp" else ""
            print(f"{label}games {done}/{total}  {el:.0f} s  ETA {eta:.0f} s", file=sys.stderr, flush=True)
        if done == total:  # expert iteration: the next round's games start after this round's fit
            clock["start"], clock["round"] = time.perf_counter(), clock["round"] + 1

    out.parent.mkdir(parents=True, exist_ok=True)
    # expert iteration's intermediate models, kept beside the output (each can be measured: evaluation=FILE)
    model, report = train(cfg, progress, round_dir=out.parent / f"{out.stem}.rounds" if cfg.model == "mlp" else None)
    out.write_text(dumps(model), encoding="utf-8")
    report["out"] = str(out)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"wrote {out}: {report['games']} games, {report['positions']} positions, {report['seconds']} s")
        for n, e in report["by_players"].items():
            line = f"  {n} players: {e['train_positions']} training positions, loss {e['train_loss']}"
            if "validation_loss" in e:
                linear = f"linear {e['validation_loss_linear']}, " if "validation_loss_linear" in e else ""
                line += (f"; validation {e['validation_positions']} positions, loss {e['validation_loss']} "
                         f"({linear}hand-made {e['validation_loss_handmade']}, uniform "
                         f"{e['validation_loss_uniform']})")
            print(line)
    return 0


def add_parser(sub) -> None:
    """Register ``feudo train`` on the CLI's subparsers."""
    p = sub.add_parser(
        "train", help="self-play games, then fit the learned evaluation and write its weights file",
        description="Play self-play games (in parallel, seeded), record every seat's features at the start of "
                    "every turn with the game's R19 returns, fit the learned evaluation (a softmax over the seats "
                    "of weights . features, one weight vector per player count, Newton's method) and write the "
                    "weights as a versioned JSON file. Every --holdout-th round of games (one game per entry of "
                    "--players) is held out: its validation loss is printed next to the hand-made evaluation's and "
                    "the uniform guess's. Same seed and options: the same file, whatever "
                    "--jobs. With --model mlp: one hidden layer per player count fitted by Adam with early "
                    "stopping on the held-out games, by expert iteration: --rounds rounds of --games games, round "
                    "k's bots evaluating with the model of the rounds before. The shipped models are "
                    "feudo_ai/data/value_v1.json, value_mlp_v1.json (2 players) and value_mlp_4p_v1.json (4 "
                    "players) (docs/search.md: how they were made).")
    p.add_argument("--model", choices=KINDS, default="linear",
                   help="linear (the conditional logit, Newton's method; default) or mlp (one hidden layer, Adam, "
                        "expert iteration over --rounds)")
    p.add_argument("--games", type=int, default=TrainConfig.games,
                   help=f"games in all; with --model mlp, games per round (default {TrainConfig.games})")
    p.add_argument("--players", default=",".join(map(str, TrainConfig.players)),
                   help="player counts, cycled over the games (default 2,2,3,4: half the games with 2 players)")
    p.add_argument("--bots", default=None,
                   help=f"comma-separated bot specs; every seat draws one (default {DEFAULT_BOTS}; --model mlp: "
                        f"{DEFAULT_MLP_BOTS}, and from round 1 on each with evaluation=<the last round's model>)")
    p.add_argument("--seed", type=int, default=TrainConfig.seed, help="seed of everything random (default 1)")
    p.add_argument("--jobs", type=int, default=1, help="processes playing the games (default 1)")
    p.add_argument("--holdout", type=int, default=TrainConfig.holdout,
                   help="hold out every N-th round of games for the validation loss (default 5; 0: none)")
    p.add_argument("--l2", type=float, default=TrainConfig.l2,
                   help="L2 penalty on the standardised weights (default 1)")
    p.add_argument("--rounds", type=int, default=None,
                   help=f"--model mlp: rounds of expert iteration (default {TrainConfig.rounds}); round k's models "
                        "are kept beside --out in <stem>.rounds/")
    p.add_argument("--hidden", type=int, default=None,
                   help=f"--model mlp: tanh units per player count (default {TrainConfig.hidden}, at most "
                        f"{MAX_HIDDEN})")
    p.add_argument("--lr", type=float, default=None, help=f"--model mlp: Adam's step size (default {TrainConfig.lr})")
    p.add_argument("--steps", type=int, default=None,
                   help=f"--model mlp: the most Adam steps of a fit (default {TrainConfig.steps})")
    p.add_argument("--patience", type=int, default=None,
                   help=f"--model mlp: steps without a better held-out loss before a fit stops (default "
                        f"{TrainConfig.patience})")
    p.add_argument("--out", default=None,
                   help="the weights file to write (default value_v1.json; --model mlp: value_mlp.json)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=cmd_train)

