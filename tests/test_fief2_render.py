"""Fief 2 pictures: the SVG drawn from the map data (fief2/render.py), its PNG through cairosvg, and
``feudo render`` of a Fief 2 game record. Token counts are checked against numbers set by hand or read from the
state's own fields, never from the renderer."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest

from feudo_ai.cli import main
from feudo_ai.games import get_game
from feudo_ai.people.fief2_play import Fief2Session
from fief2 import State, play_random
from fief2.render import FAMILY_COLOURS, render_png, render_svg
from fief2.state import MOB

from fief2_helpers import board, cid, fid, pid, vid

SVG = "{http://www.w3.org/2000/svg}"


def _tree(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # raises on XML that is not well-formed


def _stacks(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(SVG + "g") if g.get("class") in ("stack", "road-stack")]


def _count(root: ET.Element, cls: str) -> int:
    return sum(1 for e in root.iter() if e.get("class") == cls)


def _royal_position() -> State:
    """Four families after setup (F7: 8 Soldiers and a Castle at V01, V06, V19, V24), then by hand: Aymeric (L01,
    family 0) King with his Guard of 20 in V08, a City (capital of VAL) with 2 Mills and 1 Wine Press owned by
    family 0, holding Bertrand (L02, family 1) prisoner; Isabeau (L13, family 1) Queen with her Guard of 10 in V06;
    Enguerrand (L05, family 0) Prince in V01; a mob of 7 at V10 moved by family 2; Dreux (L04, family 3) waiting
    on the road V05-V06 with 6 Soldiers to assault V06; family 3 keeps 2 Soldiers at V24."""
    st = board(4)
    k, q, pr, b, d = (pid(st, x) for x in ("L01", "L13", "L05", "L02", "L04"))
    st.fam[q], st.loc[q] = 1, vid(st, "V06")
    st.fam[pr], st.loc[pr] = 0, vid(st, "V01")
    st._marry(k, q)
    st.king, st.kg, st.queen, st.qg, st.prince = k, 20, q, 10, pr
    v08 = vid(st, "V08")
    st.city[v08], st.mills[v08], st.presses[v08], st.owner[v08] = True, 2, 1, 0
    st.title[fid(st, "VAL")], st.capital[fid(st, "VAL")] = k, v08
    st.loc[k] = v08
    st.captor[b], st.loc[b] = 0, v08
    st.sold[1][vid(st, "V06")][0] = 8
    st.mob_v, st.mob_n, st.mob_ctrl, st.revolt_card = vid(st, "V10"), 7, 2, cid(st, "B54")
    st.famine[fid(st, "ROU")] = cid(st, "B46")
    st.loc[d], st.onroad[d] = vid(st, "V06"), vid(st, "V05")
    st.sold[3][vid(st, "V24")] = [2, 0, 0, 0]
    st.assaults = [[3, vid(st, "V06"), vid(st, "V05"), -1, 6]]
    return st


def test_svg_is_well_formed_and_draws_every_village_road_and_fief():
    st = _royal_position()
    root = _tree(render_svg(st))
    m = st.game.map
    villages = {g.get("data-village"): g for g in root.iter(SVG + "g") if g.get("class") == "village"}
    assert sorted(villages) == sorted(m.village_ids)
    names = {t.text for t in root.iter(SVG + "text") if t.get("class") == "village-name"}
    assert names == {f"{i} {n}" for i, n in zip(m.village_ids, m.village_names)}
    assert _count(root, "road") == 38  # F6: the default map's roads
    assert {g.get("data-fief") for g in villages.values()} == set(m.fief_ids)
    assert villages["V08"].get("data-owner") == "0" and villages["V06"].get("data-owner") == "1"
    assert villages["V02"].get("data-owner") == "-1"


def test_svg_token_counts_of_a_hand_made_position():
    root = _tree(render_svg(_royal_position()))
    stacks = {(g.get("data-village"), g.get("data-from"), g.get("data-family")): g for g in _stacks(root)}
    # (village, road it waits on, family) -> ordinary Soldiers, Queen's Guard, King's Guard, persons, prisoners
    expect = {("V01", None, "0"): (8, 0, 0, ["L05"], []),
              ("V08", None, "0"): (0, 0, 20, ["L01"], ["L02"]),
              ("V06", None, "1"): (8, 10, 0, ["L13"], []),
              ("V06", "V05", "3"): (6, 0, 0, ["L04"], []),
              ("V19", None, "2"): (8, 0, 0, ["L03"], []),
              ("V24", None, "3"): (2, 0, 0, [], []),
              ("V10", None, "mob"): (7, 0, 0, [], [])}
    assert set(stacks) == set(expect)
    for key, (n, qg, kg, persons, prisoners) in expect.items():
        g = stacks[key]
        assert (int(g.get("data-soldiers")), int(g.get("data-queens-guard")), int(g.get("data-kings-guard"))) \
            == (n, qg, kg), key
        assert [e.get("data-person") for e in g if e.get("class") == "person"] == persons, key
        assert [e.get("data-person") for e in g if e.get("class") == "prisoner"] == prisoners, key
    # improvements: the four setup Castles (V01, V06, V19, V24), the City at V08 with its Mills and Wine Press
    assert (_count(root, "castle"), _count(root, "city"), _count(root, "mill"), _count(root, "press")) == (4, 1, 2, 1)
    text = " ".join(t.text or "" for t in root.iter(SVG + "text"))
    for words in ("King: Aymeric (Family 0), King's Guard 20", "Queen: Isabeau (Family 1)", "Prince: Enguerrand",
                  "VAL Duchy of Valombre (duke): Aymeric (Family 0), capital V08", "Famine",
                  "Mob: 7 Peasants at V10, moved by Family 2", "Family 3 (yellow)"):
        assert words in text, words


def _positions(seed: int, players: int):
    """States along one seeded random game: every 400th, and every state with tokens waiting on a road."""
    rec = play_random(players, seed)
    st = State(rec.game)
    st._settle()
    for i, a in enumerate(rec.actions):
        st.apply_action(a)
        if i % 400 == 0 or any(x[2] >= 0 and x[4] for x in st.assaults):
            yield st


@pytest.mark.parametrize("seed,players", [(1, 6), (4, 5), (9, 3)])
def test_svg_counts_equal_the_states_fields_along_random_games(seed, players):
    seen_road = False
    for n_pos, st in enumerate(_positions(seed, players)):
        if n_pos > 40:
            break
        root = _tree(render_svg(st))
        g, ids, pids = st.game, st.game.map.village_ids, st.game.ruleset.person_ids
        got: dict = {}
        kings_guard = queens_guard = peasants = 0
        persons, prisoners = [], []
        for e in _stacks(root):
            fam = e.get("data-family")
            if fam == "mob":
                peasants += int(e.get("data-soldiers"))
                continue
            key = (e.get("data-village"), e.get("data-from"), int(fam))
            if int(e.get("data-soldiers")):
                got[key] = got.get(key, 0) + int(e.get("data-soldiers"))
            kings_guard += int(e.get("data-kings-guard"))
            queens_guard += int(e.get("data-queens-guard"))
            persons += [(c.get("data-person"), int(c.get("data-family"))) for c in e if c.get("class") == "person"]
            prisoners += [(c.get("data-person"), int(c.get("data-captor"))) for c in e if c.get("class") == "prisoner"]
        want: dict = {}
        for f in range(players):
            for v in range(g.V):
                if sum(st.sold[f][v]):
                    want[(ids[v], None, f)] = sum(st.sold[f][v])
        for a in st.assaults:
            if a[0] != MOB and a[2] >= 0 and a[4]:
                seen_road = True
                key = (ids[a[1]], ids[a[2]], a[0])
                want[key] = want.get(key, 0) + a[4]
        assert got == want
        # F36: a Guard stands with its free leader (the Regent leads the King's during a Regency)
        kg_leader = st.queen if st.regent else st.king
        assert kings_guard == (st.kg if st.kg > 0 and kg_leader >= 0 and st.captor[kg_leader] < 0 else 0)
        assert queens_guard == (st.qg if st.qg > 0 and st.queen >= 0 and st.captor[st.queen] < 0 else 0)
        assert peasants == st.mob_n
        assert sorted(persons) == sorted((pids[p], st.fam[p]) for p in range(g.P)
                                         if st.fam[p] >= 0 and st.captor[p] < 0)
        assert sorted(prisoners) == sorted((pids[p], st.captor[p]) for p in range(g.P)
                                           if st.fam[p] >= 0 and st.captor[p] >= 0)
        assert (_count(root, "castle"), _count(root, "city")) == (sum(st.castle), sum(st.city))
        assert (_count(root, "mill"), _count(root, "press")) == (sum(st.mills), sum(st.presses))
        owners = {e.get("data-village"): int(e.get("data-owner")) for e in root.iter(SVG + "g")
                  if e.get("class") == "village"}
        assert owners == {ids[v]: st.owner[v] for v in range(g.V)}
    assert seen_road or seed != 1  # the six-family game reaches an assault waiting on a road


def test_svg_shows_only_the_given_seats_hand():
    st = _royal_position()
    st.hands[0], st.hands[1] = [cid(st, "B35")], [cid(st, "B36")]
    own = render_svg(st, seat=0)
    assert "B35 assassin" in own and "B36" not in own
    public = render_svg(st)
    assert "B35" not in public and "B36" not in public
    with pytest.raises(ValueError, match="seat"):
        render_svg(st, seat=4)


def test_family_colours_are_distinct_and_each_family_number_is_written():
    assert len(set(FAMILY_COLOURS)) == 6
    st = _royal_position()
    root = _tree(render_svg(st))
    owner_tags = {t.text for t in root.iter(SVG + "text") if t.get("class") == "owner"}
    assert owner_tags == {"F0", "F1", "F2", "F3", "-"}
    bands = {r.get("fill") for r in root.iter(SVG + "rect") if r.get("class") == "owner-band"}
    assert {FAMILY_COLOURS[f] for f in range(4)} <= bands


def test_png_through_cairosvg(tmp_path):
    pytest.importorskip("cairosvg")
    path = tmp_path / "fief2.png"
    data = render_png(_royal_position(), str(path))
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and path.read_bytes() == data


def test_cli_render_a_fief2_record(tmp_path, capsys):
    rec = play_random(4, 2, max_actions=600)
    path = tmp_path / "game.json"
    path.write_text(rec.to_json())
    svg = tmp_path / "pos.svg"
    assert main(["render", str(path), "--at", "300", "--seat", "1", "--svg", str(svg)]) == 0
    root = _tree(svg.read_text())
    at300 = rec.replay(300)
    assert {g.get("data-village") for g in root.iter(SVG + "g") if g.get("class") == "village"} \
        == set(at300.game.map.village_ids)
    assert "Hand of Family 1: " in svg.read_text()
    assert main(["render", str(path)]) == 0
    assert "Fief 2 - turn" in capsys.readouterr().out  # the text picture of the final position
    assert main(["render", str(path), "--at", str(len(rec.actions) + 1)]) == 2
    assert "--at: expected an action count" in capsys.readouterr().err
    assert main(["render", str(path), "--seat", "4", "--svg", str(svg)]) == 2


def test_play_picture_command_writes_the_board(tmp_path):
    fief2_game = get_game("fief2")
    out, svg = io.StringIO(), tmp_path / "board.svg"
    answers = iter([f"picture {svg}", "picture", f"picture {tmp_path / 'no' / 'such' / 'dir.svg'}", "quit"])
    bots = [None, fief2_game.make_bot("random", 1), fief2_game.make_bot("random", 2)]
    session = Fief2Session(fief2_game.new_state(3, 7, turn_limit=1), 0, bots, 7, inp=lambda _: next(answers),
                           out=out)
    assert session.run() == 1
    text = out.getvalue()
    assert f"wrote {svg}" in text and "picture FILE: the board as SVG" in text and "picture: " in text
    root = _tree(svg.read_text())
    assert sum(1 for g in root.iter(SVG + "g") if g.get("class") == "village") == 24
    assert "Hand of Family 0: " in svg.read_text()
