"""Fief 2 rules, one or more tests per ruling (F1-F53), on positions built by hand."""

from __future__ import annotations

import pytest

from engine.errors import DataFileError
from fief2 import load_map, load_ruleset, new_game
from fief2.data import map_from_dict, ruleset_from_dict
from fief2.state import (CHANCE, COMBAT, FR_BATTLE, FR_ELECT, FR_MOVE, FR_NEGO, FR_PURCHASE, INCOME, MOB, OVER,
                         END_TURN, B_START)

from fief2_helpers import act, at_card_turn, board, cid, fid, pid, set_up, texts, vid


# ---------------------------------------------------------------------------------------------------- B
def test_f2_blue_deck_is_57_printed_counts():
    rs = load_ruleset()
    kinds = [c.kind for c in rs.cards]
    assert len(kinds) == 57
    expect = {"lord": 12, "lady": 4, "darc": 1, "bishop": 4, "tithe": 4, "tax": 5, "escape": 2, "plague": 2,
              "assassin": 1, "justice": 1, "bad_weather": 3, "good_weather": 6, "famine": 2, "good_harvest": 6,
              "peasant_revolt": 4}
    assert {k: kinds.count(k) for k in expect} == expect
    assert [c.bishopric_id for c in rs.cards if c.kind == "bishop"] == ["HAU", "LAN", "URV", "RIB"]


def test_f3_red_cards_and_one_title_per_fief():
    rs, m = load_ruleset(), load_map()
    assert rs.red_cards == {"cardinal": 3, "baron": 2, "count": 2, "duke": 2, "king": 1, "queen": 1, "prince": 1,
                            "first_player": 1}
    assert sorted(m.fief_rank) == ["baron", "baron", "count", "count", "duke", "duke"]


def test_f4_sixteen_persons_twelve_men():
    rs = load_ruleset()
    assert len(rs.person_ids) == 16 and sum(rs.person_male) == 12
    assert rs.person_names[0] == "Aymeric" and rs.person_names[15] == "Sibylle"


def test_f6_default_map_facts():
    m = load_map()
    assert m.num_villages == 24 and len(m.roads) == 38
    assert [len(v) for v in m.fief_villages] == [5, 4, 5, 3, 4, 3]
    assert all(len(v) == 6 for v in m.bishopric_villages)
    v08, v15 = m.village_ids.index("V08"), m.village_ids.index("V15")
    assert v15 in m.adj[v08]


def test_f6_map_errors_name_the_field():
    d = load_map().to_dict()
    bad = dict(d, fiefs=[dict(d["fiefs"][0], villages=["V99", "V02", "V07", "V08", "V13"])] + d["fiefs"][1:])
    with pytest.raises(DataFileError, match=r"fiefs\[0\]\.villages\[0\]: unknown village 'V99'"):
        map_from_dict(bad, "m.json")
    bad = dict(d, roads=d["roads"][:-1] + [["V01", "V01"]])
    with pytest.raises(DataFileError, match=r"roads\[37\]"):
        map_from_dict(bad, "m.json")
    bad = dict(d, colour="x")
    with pytest.raises(DataFileError, match="colour: unknown field"):
        map_from_dict(bad, "m.json")


def test_f5_ruleset_errors_name_the_field():
    d = load_ruleset().to_dict()
    with pytest.raises(DataFileError, match=r"prices\.mill: expected a multiple of money_unit"):
        ruleset_from_dict(dict(d, prices=dict(d["prices"], mill=250)), source="r.json")
    cards = list(d["blue_cards"])
    cards[0] = dict(cards[0], kind="dragon")
    with pytest.raises(DataFileError, match=r"blue_cards\[0\]\.kind: unknown card kind"):
        ruleset_from_dict(dict(d, blue_cards=cards), source="r.json")
    with pytest.raises(DataFileError, match=r"options\.scored_turns"):
        ruleset_from_dict(dict(d, options={"scored_turns": 12, "turn_limit": 30}), source="r.json")
    with pytest.raises(DataFileError, match=r"limits\.peasants: expected an integer"):
        ruleset_from_dict(dict(d, limits=dict(d["limits"], peasants=10 ** 9)), source="r.json")


def test_f7_setup_a_man_on_an_empty_village():
    st = new_game(3)
    assert all(t.startswith("person L") for t in texts(st))
    assert len(texts(st)) == 12  # only the 12 men
    act(st, "person L01")
    act(st, "village V01")
    assert "village V01 Aubignac" not in texts(st)  # no longer empty
    v = vid(st, "V01")
    assert st.sold[0][v][0] == 8 and st.castle[v] and st.owner[v] == 0 and st.cash[0] == 300


def test_f10_deal_to_three_uniform_over_the_deck():
    st = set_up(4)
    assert st.current_player() == CHANCE
    outs = st.chance_outcomes()
    assert len(outs) == 57 - 4 and abs(sum(p for _, p in outs) - 1) < 1e-9
    while st.is_chance_node():
        st.apply_action(st.legal_actions()[0])
    assert all(len(h) == 3 for h in st.hands)


def test_f11_give_only_to_a_family_united_by_marriage():
    st = board()
    gw = cid(st, "B40")
    at_card_turn(st, 0, [gw])
    st.hands[1] = []
    assert not any(t.startswith("give") for t in texts(st))
    st.fam[pid(st, "L13")], st.loc[pid(st, "L13")] = 1, vid(st, "V06")
    st._marry(pid(st, "L01"), pid(st, "L13"))
    st._legal = None
    act(st, "give B40 good weather to family 1")
    assert st.current_player() == 1 and texts(st) == ["accept", "refuse"]
    act(st, "accept")
    assert gw in st.hands[1] and gw not in st.hands[0]
    assert st.stack[-1][2] == 2  # F11: the action is spent


def test_f47_empty_hand_still_gets_a_card_turn():
    st = board()
    at_card_turn(st, 0, [])
    assert texts(st) == ["end"]


def test_f12_bishop_only_on_an_unmarried_man_of_the_family():
    st = board()
    at_card_turn(st, 0, [cid(st, "B18")])
    act(st, "play B18 bishop HAU")
    assert texts(st) == ["person L01 Aymeric"]
    act(st, "person L01")
    assert st.bishop[pid(st, "L01")] == 0


def test_f13_new_person_goes_to_own_castle_first():
    st = board()
    at_card_turn(st, 0, [cid(st, "B05")])
    act(st, "play B05 lord Enguerrand")
    assert texts(st) == ["village V01 Aubignac"]  # tier 1: own Castle villages
    act(st, "village V01")
    assert st.fam[pid(st, "L05")] == 0 and st.loc[pid(st, "L05")] == vid(st, "V01")


def test_f12_four_persons_at_most():
    st = board()
    for i, p in enumerate(("L05", "L06", "L07")):
        st.fam[pid(st, p)], st.loc[pid(st, p)] = 0, vid(st, "V01")
    at_card_turn(st, 0, [cid(st, "B08")])
    assert not any(t.startswith("play") for t in texts(st))
    st.fam[pid(st, "L07")] = -1
    st._legal = None
    assert "play B08 lord Hugues" in texts(st)


def test_f14_plague_halves_soldiers_and_rolls_for_persons():
    st = board()
    v = vid(st, "V01")
    st.sold[0][v] = [7, 0, 0, 0]
    at_card_turn(st, 0, [cid(st, "B33")])
    act(st, "play B33 plague")
    act(st, "fief VAL")
    assert sum(st.sold[0][v]) == 4  # 7 - floor(7/2)
    assert st.is_chance_node()
    st.apply_action(st.game.layout.a("die", 2))  # a 3: dies
    assert st.fam[pid(st, "L01")] == -1


def test_f15_justice_window_pass_only_without_the_card():
    st = board()
    at_card_turn(st, 0, [cid(st, "B35")])
    st.hands[1], st.hands[2] = [], [cid(st, "B36")]
    act(st, "play B35 assassin")
    act(st, "person L02")
    assert st.fam[pid(st, "L02")] == -1
    assert st.current_player() == 1 and texts(st) == ["end"]  # F47
    act(st, "end")
    assert st.current_player() == 2 and "person L01 Aymeric" in texts(st)
    act(st, "person L01")
    assert st.fam[pid(st, "L01")] == -1


def test_f16_bad_weather_stops_steps_out_of_the_fief():
    st = board()
    st.bad_weather[fid(st, "VAL")] = cid(st, "B37")
    st.stack = [[FR_MOVE, 0, 0, 0]]
    st._legal = None
    assert not any(t.startswith("group") for t in texts(st))


def test_f17_revolt_on_an_empty_village_takes_it():
    st = board()
    y = fid(st, "ROU")
    st.famine[y] = cid(st, "B46")
    v = vid(st, "V09")
    st.castle[v], st.mills[v] = True, 2
    at_card_turn(st, 0, [cid(st, "B54")])
    act(st, "play B54 peasant revolt")
    act(st, "fief ROU")
    act(st, "village V09")
    for d in (6, 6, 6):
        st.apply_action(st.game.layout.a("die", d - 1))
    assert st.mob_v == v and st.mob_n == 18 and st.mob_ctrl == 0
    assert not st.castle[v] and st.mills[v] == 0


def test_f20_income_properties_and_famine():
    st = board()
    v = vid(st, "V01")
    st.mills[v], st.presses[v] = 1, 1
    st.phase, st.stack = INCOME, []
    st._settle()
    assert st.cash[0] == 300 + 100 + 200 + 100
    st.phase, st.stack = INCOME, []
    st.famine[fid(st, "VAL")] = cid(st, "B46")
    st._settle()
    assert st.cash[0] == 700 + 100  # F16: the Castle still earns


def test_f20_tax_pays_per_village_without_enemy_soldiers():
    st = board()
    y = fid(st, "AUB")
    p = pid(st, "L01")
    st.title[y], st.capital[y] = p, vid(st, "V15")
    st.city[vid(st, "V15")] = True
    st.tax[y] = cid(st, "B26")
    st.sold[1][vid(st, "V14")][0] = 1  # an enemy soldier
    before = st.cash[0]
    st.phase, st.stack = INCOME, []
    st._settle()
    assert st.cash[0] - before >= 2 * 200
    assert st.tax[y] == -1


def test_f22_buy_a_soldier_on_own_castle():
    st = board()
    st.stack = [[FR_PURCHASE, 0, -1, 0, -1, -1]]
    st._legal = None
    act(st, "buy soldier")
    act(st, "village V01")
    assert st.cash[0] == 200 and st.sold[0][vid(st, "V01")][0] == 9


def test_f23_enfeoffment_makes_a_city_and_a_title():
    st = board()
    y = fid(st, "AUB")
    for name in ("V14", "V15", "V16"):
        v = vid(st, name)
        st.owner[v], st.sold[0][v][0] = 0, 1
    st.castle[vid(st, "V15")] = True
    st.cash[0] = 600
    st.stack = [[FR_PURCHASE, 0, -1, 0, -1, -1]]
    st._legal = None
    act(st, "buy fief title")
    act(st, "fief AUB")
    act(st, "person L01")
    assert st.title[y] == pid(st, "L01") and st.city[vid(st, "V15")] and not st.castle[vid(st, "V15")]
    assert st.capital[y] == vid(st, "V15") and st.cash[0] == 0


def test_f24_a_title_passes_only_if_the_giver_keeps_a_crown_as_high():
    st = board()
    a, b = pid(st, "L01"), pid(st, "L05")
    st.fam[b], st.loc[b] = 0, vid(st, "V01")
    st.title[fid(st, "AUB")] = a
    assert st._transferable(0, b) == []  # his only crown
    st.title[fid(st, "FER")] = a
    assert sorted(st._transferable(0, b)) == [fid(st, "AUB"), fid(st, "FER")]  # two Baronies: either
    st.title[fid(st, "FER")] = -1
    st.title[fid(st, "VAL")] = a
    assert st._transferable(0, b) == [fid(st, "AUB")]  # a Duke keeps his Duchy


def _move_turn(st, f=0):
    st.stack = [[FR_MOVE, f, 0, 0]]
    st.refused = []
    st._legal = None


def test_f25_a_step_spends_one_of_two_moves():
    st = board()
    _move_turn(st)
    act(st, "group at V01")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "soldiers used 0: 5")
    act(st, "village V02")
    p, v1, v2 = pid(st, "L01"), vid(st, "V01"), vid(st, "V02")
    assert st.loc[p] == v2 and st.used[p] == 1 and st.sold[0][v2][1] == 5 and st.sold[0][v1][0] == 3
    act(st, "group at V02")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "soldiers used 1: 5")
    act(st, "village V08")
    assert st.used[p] == 2 and "group at V08 Hautefort" not in texts(st)  # allowance 2 spent
    act(st, "end")
    assert st.owner[vid(st, "V08")] == 0  # F9.3: checked at the end of the movement turn


def test_f26_f53_4_refused_consent_turns_back_without_cost():
    st = board()
    p1 = pid(st, "L02")
    v2 = vid(st, "V02")
    st.loc[p1] = v2
    st.sold[1][vid(st, "V06")][0] = 0
    st.sold[1][v2][0] = 3
    st.owner[v2] = 1
    _move_turn(st)
    act(st, "group at V01")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "soldiers used 0: 0")
    act(st, "village V02")
    assert set(texts(st)) == {"ask consent", "assault"}
    act(st, "ask consent")
    assert st.current_player() == 1
    act(st, "refuse")
    assert set(texts(st)) == {"turn back", "assault"}
    act(st, "turn back")
    assert st.used[pid(st, "L01")] == 0 and v2 in st.refused
    act(st, "group at V01")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "soldiers used 0: 0")
    assert "village V02 Belves" not in texts(st)


def test_f26_assault_waits_on_the_road_then_f29_battle():
    st = board()
    p0, p1 = pid(st, "L01"), pid(st, "L02")
    v1, v2 = vid(st, "V01"), vid(st, "V02")
    st.loc[p1] = v2
    st.sold[1][vid(st, "V06")][0] = 0
    st.sold[1][v2][0] = 1
    st.owner[v2] = 1
    _move_turn(st)
    act(st, "group at V01")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "soldiers used 0: 8")
    act(st, "village V02")
    act(st, "assault")
    assert st.loc[p0] == v2 and st.onroad[p0] == v1 and st.assaults[0][4] == 8
    assert st.current_player() == 1  # F27.1: evacuation offered
    act(st, "end")
    act(st, "end")  # end of family 0's movement
    st.stack = []
    st.phase, st.step = COMBAT, 0
    st._settle()
    assert st.stack[-1][0] == FR_BATTLE and st.current_player() == 1
    assert set(texts(st)) == {"fight on", "retreat", "surrender"}
    act(st, "surrender")
    assert st.captor[p1] == 0 and st.owner[v2] == 0 and st.onroad[p0] == -1


def _guests_in_a_castle(st):
    """Family 0's L01 with 2 Soldiers stands in V02, a Castle village owned and occupied by family 1 (L02 and 3
    Soldiers); family 0 keeps 6 Soldiers at home in V01."""
    v1, v2 = vid(st, "V01"), vid(st, "V02")
    st.loc[pid(st, "L01")] = st.loc[pid(st, "L02")] = v2
    st.sold[0][v1], st.sold[0][v2] = [6, 0, 0, 0], [2, 0, 0, 0]
    st.sold[1][vid(st, "V06")], st.sold[1][v2] = [0, 0, 0, 0], [3, 0, 0, 0]
    st.castle[v2], st.owner[v2] = True, 1
    return v2


def _step_out_of_v02(st, to="V03"):
    act(st, "group at V02")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "soldiers used 0: 2")
    act(st, f"village {to}")


def test_f26_4_exit_refused_step_not_made_costs_nothing_and_not_asked_again():
    st = board()
    v2 = _guests_in_a_castle(st)
    p0 = pid(st, "L01")
    _move_turn(st)
    _step_out_of_v02(st)
    assert st.current_player() == 1 and set(texts(st)) == {"accept", "refuse"}  # the Castle's owner answers
    assert st.loc[p0] == v2  # nothing moved before the answer
    act(st, "refuse")
    assert st.current_player() == 0
    assert st.loc[p0] == v2 and st.used[p0] == 0 and st.sold[0][v2] == [2, 0, 0, 0]  # not made, no cost
    assert not any(t.startswith("group at V02") for t in texts(st))  # P may not ask to leave W again this turn
    assert "group at V01 Aubignac" not in texts(st)  # (no person at home: nothing else to move)
    act(st, "end")
    st.phase, st.stack = END_TURN, []
    st._settle()  # a new turn: the refusal was for one turn only
    _move_turn(st)
    assert "group at V02 Belves" in texts(st)


def test_f26_4_exit_granted_the_step_is_made():
    st = board()
    v3 = vid(st, "V03")
    _guests_in_a_castle(st)
    p0 = pid(st, "L01")
    _move_turn(st)
    _step_out_of_v02(st)
    act(st, "accept")
    assert st.loc[p0] == v3 and st.used[p0] == 1 and st.sold[0][v3] == [0, 2, 0, 0]
    assert st.current_player() == 0 and st.stack[-1][0] == FR_MOVE


@pytest.mark.parametrize("case", ["open village", "owner not there", "own castle"])
def test_f26_4_no_exit_consent_outside_an_occupied_castle_or_city_of_another(case):
    st = board()
    v2, v3 = _guests_in_a_castle(st), vid(st, "V03")
    p0 = pid(st, "L01")
    if case == "open village":
        st.castle[v2] = False
    elif case == "owner not there":
        st.loc[pid(st, "L02")], st.sold[1][v2] = vid(st, "V06"), [0, 0, 0, 0]
    else:
        st.owner[v2] = 0
    _move_turn(st)
    _step_out_of_v02(st)
    assert st.loc[p0] == v3 and st.current_player() == 0  # moved at once, nobody asked


def _inside_assault_by_the_owner(st):
    """Family 1 turns on its guests (F26.5) in its Castle V02; family 0 is offered evacuation (F27.1)."""
    _move_turn(st, 1)
    act(st, "inside assault at V02 Belves on family 0")
    assert st.current_player() == 0 and "group at V02 Belves" in texts(st)


def test_f26_4_evacuation_step_needs_exit_consent():
    st = board()
    v2 = _guests_in_a_castle(st)
    _inside_assault_by_the_owner(st)
    act(st, "group at V02")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "soldiers used 0: 2")
    act(st, "village V03")
    assert st.current_player() == 1 and set(texts(st)) == {"accept", "refuse"}
    act(st, "refuse")
    assert st.current_player() == 0 and texts(st) == ["end"]  # no further request to leave this turn
    assert st.loc[pid(st, "L01")] == v2


def test_f26_4_retreat_needs_exit_consent():
    st = board()
    v2 = _guests_in_a_castle(st)
    _inside_assault_by_the_owner(st)
    act(st, "end")  # no evacuation
    act(st, "end")  # family 1's movement ends
    st.stack, st.phase, st.step = [], COMBAT, 0
    st._settle()
    assert st.stack[-1][0] == FR_BATTLE and st.current_player() == 0
    act(st, "retreat")
    act(st, "village V03")
    assert st.current_player() == 1 and set(texts(st)) == {"accept", "refuse"}
    act(st, "refuse")
    assert texts(st) == ["stop"] and st.loc[pid(st, "L01")] == v2
    act(st, "stop")
    assert st.current_player() == 0 and set(texts(st)) == {"fight on", "surrender"}  # retreat no longer offered


def test_f26_4_retreat_granted_leaves_with_every_token():
    st = board()
    v3 = vid(st, "V03")
    _guests_in_a_castle(st)
    _inside_assault_by_the_owner(st)
    act(st, "end")
    act(st, "end")
    st.stack, st.phase, st.step = [], COMBAT, 0
    st._settle()
    act(st, "retreat")
    act(st, "village V03")
    act(st, "accept")
    assert st.loc[pid(st, "L01")] == v3 and sum(st.sold[0][v3]) == 2


def _ransomed_in_the_captors_castle(st, soldiers=0):
    """L01 (family 0) is a prisoner of family 1 in V02, a Castle village family 1 owns and occupies (L02, 3
    Soldiers); family 0 pays 100 for him in the Negotiations (F42) and family 1 accepts. Family 0 may have some of
    its own Soldiers there as guests. Then family 0's movement turn of the next turn begins."""
    v1, v2 = vid(st, "V01"), vid(st, "V02")
    p0 = pid(st, "L01")
    _guests_in_a_castle(st)
    st.sold[0][v1], st.sold[0][v2] = [8 - soldiers, 0, 0, 0], [soldiers, 0, 0, 0]
    st.captor[p0] = 1
    st.stack = [[FR_NEGO, 0, 0, 0]]
    st._legal = None
    act(st, "ransom L01")
    act(st, "amount 100")
    assert st.current_player() == 1
    act(st, "accept")
    assert st.captor[p0] == -1 and st.cash == [200, 400, 300]
    _move_turn(st)
    return v2


def test_f35_4_safe_conduct_leaves_the_former_captors_castle_without_consent():
    st = board()
    _ransomed_in_the_captors_castle(st)
    p0, v3 = pid(st, "L01"), vid(st, "V03")
    st.owner[v3], st.sold[1][v3] = 1, [1, 0, 0, 0]  # the next village is the former captor's too, occupied
    act(st, "group at V02")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "village V03")
    assert st.loc[p0] == v3 and st.current_player() == 0  # left and entered: nobody was asked
    act(st, "group at V03")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "village V04")
    assert st.loc[p0] == vid(st, "V04") and st.used[p0] == 2


def test_f35_4_safe_conduct_is_the_persons_not_its_soldiers():
    st = board()
    _ransomed_in_the_captors_castle(st, soldiers=2)
    act(st, "group at V02")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "soldiers used 0: 2")
    act(st, "village V03")
    assert st.current_player() == 1 and set(texts(st)) == {"accept", "refuse"}  # Soldiers need exit consent


def test_f35_4_safe_conduct_group_may_not_declare_an_assault():
    st = board()
    v2 = _ransomed_in_the_captors_castle(st)
    assert not any(t.startswith("inside assault at V02") for t in texts(st))  # not on the former captor there
    v3 = vid(st, "V03")
    st.owner[v3], st.sold[2][v3] = 2, [4, 0, 0, 0]  # a third family's village: consent is needed as usual
    act(st, "group at V02")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "village V03")
    assert texts(st) == ["ask consent"]
    act(st, "ask consent")
    act(st, "refuse")
    assert texts(st) == ["turn back"]
    act(st, "turn back")
    assert st.loc[pid(st, "L01")] == v2 and st.assaults == []


def test_f35_4_safe_conduct_ends_with_the_familys_next_movement_turn():
    st = board()
    _ransomed_in_the_captors_castle(st)
    act(st, "end")
    assert st.conduct[pid(st, "L01")] == -1
    _move_turn(st)
    act(st, "group at V02")
    act(st, "person L01")
    act(st, "persons done")
    act(st, "village V03")
    assert st.current_player() == 1  # exit consent again (F26.4)


def test_f35_4_safe_conduct_leaves_after_the_familys_exit_was_refused():
    st = board()
    v2 = _ransomed_in_the_captors_castle(st, soldiers=2)
    p5 = pid(st, "L05")
    st.fam[p5], st.loc[p5] = 0, v2
    act(st, "group at V02")
    act(st, "person L05")
    act(st, "persons done")
    act(st, "soldiers used 0: 2")
    act(st, "village V03")
    act(st, "refuse")  # F26.4: family 0 may not ask to leave V02 again this turn
    act(st, "group at V02")
    assert texts(st) == ["person L01 Aymeric"]  # only the safe-conducted person, who needs no consent
    act(st, "person L01")
    act(st, "persons done")
    assert texts(st)[0].startswith("village")  # no Soldiers or prisoners offered: they would need consent
    act(st, "village V03")
    assert st.loc[pid(st, "L01")] == vid(st, "V03") and st.loc[p5] == v2 and sum(st.sold[0][v2]) == 2


def _road_assault_on_a_castle(st, garrison, first_owner, defence):
    """Family 0 (L01 and 6 Soldiers) waits on the road V01-V02 in a road assault on V02, a Castle village owned by
    family 1; families 1 and 2 are allied. ``defence`` maps a family to its Soldiers in V02 (with its person: L02
    for family 1, L03 for family 2); ``garrison`` and ``first_owner`` are what stood in V02, and who owned it, when
    that assault was declared (F30.1, F30.5). Returns the state at the first decision of the Combat phase."""
    v1, v2 = vid(st, "V01"), vid(st, "V02")
    p0 = pid(st, "L01")
    st.loc[p0], st.onroad[p0] = v2, v1
    st.sold[0][v1] = [2, 0, 0, 0]
    for f, person, home in ((1, "L02", "V06"), (2, "L03", "V19")):
        st.sold[f][vid(st, home)] = [0, 0, 0, 0]
        if f in defence:
            st.loc[pid(st, person)] = v2
            st.sold[f][v2] = [defence[f], 0, 0, 0]
    st.castle[v2], st.owner[v2] = True, 1
    st.allied[1][2] = st.allied[2][1] = True
    st.assaults = [[0, v2, v1, -1, 6]]
    st.stamp[v2], st.garrison[v2], st.first_owner[v2] = 1, sum(1 << f for f in garrison), first_owner
    st.stack, st.phase, st.step = [], COMBAT, 0
    st._settle()
    return v2


def _roll(st, *faces):
    for d in faces:
        assert st.is_chance_node()
        st.apply_action(st.game.layout.a("die", d - 1))


def test_f30_5_lone_defender_that_did_not_own_the_village_is_unprotected():
    # F30.5: family 1 stood in V02 but did not own it when the assault was declared, and defends alone: Open row
    st = board()
    v2 = _road_assault_on_a_castle(st, garrison=(1,), first_owner=-1, defence={1: 2})
    act(st, "fight on")  # family 1
    act(st, "fight on")  # family 0, the attacker
    _roll(st, 1, 3, 3)  # defence: force 3, one die; attack: force 7, two dice summing 6
    assert sum(st.sold[1][v2]) == 0 and st.fam[pid(st, "L02")] == -1  # 6 pips // 2 = 3 losses: all three


def test_f53_17_combined_defence_protected_while_a_garrison_family_leads():
    # family 1 leads without having owned V02 at the first assault (F30.5 alone: Open row); family 2 joins; both
    # stood there: F53.17 gives the combined defence the Castle's protection
    st = board()
    v2 = _road_assault_on_a_castle(st, garrison=(1, 2), first_owner=-1, defence={1: 1, 2: 1})
    assert st.current_player() == 2
    act(st, "join defence")
    act(st, "fight on")  # family 1
    act(st, "fight on")  # family 2
    act(st, "fight on")  # family 0
    _roll(st, 1, 3, 3)  # defence: force 4, one die; attack: two dice summing 6
    # Castle row: 6 // 3 = 2 losses, one each (F33.2: most fighting tokens, ties to the leader); no person dies
    assert sum(st.sold[1][v2]) == 0 and sum(st.sold[2][v2]) == 0
    assert st.fam[pid(st, "L02")] == 1 and st.fam[pid(st, "L03")] == 2


def test_f53_17_protection_follows_the_garrison_family_that_leads_after_a_retreat():
    # family 1 leads but was not in V02 at the first assault (not protected); family 2, which was, joins. Family 1
    # retreats: family 2 now leads the defence, protected (F53.17)
    st = board()
    v2, v3 = _road_assault_on_a_castle(st, garrison=(2,), first_owner=-1, defence={1: 1, 2: 2}), vid(st, "V03")
    act(st, "join defence")
    act(st, "retreat")  # family 1
    act(st, "village V03")
    assert st.loc[pid(st, "L02")] == v3 and st.current_player() == 2
    act(st, "fight on")  # family 2, now leading
    act(st, "fight on")  # family 0
    _roll(st, 1, 3, 3)  # defence: force 3, one die; attack: two dice summing 6
    assert sum(st.sold[2][v2]) == 0 and st.fam[pid(st, "L03")] == 2  # Castle row: 2 losses, the Soldiers only


def test_f28_dice_by_force_and_losses_per_pips():
    st = board()
    assert [st.dice_for(f) for f in (0, 1, 6, 7, 12, 13, 40)] == [0, 1, 1, 2, 2, 3, 3]
    pips = st.game.ruleset.pips_per_loss
    assert (18 // pips["open"], 18 // pips["castle"], 18 // pips["city"]) == (9, 6, 4)
    assert [n // pips["city"] for n in range(1, 12)] == [0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]  # the printed row


def test_f1_force_of_persons():
    st = board()
    lady = pid(st, "L13")
    st.fam[lady], st.loc[lady] = 0, vid(st, "V01")
    assert st.force_of_person(pid(st, "L01")) == 1 and st.force_of_person(lady) == 0
    st.darc[lady] = True
    assert st.force_of_person(lady) == 6
    st.captor[lady] = 1
    assert st.force_of_person(lady) == 0


def test_f37_f38_death_makes_title_pending_then_inherited():
    st = board()
    a, b = pid(st, "L01"), pid(st, "L05")
    st.fam[b], st.loc[b] = 0, vid(st, "V01")
    y = fid(st, "AUB")
    st.title[y] = a
    st._kill([a])
    assert st.pending[y] == 0 and st.title[y] == -1 and st.fief_family(y) == 0
    st.phase, st.step, st.stack = 6, 0, []  # negotiation
    st._settle()
    assert st.title[y] == b


def test_f38_no_heir_no_king_retained_then_first_new_person():
    st = board()
    a = pid(st, "L01")
    y = fid(st, "AUB")
    st.title[y] = a
    st._kill([a])
    st.phase, st.step, st.stack = 6, 0, []
    st._settle()
    assert st.retained[y] == 0
    at_card_turn(st, 0, [cid(st, "B05")])
    act(st, "play B05 lord Enguerrand")
    act(st, "village")
    assert st.title[y] == pid(st, "L05")


def test_f39_king_dies_prince_succeeds_queen_regent():
    st = board()
    k, q, pr = pid(st, "L01"), pid(st, "L13"), pid(st, "L05")
    for p in (q, pr):
        st.fam[p], st.loc[p] = 0, vid(st, "V01")
    st._marry(k, q)
    st.king, st.kg, st.turn = k, 20, 3
    st._marry(k, q)
    st.queen, st.qg = q, 10
    st.prince = pr
    st._kill([k])
    assert st.king == pr and st.prince == -1 and st.regent and st.kg_leader() == q
    assert st.regency_end == 3 + 3


def test_f44_king_marries_queen_crowned():
    st = board()
    k, w = pid(st, "L01"), pid(st, "L13")
    st.fam[w], st.loc[w] = 1, vid(st, "V06")
    st.king, st.kg = k, 20
    st._marry(k, w)
    assert st.queen == w and st.qg == 10 and st.united(0, 1)


def test_f44_bishops_and_darc_cannot_marry():
    st = board()
    w = pid(st, "L13")
    st.fam[w], st.loc[w] = 1, vid(st, "V06")
    st.bishop[pid(st, "L01")] = 0
    assert not st._marriageable(pid(st, "L01"))
    st.darc[w] = True
    assert not st._marriageable(w)


def _crown(st, p, fief):
    st.title[fid(st, fief)] = p


def test_f45_election_three_votes_and_two_bishops():
    st = board(4)
    for i, (p, f) in enumerate((("L05", 0), ("L06", 1), ("L07", 2), ("L08", 3))):
        st.fam[pid(st, p)], st.loc[pid(st, p)] = f, vid(st, "V01")
    _crown(st, pid(st, "L01"), "AUB")
    _crown(st, pid(st, "L02"), "FER")
    _crown(st, pid(st, "L03"), "ROU")
    st.bishop[pid(st, "L06")], st.bishop[pid(st, "L07")] = 0, 1
    st.phase, st.step, st.stack = 6, 2, []
    st._settle()
    assert st.stack[-1][0] == FR_ELECT and st.current_player() == 0
    act(st, "candidate L01")
    act(st, "end")
    act(st, "end")
    act(st, "end")
    votes = 0
    while st.stack and st.stack[-1][0] == FR_ELECT and st.stack[-1][1] == 1:
        act(st, "vote L01")
        votes += 1
    assert votes == 5  # L01, L02, L06 (Bishop), L03, L07 (Bishop)
    while st.stack and st.stack[-1][0] == FR_ELECT:
        act(st, "accept")
    assert st.king == pid(st, "L01") and st.kg == 20


def test_f48_solo_victory_needs_a_crown_and_three_fiefs():
    st = board()
    k = pid(st, "L01")
    st.king = k
    for y in ("AUB", "FER"):
        _crown(st, k, y)
    assert st._victors() == []
    st.retained[fid(st, "ROU")] = 0
    assert st._victors() == [0]


def test_f49_family_without_tokens_is_eliminated():
    st = board()
    st.sold[2] = [[0, 0, 0, 0] for _ in range(st.game.V)]
    st._kill([pid(st, "L03")])
    st.phase, st.step, st.stack = END_TURN, 0, []
    st._settle()
    assert not st.alive[2] and st.owner[vid(st, "V19")] == -1


def _regency_and_an_heirless_family(st, prince=True):
    """Family 2 has no token left and retains the Barony AUB (F38.4). L13 (family 1) is Queen and Regent; with
    ``prince`` the young King is L05 of family 0, else there is no King. Family 1 holds FER and BEL (L02)."""
    q, k, p2 = pid(st, "L13"), pid(st, "L05"), pid(st, "L03")
    st.fam[q], st.loc[q] = 1, vid(st, "V06")
    st.queen, st.qg, st.regent, st.kg = q, 10, True, 20
    st.turn, st.regency_end = 3, 6
    if prince:
        st.fam[k], st.loc[k], st.king = 0, vid(st, "V01"), k
    st.fam[p2], st.loc[p2] = -1, -1
    st.sold[2] = [[0, 0, 0, 0] for _ in range(st.game.V)]
    st.retained[fid(st, "AUB")] = 2
    st.title[fid(st, "FER")] = st.title[fid(st, "BEL")] = pid(st, "L02")
    st.phase, st.step, st.stack = END_TURN, 0, []
    st._settle()
    assert not st.alive[2]


def test_f49_retained_titles_regent_family_chooses_the_young_king():
    st = board()
    _regency_and_an_heirless_family(st)
    assert st.current_player() == 1 and texts(st) == ["person L05 Enguerrand", "person L13 Isabeau"]
    act(st, "person L05")
    y = fid(st, "AUB")
    assert st.title[y] == pid(st, "L05") and st.fief_family(y) == 0
    assert all(st.owner[v] == 0 for v in st.game.map.fief_villages[y])  # F38: the fief's villages follow
    assert not st.is_terminal() and st.turn == 4  # the end of turn went on after the choice


def test_f49_retained_titles_regent_herself_chosen_before_the_victory_check():
    st = board()
    _regency_and_an_heirless_family(st)
    act(st, "person L13")
    # F48 (checked after F49): family 1 holds the Queen card and now three fiefs, so it wins at the end of this turn
    assert st.title[fid(st, "AUB")] == pid(st, "L13") and st.is_terminal() and st.winners == [1]


def test_f49_retained_titles_regency_without_prince_go_to_the_regent():
    st = board()
    _regency_and_an_heirless_family(st, prince=False)  # nobody else to choose: F38.3's only heir
    assert st.title[fid(st, "AUB")] == pid(st, "L13") and st.winners == [1]


def test_f50_scored_game_tallies_every_five_turns_and_ends():
    st = board(scored_turns=10)
    st.turn = 5
    st.phase, st.stack = END_TURN, []
    st._settle()
    assert st.tally == [300 // 50] * 3
    st.stack, st.turn, st.phase = [], 10, END_TURN
    st._settle()
    assert st.phase == OVER and sorted(st.winners) == [0, 1, 2] and st.returns() == [1 / 3] * 3


def test_f51_turn_limit_decided_by_power():
    st = board(turn_limit=1)
    st.cash[1] = 1000
    st.phase, st.stack, st.turn = END_TURN, [], 1
    st._settle()
    assert st.is_terminal() and st.winners == [1] and st.returns() == [0.0, 1.0, 0.0]


def test_f42_gift_moves_money_at_once():
    st = board()
    st.stack = [[FR_NEGO, 0, 0, 0]]
    st._legal = None
    act(st, "gift to family 2")
    act(st, "amount 200")
    assert st.cash[0] == 100 and st.cash[2] == 500


def test_f43_alliance_accepted_and_ended_by_assault():
    st = board()
    st.stack = [[FR_NEGO, 0, 0, 0]]
    st._legal = None
    act(st, "propose alliance to family 1")
    act(st, "accept")
    assert st.allied[0][1] and st.allied[1][0]
    v = vid(st, "V06")
    st.stack = []
    st._declare(0, v, vid(st, "V05"), 1)
    assert not st.allied[0][1]


def test_f35_ransom_frees_the_prisoner():
    st = board()
    p = pid(st, "L02")
    st.captor[p], st.loc[p] = 0, vid(st, "V01")
    st.stack = [[FR_NEGO, 0, 0, 0]]
    st._legal = None
    act(st, "release L02")
    act(st, "amount 300")
    act(st, "accept")
    assert st.captor[p] == -1 and st.cash[0] == 600 and st.cash[1] == 0
