"""Advisor.RenderPosition end to end over a real (in-process) gRPC server, through AdvisorClient.render.

- the SVG parses as XML and holds what the renderer draws: the map's City names, the legend, VP, the viewer;
- R22: from a seat's view, two full states that differ only in another seat's hidden selection give the same
  picture (in every position form), while the seat's own selection is drawn (so the pictures of the seat whose
  selection differs do differ: the test could fail);
- any seat's view renders, also while another seat is to act (its picks filled from the view alone);
- PNG on request; bad input is INVALID_ARGUMENT naming the field.
"""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import grpc
import pytest
from service_helpers import running_server

from engine import Kind, Phase, new_game, sample_chance
from engine.history import seat_log
from engine.serialize import state_from_dict
from engine.state import CASTLE
from feudo.v1 import game_pb2 as gpb
from feudo_ai.client import AdvisorClient, AdvisorError
from feudo_ai.wire.convert import history_from_entries, setup_from_game

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def client():
    with running_server() as server:
        with AdvisorClient(server.address) as c:
            yield c


def _play_to(players: int, seed: int, stop) -> tuple:
    state, rng, actions = new_game(players=players, seed=seed), random.Random(seed), []
    start = state.clone()
    while not stop(state):
        a = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
        state.apply_action(a)
        actions.append(a)
    return start, state, actions


def _reveal_position():
    """Turn 2's reveals of a 3-player game: every seat has a hidden selection, the player to act is seat 1."""
    return _play_to(3, 2, lambda s: s.phase == Phase.REVEAL and s.turn == 2 and s.current_player() == 1)


def _with_other_selection(state, q: int):
    """``state`` with one of seat ``q``'s unrevealed selected Army Cards swapped for another card it holds."""
    d = state.to_dict()
    sel, held, revealed = d["sel_army"][q], d["army_held"][q], d["revealed"][q]
    chosen = [t for t in range(len(sel)) if sel[t] and not revealed[t]]
    spare = [t for t in range(len(sel)) if held[t] and not sel[t] and not revealed[t] and d["loc"][q][t] == CASTLE]
    for t in chosen:
        for u in spare:
            d2 = {k: ([list(x) if isinstance(x, list) else x for x in v] if isinstance(v, list) else v)
                  for k, v in d.items()}
            d2["sel_army"][q][t], d2["sel_army"][q][u] = False, True
            try:
                return state_from_dict(state.game, d2)
            except Exception:  # noqa: BLE001 - that swap breaks a rule of the position; try another
                continue
    raise AssertionError("no other selection found for the test")


def test_the_svg_is_xml_with_the_board_and_the_legend(client):
    _, state, _ = _reveal_position()
    pic = client.render(state, 0)
    root = ET.fromstring(pic.svg)
    assert root.tag == f"{SVG}svg" and int(root.get("width")) == pic.width and int(root.get("height")) == pic.height
    texts = [t.text for t in root.iter(f"{SVG}text") if t.text]
    cities = [t.name for t in state.game.map.territories if t.kind == Kind.CITY]
    assert cities and all(name in texts for name in cities)
    assert "Legend" in texts and "Plague Token" in texts and "Convent" in texts
    assert "Seen by Blue" in texts and f"Turn {state.turn} of 10" in texts
    assert all(f"{state.game.player_name(p)}: {state.vp[p]} VP" in texts for p in range(3))
    assert pic.png is None


def test_r22_another_seats_hidden_selection_changes_nothing_in_the_picture(client):
    start, state, actions = _reveal_position()
    other = _with_other_selection(state, 2)
    assert other.to_json() != state.to_json() and other.observation(0) == state.observation(0)
    for seat in (0, 1):
        assert client.render(state.to_json(), seat).svg == client.render(other.to_json(), seat).svg  # state_json
        assert client.render(state, seat).svg == client.render(other, seat).svg  # observation form
    # the seat whose selection differs sees its own selection drawn: its pictures differ
    mine, theirs = client.render(state, 2).svg, client.render(other, 2).svg
    assert mine != theirs and "your selection: " in mine
    # nor is another seat's unrevealed card named in seat 0's picture
    names = state.game.ruleset.army
    hidden = [names[t].name for t in range(state.game.num_tokens) if state.sel_army[2][t] and not state.revealed[2][t]]
    pic0 = client.render(state, 0).svg
    assert hidden and "your selection: " in pic0
    assert all(f"Yellow: {n}" not in pic0 for n in hidden)
    # the history form of seat 0 gives the same picture as its observation
    hist = gpb.Position(setup=setup_from_game(state.game),
                        history=history_from_entries(seat_log(actions, 0, start=start)))
    assert client.render(hist, 0).svg == pic0


def test_every_seats_view_renders_while_another_is_to_act(client):
    _, state, _ = _reveal_position()
    assert state.current_player() == 1
    pictures = {seat: client.render(state, seat).svg for seat in range(3)}
    assert len(set(pictures.values())) == 3  # each with its own selection
    public = {seat: client.render(state, seat, public_view=True).svg for seat in range(3)}
    assert len(set(public.values())) == 1 and "your selection" not in public[0] and "Seen by" not in public[0]


def test_png_on_request(client):
    _, state, _ = _reveal_position()
    pic = client.render(state, 1, png=True, png_scale=0.5)
    assert pic.png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(pic.png[16:20], "big")  # the IHDR chunk: width, then height
    assert width == round(pic.width * 0.5)


def _code(excinfo) -> grpc.StatusCode:
    return excinfo.value.code


@pytest.mark.parametrize("position, seat, kwargs, field", [
    (gpb.Position(state_json="{not json"), 0, {}, "position.state_json"),
    (gpb.Position(), 0, {}, "position"),
    (None, 7, {}, "seat"),
    (None, 0, {"png": True, "png_scale": 5.0}, "png_scale"),
    (None, 0, {"png": True, "png_scale": float("nan")}, "png_scale"),
])
def test_bad_input_is_invalid_argument_naming_the_field(client, position, seat, kwargs, field):
    _, state, _ = _reveal_position()
    with pytest.raises(AdvisorError) as e:
        client.render(position if position is not None else gpb.Position(state_json=state.to_json()), seat, **kwargs)
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT and e.value.details.startswith(field), e.value.details


def test_a_bad_observation_is_invalid_argument_naming_its_field(client):
    _, state, _ = _reveal_position()
    from feudo_ai.wire.convert import position_from

    msg = position_from(state, 0)
    msg.observation.players[1].tokens[2].place = gpb.PLACE_MAP
    msg.observation.players[1].tokens[2].territory = 100000
    with pytest.raises(AdvisorError) as e:
        client.render(msg, 0)
    assert _code(e) == grpc.StatusCode.INVALID_ARGUMENT
    assert e.value.details.startswith("position.observation.players[1].tokens[2]"), e.value.details
