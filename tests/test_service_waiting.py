"""A waiting seat asks the Advisor: during another seat's movement turn, e.g. while seat 1 reveals, the
view of seat 0 hides seat 1's unrevealed picks, so the engine's loader cannot build it (the blanked view's player
to act has no card left to reveal). The service must still answer it clearly: LegalActions gives no actions and
names the player to act; Suggest is FAILED_PRECONDITION "seat N is not to act; seat M is" (not INVALID_ARGUMENT
blaming the position). Expected values come from the full engine state, not from the service.
"""

from __future__ import annotations

import random

import grpc
import pytest
from engine import Phase, new_game, sample_chance
from service_helpers import running_server

from feudo.v1 import advisor_pb2 as apb
from feudo.v1 import advisor_pb2_grpc as apb_grpc
from feudo.v1 import game_pb2 as gpb
from feudo_ai import ObservedPosition
from feudo_ai.search import NotToAct, decision_root
from feudo_ai.wire import convert
from feudo_ai.wire.convert import position_from


def reveal_positions(players: int, seed: int = 3) -> list:
    """The first REVEAL decision of each seat in a seeded random game, and one later in a round (round > 0), so
    that every seat is once the revealer and otherwise waits."""
    rng = random.Random(seed)
    state = new_game(players=players, seed=seed)
    by_actor: dict[int, object] = {}
    later = None
    while not state.is_terminal() and (len(by_actor) < players or later is None):
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        if state.phase == Phase.REVEAL:
            by_actor.setdefault(state.current_player(), state.clone())
            if later is None and state.round > 0:
                later = state.clone()
        state.apply_action(rng.choice(state.legal_actions()))
    assert len(by_actor) == players and later is not None
    return [by_actor[p] for p in sorted(by_actor)] + [later]


@pytest.fixture(scope="module")
def stub():
    with running_server() as server:
        with grpc.insecure_channel(server.address) as channel:
            yield apb_grpc.AdvisorStub(channel)


def _forms(state, seat: int) -> dict[str, gpb.Position]:
    return {"observation": position_from(state, seat), "state_json": gpb.Position(state_json=state.to_json())}


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_seat_during_a_reveal_gets_a_clear_answer(stub, players):
    for state in reveal_positions(players):
        actor = state.current_player()
        for seat in range(players):
            for form, position in _forms(state, seat).items():
                where = f"{players} players, seat {seat}, player {actor} reveals, {form}"
                legal = stub.LegalActions(apb.LegalActionsRequest(position=position, seat=seat), timeout=30)
                assert legal.current_player == actor, where
                assert legal.phase == gpb.PHASE_REVEAL, where
                request = apb.SuggestRequest(position=position, seat=seat, limits=apb.Limits(iterations=64, seed=1))
                if seat == actor:
                    assert legal.seat_to_act, where
                    assert [(a.id, a.text) for a in legal.actions] == [
                        (a, state.action_to_string(a)) for a in state.legal_actions()], where
                    advice = stub.Suggest(request, timeout=30).advice
                    # the plan reveals one of the seat's own unrevealed selected cards (never a placeholder)
                    assert advice.best.id in state.legal_actions(), where
                    token = advice.best.id - state.game.layout.REVEAL
                    assert state.sel_army[seat][token] and not state.revealed[seat][token], where
                else:
                    assert not legal.seat_to_act and list(legal.actions) == [], where
                    with pytest.raises(grpc.RpcError) as e:
                        stub.Suggest(request, timeout=30)
                    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION, where
                    assert e.value.details() == f"seat {seat} is not to act; seat {actor} is", where
                    analyze = stub.Analyze(apb.AnalyzeRequest(position=position, seat=seat,
                                                              limits=apb.Limits(iterations=64)), timeout=30)
                    with pytest.raises(grpc.RpcError) as e:
                        list(analyze)
                    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION, where


def test_a_waiting_seat_view_that_is_inconsistent_is_still_invalid_argument(stub):
    """The waiting seat's view is checked with placeholders for what it cannot see; a view inconsistent even so
    (here: the revealer is said to have selected no card, so it has nothing to reveal) names the position."""
    state = reveal_positions(2)[0]
    actor = state.current_player()
    seat = 1 - actor
    position = position_from(state, seat)
    position.observation.players[actor].selected_army_cards = 0
    with pytest.raises(grpc.RpcError) as e:
        stub.LegalActions(apb.LegalActionsRequest(position=position, seat=seat), timeout=30)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "position.observation" in e.value.details()


def test_a_seat_whose_selection_is_pending_is_advised_out_of_turn(stub):
    """Out of turn, the advice API answers the Strategy phase (R6: the selection is simultaneous)."""
    from service_helpers import positions_by_phase

    state = positions_by_phase(3)[Phase.SELECT]
    waiting = [q for q in range(3) if q != state.current_player() and not state.sel_done[q]]
    assert waiting
    for seat in waiting:
        advice = stub.Suggest(apb.SuggestRequest(position=position_from(state, seat), seat=seat,
                                                 limits=apb.Limits(iterations=64, seed=1)), timeout=30).advice
        assert advice.decision == apb.DECISION_KIND_SELECTION and len(advice.plan) == 4
        legal = stub.LegalActions(apb.LegalActionsRequest(position=position_from(state, seat), seat=seat),
                                  timeout=30)
        assert legal.seat_to_act and legal.actions


def test_load_view_names_the_player_to_act_and_keeps_placeholders_out():
    """convert.load_view: the actor's own view loads as is; a waiting seat's view raises NotToAct naming the
    player to act (the placeholder state it was checked with is not returned)."""
    for players in (2, 3, 4):
        state = reveal_positions(players)[0]
        actor = state.current_player()
        for seat in range(players):
            observed = ObservedPosition.from_state(state, seat)
            if seat == actor:
                view = convert.load_view(observed)
                assert decision_root(view, seat) is view
                assert view.sel_army[seat] == state.sel_army[seat]
                continue
            with pytest.raises(NotToAct) as e:
                convert.load_view(observed)
            assert (e.value.seat, e.value.actor) == (seat, actor)
            assert str(e.value) == f"seat {seat} is not to act; seat {actor} is"


def test_feudo_advise_in_process_tells_a_waiting_seat_who_is_to_act(tmp_path):
    import subprocess
    import sys

    from service_helpers import ROOT

    state = reveal_positions(2)[0]
    actor = state.current_player()
    path = tmp_path / "reveal.json"
    path.write_text(state.to_json())
    base = [sys.executable, "-m", "feudo_ai", "advise", str(path), "--iterations", "100", "--seat"]
    waiting = subprocess.run(base + [str(1 - actor)], capture_output=True, text=True, cwd=str(ROOT), timeout=120)
    assert waiting.returncode == 2 and "Traceback" not in waiting.stderr
    assert f"seat {1 - actor} is not to act; seat {actor} is" in waiting.stderr
    to_act = subprocess.run(base + [str(actor)], capture_output=True, text=True, cwd=str(ROOT), timeout=120)
    assert to_act.returncode == 0 and to_act.stdout.startswith(f"seat {actor} plan: reveal ")
