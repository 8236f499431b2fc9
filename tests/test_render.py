"""Pictures: text and SVG maps, SVG/PNG positions (R3 renderable, R22 nothing hidden drawn), `feudo render`."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET

import pytest

from engine import GameMap, GameRecord, Phase, load_map, new_game, play_game, sample_chance
from engine.render import _ASCII, map_ascii, map_svg, position_svg, render_text, svg_to_png
from feudo_ai.bots import RandomBot
from feudo_ai.cli import main

SVG = "{http://www.w3.org/2000/svg}"


def _classes(svg: str, name: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def _played(players: int = 4, seed: int = 5, stop=lambda s: s.turn >= 4 and s.phase == Phase.ATTACK):
    rng = random.Random(seed)
    state = new_game(players=players, seed=seed)
    while not state.is_terminal() and not stop(state):
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
    return state


def test_map_ascii_counts_the_published_terrain():
    m = load_map(seed=1)
    pic = map_ascii(m)
    lines = pic.splitlines()
    assert len(lines) == 10 and all(len(line.replace(" ", "")) == 10 for line in lines)
    # R3: 16 Villages, 5 Cities, the Central Hill's four cells
    assert sum(line.count("v") for line in lines) == 16 and pic.count("+") == 4 and pic.count("C") == 5
    marked = map_ascii(m, {m.territory("Evesham").id: "Xyz"})
    assert marked.count("X") == 1 and marked.count("C") == 4


def test_map_svg_draws_every_cell_city_and_castle_site():
    m = load_map(seed=1)
    svg = map_svg(m, {0: "B<1>"})
    root = ET.fromstring(svg)  # well-formed
    cells = [e for e in root.iter(SVG + "rect") if e.find(SVG + "title") is not None]
    assert len(cells) == 100
    assert "B&lt;1&gt;" in svg
    for x in m.cities:
        assert m.territories[x].name in svg
    assert len(_classes(svg, "castle-site")) == len(m.castle_sites)


def test_graph_map_without_cells_is_a_ring():
    tiny = GameMap.from_dict({"format": "feudo-map-graph/1", "name": "t",
                              "territories": [{"name": "a", "kind": "hill", "neighbors": ["b"], "outer_edge": True},
                                              {"name": "b", "kind": "village", "neighbors": ["a"]}],
                              "castle_sites": [{"territory": "a", "board": 0}], "plague_start": "b",
                              "village_lattice": {"b": {"N": "b", "E": "b", "S": "b", "W": "b"}}})
    listing = map_ascii(tiny, {1: "P"})
    assert "a (hill): b" in listing and "[P]" in listing
    assert "<circle" in map_svg(tiny)
    assert len(map_ascii(load_map("turn_example")).splitlines()) == 6


def test_position_svg_draws_every_token_castle_and_the_plague_token():
    state = _played()
    svg = position_svg(state)
    on_map = [(p, t) for p in range(state.num_players) for t in range(state.game.num_tokens) if state.loc[p][t] >= 0]
    tokens = _classes(svg, "token")
    assert len(tokens) == len(on_map)
    for p in range(state.num_players):  # every token in its owner's colour class
        assert len([e for e in tokens if f"p{p}" in e.get("class").split()]) == \
            sum(1 for q, _ in on_map if q == p)
    stricken = sum(1 for p, t in on_map if state.stricken[p][t])
    assert len([e for e in tokens if e.get("fill") == "#151515"]) == stricken  # the black side up (R1)
    assert len(_classes(svg, "castle")) == state.num_players
    assert len(_classes(svg, "plague-token")) == (1 if state.plague_village >= 0 else 0)
    assert f"Turn {state.turn} of" in svg and "Legend" in svg
    for p in range(state.num_players):
        assert f"{state.game.player_name(p)}: {state.vp[p]} VP" in svg


def test_r24_two_castles_on_one_joined_corner_are_both_drawn():
    m = load_map(seed=1)
    corner = next(t for t in m.territories if t.joined_corner)
    sites = [s.id for s in m.castle_sites if s.territory == corner.id]
    assert len(sites) == 2
    state = new_game(players=2, seed=1, castles=sites)
    assert len(_classes(position_svg(state), "castle")) == 2


def _hidden_swap(state, seat: int):
    """A copy where an opponent of ``seat`` holds another unrevealed selection (nothing public changes)."""
    other = state.clone()
    k = state.game.num_tokens
    for q in range(state.num_players):
        if q == seat:
            continue
        chosen = [t for t in range(k) if other.sel_army[q][t] and not other.revealed[q][t]]
        spare = [t for t in range(k) if other.army_held[q][t] and not other.sel_army[q][t]]
        if chosen and spare:
            other.sel_army[q][chosen[0]], other.sel_army[q][spare[0]] = False, True
            return other
    raise AssertionError("no opponent with a hidden card to swap")


def test_r22_a_seat_view_never_draws_another_seats_hidden_cards():
    state = _played(stop=lambda s: s.phase == Phase.REVEAL and s.turn >= 2)
    seat = state.current_player()
    other = _hidden_swap(state, seat)
    assert position_svg(state, seat) == position_svg(other, seat)
    assert position_svg(state) == position_svg(other)
    # the seat's own selection is shown to that seat
    own = [state.game.ruleset.army[t].name for t in range(state.game.num_tokens)
           if state.sel_army[seat][t] and not state.revealed[seat][t]]
    if own:
        assert re.search("your selection: [^<]*" + re.escape(own[0]), position_svg(state, seat))
        assert "your selection" not in position_svg(state)


def test_bad_seat_is_refused():
    with pytest.raises(ValueError, match="^seat:"):
        position_svg(_played(players=2), seat=2)


def test_png_is_a_png(tmp_path):
    path = tmp_path / "p.png"
    data = svg_to_png(position_svg(_played(players=3)), str(path))
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and path.read_bytes() == data


def test_text_picture_has_a_legend():
    text = render_text(_played(players=2))
    assert "Legend:" in text and "Plague Token" in text


def test_cli_render_record_at_a_seat(tmp_path, capsys):
    state = new_game(players=2, seed=3)
    record, final = play_game([RandomBot(1), RandomBot(2)], state, seed=3)
    path = tmp_path / "g.json"
    record.save(path)
    png, svg = tmp_path / "g.png", tmp_path / "g.svg"
    assert main(["render", str(path), "--at", "200", "--seat", "1", "--png", str(png), "--svg", str(svg)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG" and "Seen by White" in svg.read_text()
    assert main(["render", str(path)]) == 0
    assert "Legend:" in capsys.readouterr().out
    assert main(["render", str(path), "--at", str(len(record.actions) + 1)]) == 2
    assert "--at" in capsys.readouterr().err
    assert main(["render", str(path), "--seat", "5", "--svg", str(svg)]) == 2
    assert "--seat" in capsys.readouterr().err
    state_file = tmp_path / "s.json"
    state_file.write_text(final.to_json())
    assert main(["render", str(state_file), "--svg", str(svg)]) == 0
    assert main(["render", str(state_file), "--at", "3"]) == 2
    assert main(["render", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_cli_render_map(tmp_path, capsys):
    assert main(["render", "--seed", "2"]) == 0
    lines = capsys.readouterr().out.rstrip().splitlines()
    # the coordinates of the places' names around the 10 rows ("Wood C2": column C, row 2), then the symbols
    assert lines[0].split() == list("ABCDEFGHIJ") and [ln.split()[0] for ln in lines[1:11]] == [
        str(r) for r in range(1, 11)]
    assert len(lines) == 12 and "% wood" in lines[11]
    m = load_map(None, seed=2)
    for t, label in zip(m.territories, m.labels):  # every single-cell territory's symbol at its coordinate
        if len(t.cells) == 1:
            (r, c), = t.cells
            assert lines[1 + r].split()[1 + c] == _ASCII[t.kind], label
    svg = tmp_path / "map.svg"
    assert main(["render", "--seed", "2", "--svg", str(svg)]) == 0
    ET.fromstring(svg.read_text())


def test_panel_text_stays_inside_the_picture_in_the_png():
    """Labels stay inside their cells: checked on the pixels cairosvg draws (it ignores ``textLength``), not on the
    renderer's own width estimate. The longest own-selection line (three Infantrymen, R6) must not reach the
    right margin of the picture."""
    import io

    import numpy as np
    from PIL import Image

    state = _played(stop=lambda s: s.phase == Phase.REVEAL and s.turn >= 2)
    names = [a.name for a in state.game.ruleset.army]
    state.sel_army[0] = [n.startswith("Infantryman") for n in names]
    state.revealed[0] = [False] * len(names)
    svg = position_svg(state, 0)
    assert "Infantryman 3" in svg
    image = np.asarray(Image.open(io.BytesIO(svg_to_png(svg))).convert("RGB")).astype(int)
    background = np.array([0xFB, 0xF8, 0xEF])
    right_margin = image[:, -12:, :]  # the last 6 SVG units (PNG at scale 2) hold nothing but the background
    assert (np.abs(right_margin - background).sum(axis=2) > 30).sum() == 0


@pytest.mark.parametrize("map_name", ["default", "turn_example"])
def test_text_legend_lists_only_the_symbols_the_board_can_show(map_name):
    """Every terrain symbol of the legend stands on the board and every one on the board is in the legend (the
    turn example's map has no Central Hill); the Plague Token is in the legend once it is on the board."""
    from engine import load_map
    from engine.render import board_segments, legend_text, segments_text

    state = new_game(players=2, seed=1, game_map=load_map(map_name, seed=1))
    board = segments_text(board_segments(state))
    cells = {piece[0] for line in board_segments(state)[1:] for piece in line if piece[0] in _ASCII.values()}
    legend = legend_text(state).splitlines()[0]
    listed = {sym for sym in _ASCII.values() if f"  {sym} " in "  " + legend.removeprefix("Legend: ")}
    assert listed == cells and cells
    assert ("+" in cells) == (map_name == "default")
    assert ("* Plague Token" in legend) == (state.plague_village >= 0) == ("*" in board)
