"""The front-end contract's messages: structured actions, events' outcomes, self-describing observations, the
readable map in DescribeGame, and errors in the wire's terms (proto/feudo/v1/*.proto)."""

from __future__ import annotations

import random

import pytest
from google.protobuf import json_format

from engine import Phase, new_game, sample_chance
from engine.actions import ACTION_KINDS, action_info
from engine.board import castle_site_labels, grid_size, load_map, territory_labels
from engine.outcomes import Fight, GameEnd, Move, Plague, Reveal, TurnEnd, outcomes
from engine.state import CASTLE, DEAD
from feudo.v1 import advisor_pb2 as apb
from feudo.v1 import game_pb2 as gpb
from feudo.v1 import matches_pb2 as mpb
from feudo_ai.matches.service import MatchService
from feudo_ai.people.narrate import narrate
from feudo_ai.wire import convert
from helpers import (BLUE, INF1, INF2, INF3, KN1, KN2, WHITE, attack, attack_targets, chance_action, make, put,
                     set_turn, tid, touch)


def _random_game(players: int, seed: int):
    """(before, action, after) of every step of a seeded random game."""
    state, rng = new_game(players=players, seed=seed), random.Random(seed)
    while not state.is_terminal():
        a = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
        before = state.clone()
        state.apply_action(a)
        yield before, a, state


# ------------------------------------------------------------------------------------------ structured actions
@pytest.mark.parametrize("players", [2, 3, 4])
def test_structured_actions_agree_with_the_engine_for_every_legal_action(players):
    """Every legal action of random games: its kind is the layout's range (PASS by phase), its fields are the
    decoded offsets, and applying it does what the fields say (the token ends on to_territory, the cost is what a
    march spends); the wire message carries the same fields and the unchanged text."""
    kinds_seen = set()
    for seed in range(2):
        for before, _, _ in _random_game(players, seed):
            L, T = before.game.layout, before.game.num_territories
            for a in before.legal_actions():
                info = action_info(before, a)
                kinds_seen.add(info.kind)
                name, i = L.decode(a)
                msg = convert.action_to_proto(before, a)
                assert msg.text == before.action_to_string(a) and msg.id == a
                assert gpb.ActionKind.Name(msg.kind) == "ACTION_KIND_" + info.kind
                assert msg.HasField("player") == (info.player >= 0)
                after = before.clone()
                after.apply_action(a)
                p = info.player
                if name == "MOVE":
                    assert info.to_territory == i and info.token == before.token
                    assert after.loc[p][info.token] == i and 1 <= info.cost <= before.number(p, info.token)
                elif name == "MARCH":
                    assert (info.token, info.to_territory) == divmod(i, T)
                    assert after.loc[p][info.token] == info.to_territory
                    assert 1 <= info.cost <= before.shillings
                    if after.phase == Phase.MARCH and after.current_player() == p:
                        assert after.shillings == before.shillings - info.cost
                elif name == "ADVANCE":
                    assert info.token == i and after.loc[p][i] == info.to_territory == before.won[before.round][1]
                elif name in ("REVEAL", "SELECT", "JOIN"):
                    assert info.token == i
                elif name == "TRADE":
                    assert info.trading_card == i and after.sel_trade[p] == i
                elif name == "ATTACK":
                    assert info.to_territory == i and after.target == i
                elif name == "PLACE":
                    assert info.castle_site == i and after.castle[p] == i
                elif name == "ORDER":
                    assert list(info.order) == after.order and list(msg.order) == after.order
                elif name == "PLAGUE":
                    assert info.plague_card == i and info.player == -1
                if info.token >= 0 and name not in ("SELECT",):
                    x = before.loc[p][info.token]
                    assert info.from_castle == (x == CASTLE)
                    assert (msg.from_territory if msg.HasField("from_territory") else -1) == (x if x >= 0 else -1)
    assert kinds_seen >= {"SELECT_ARMY_CARD", "SELECT_TRADING_CARD", "REVEAL", "MOVE", "STAY", "ATTACK_DECLARE",
                          "ATTACK_JOIN", "ATTACK_LAUNCH", "NO_ATTACK", "CHOOSE_ORDER", "PLACE_CASTLE",
                          "CHANCE_PLAGUE_CARD"}
    assert set(ACTION_KINDS) == {n.removeprefix("ACTION_KIND_") for n in gpb.ActionKind.keys()} - {"UNSPECIFIED"}


# ------------------------------------------------------------------------------------------ outcomes
def _fight_state():
    s = make(2)
    set_turn(s, 2, order=[BLUE, WHITE])
    put(s, BLUE, KN1, "C2-2")
    put(s, BLUE, KN2, "C1-3")
    put(s, WHITE, INF1, "C2-3")
    attack_targets(s, BLUE)
    return s


def test_fight_outcome_names_sides_strengths_losses_and_vp_as_narrate_tells_it():
    s = _fight_state()
    L = s.game.layout
    s.apply_action(L.ATTACK + tid(s, "C2-3"))
    s.apply_action(L.JOIN + KN1)
    s.apply_action(L.JOIN + KN2)
    before = s.clone()
    s.apply_action(L.PASS)
    (fight,) = [o for o in outcomes(before, L.PASS, s) if isinstance(o, Fight)]
    assert fight.attacker == BLUE and fight.territory == tid(s, "C2-3")
    assert [(f.player, f.token, f.strength) for f in fight.attackers] == [(BLUE, KN1, 3), (BLUE, KN2, 3)]
    assert [(f.player, f.token, f.strength) for f in fight.defenders] == [(WHITE, INF1, 2)]
    assert (fight.attack_strength, fight.defence_strength, fight.terrain_bonus) == (6, 2, 0)
    assert fight.attacker_won and fight.winner == BLUE and not fight.attackers_lost
    assert [(x.player, x.token, x.result) for x in fight.defenders_lost] == [(WHITE, INF1, "eliminated")]
    assert [(v.player, v.delta, v.vp, v.reason) for v in fight.vp_changes] == [(BLUE, 2, 2, "elimination")]
    text = "\n".join(narrate(before, L.PASS, s))
    place = s.game.map.labels[tid(s, "C2-3")]  # narration names places as on the board ("Hill D3")
    assert f"attack {place}: 6 against 2, wins" in text and f"White's Infantryman 1 is eliminated at {place}" in text
    assert "Blue gains 2 VP (2)" in text
    # on the wire
    msg = convert.outcome_to_proto(fight)
    assert msg.WhichOneof("outcome") == "fight" and msg.fight.winner == BLUE
    assert msg.fight.defenders_lost[0].result == mpb.LOSS_KIND_ELIMINATED


def test_lost_fight_outcome_gives_the_defender_the_win():
    s = make(2)
    set_turn(s, 2, order=[BLUE, WHITE])
    put(s, BLUE, KN1, "C2-2")
    put(s, WHITE, KN2, "C2-3")
    attack_targets(s, BLUE)
    before = None
    L = s.game.layout
    s.apply_action(L.ATTACK + tid(s, "C2-3"))
    s.apply_action(L.JOIN + KN1)
    before = s.clone()
    s.apply_action(L.PASS)
    (fight,) = [o for o in outcomes(before, L.PASS, s) if isinstance(o, Fight)]
    assert not fight.attacker_won and fight.winner == WHITE and (fight.attack_strength, fight.defence_strength) == (3, 3)
    assert [(x.player, x.token, x.result) for x in fight.attackers_lost] == [(BLUE, KN1, "eliminated")]
    assert "repelled" in "\n".join(narrate(before, L.PASS, s))


def test_plague_outcome_names_card_territories_struck_and_victims_as_narrate_tells_it():
    st = make(2)
    put(st, WHITE, INF1, "C3-1")  # the Village the card moves to
    put(st, BLUE, KN1, "C3-0")  # neighbour: stricken
    put(st, BLUE, INF1, "C3-2", stricken=True)  # stricken neighbour: eliminated
    put(st, BLUE, INF2, "C2-2")  # not adjacent
    st.order, st.turn = [BLUE, WHITE], 1
    st.sel_army[BLUE][INF3] = True
    st.phase = int(Phase.CHANCE_PLAGUE)
    touch(st)
    a = chance_action(st, "East 1")
    before = st.clone()
    st.apply_action(a)
    (plague,) = [o for o in outcomes(before, a, st) if isinstance(o, Plague)]
    village = tid(st, "C3-1")
    assert plague.name == "East 1" and plague.effect == "move"
    assert plague.village_before == tid(st, "A1-3") and plague.village_after == village
    assert set(plague.struck) == {village, *st.game.neighbors[village]}
    assert {(x.player, x.token, x.result) for x in plague.victims} == {
        (WHITE, INF1, "stricken"), (BLUE, KN1, "stricken"), (BLUE, INF1, "eliminated")}
    text = "\n".join(narrate(before, a, st))
    for x in plague.victims:
        name = st.game.ruleset.army[x.token].name
        assert f"'s {name} is {'eliminated' if x.result == 'eliminated' else 'stricken'}" in text
    assert f"the Plague Token moves to {st.game.map.labels[tid(st, 'C3-1')]}" in text  # named as on the board


@pytest.mark.parametrize("players", [2, 4])
def test_outcomes_of_random_games_agree_with_narrate(players):
    """Every elimination, wound, strickening, VP change and the end that narrate tells is in the outcomes."""
    for before, a, after in _random_game(players, 5):
        outs = outcomes(before, a, after, viewer=0)
        lines = narrate(before, a, after, viewer=0)
        losses = [x for o in outs for x in getattr(o, "victims", ()) + getattr(o, "attackers_lost", ())
                  + getattr(o, "defenders_lost", ()) + getattr(o, "infected", ())]
        assert len(losses) == sum(1 for line in lines if " is eliminated at " in line or " is wounded " in line
                                  or " is stricken " in line)
        if any(isinstance(o, GameEnd) for o in outs):
            assert any("Game over" in line for line in lines)
        for o in outs:
            if isinstance(o, Move):
                assert after.loc[o.player][o.token] == o.destination or o.how == "move"
            if isinstance(o, Reveal):
                assert after.revealed[o.player][o.token]
            if isinstance(o, TurnEnd):
                assert list(o.vp) == after.vp


# ------------------------------------------------------------------------------------------ WatchMatch events
def _match(service: MatchService, seed: int = 3) -> tuple[str, dict]:
    r = service.create_match({"players": 2, "seats": ["external", "external"], "seed": seed,
                              "castles": [0, 34]})
    return r["match_id"], r["tokens"]


def _events(service, match_id, seat, tokens):
    return [convert.event_to_proto(e) for e in service.watch(match_id, seat, tokens.get(seat) if seat is not None
                                                             else None, 0, cancel=_Done())]


class _Done:
    """A cancel flag that is set: watch returns what is logged and stops."""

    def is_set(self) -> bool:
        return True


def _play(service, match_id, tokens, chooser, stop):
    """Submit actions of the external seats until stop(match) or the end."""
    m = service._match(match_id)
    while not m.finished and not stop(m):
        seat = m.current_player()
        action = chooser(m.state, seat)
        service.submit_action(match_id, seat, tokens[seat], action, m.action_count)


def test_events_carry_phase_action_fields_and_outcomes_of_a_fight_and_a_plague_draw():
    service = MatchService(run_bots=False)
    try:
        match_id, tokens = _match(service, seed=11)
        rng = random.Random(11)
        _play(service, match_id, tokens, lambda s, p: rng.choice(s.legal_actions()), lambda m: False)
        events = _events(service, match_id, 0, tokens)
    finally:
        service.close()
    kinds = {o.WhichOneof("outcome") for e in events for o in e.outcomes}
    assert {"plague", "reveal", "move", "pick", "phase_change", "turn_end", "game_end", "trading_card"} <= kinds
    assert events[-1].HasField("end") and events[-1].phase == gpb.PHASE_TERMINAL
    for e in events[:-1]:
        assert e.phase != gpb.PHASE_UNSPECIFIED and e.entry.phase == e.phase and e.stage != gpb.STAGE_UNSPECIFIED
        if e.entry.WhichOneof("what") == "action":
            assert e.action.id == e.entry.action and e.action.kind != gpb.ACTION_KIND_UNSPECIFIED
        else:
            assert not e.HasField("action")
        assert mpb.MatchEvent.FromString(e.SerializeToString()) == e  # the wire round trip
        json_format.Parse(json_format.MessageToJson(e), mpb.MatchEvent())
    plague = next(o.plague for e in events for o in e.outcomes if o.WhichOneof("outcome") == "plague")
    assert plague.name and plague.effect
    end = next(o.game_end for e in events for o in e.outcomes if o.WhichOneof("outcome") == "game_end")
    assert list(end.vp) == list(events[-1].end.vp)


def _pick_then_play(service, match_id, tokens, seat_picks, until_reveal_of):
    """Play with first-legal choices, seat 1 selecting ``seat_picks`` in turn 1 and revealing in ascending order;
    stop right before seat 1 reveals ``until_reveal_of`` (an Army Card) or turns over its Trading Card."""
    L = service.game_of(match_id).layout

    def chooser(s, p):
        legal = s.legal_actions()
        if p == WHITE and s.phase == Phase.SELECT and s.turn == 1:
            want = [a for a in seat_picks if a in legal]
            return want[0]
        return legal[0]

    def stop(m):
        s = m.state
        if until_reveal_of is None:
            return s.trade_revealed[WHITE]
        return s.turn == 1 and s.phase == Phase.REVEAL and s.current_player() == WHITE and \
            L.REVEAL + until_reveal_of in s.legal_actions() and len(s.legal_actions()) == 1

    _play(service, match_id, tokens, chooser, stop)


@pytest.mark.parametrize("differ", ["army card", "trading card"])
def test_twin_games_differing_only_in_a_hidden_selection_give_the_other_seats_identical_events(differ):
    """R22: two matches that differ only in seat 1's secret selection stream the same events to seat 0 and to a
    spectator, up to the moment the differing card is revealed; seat 1's own stream names its cards."""
    streams = []
    for variant in (0, 1):
        service = MatchService(run_bots=False)
        try:
            match_id, tokens = _match(service, seed=5)
            L = service.game_of(match_id).layout
            if differ == "army card":
                last = (INF2, INF3)[variant]
                picks = [L.SELECT + KN1, L.SELECT + KN2, L.SELECT + last, L.TRADE + 2]
                _pick_then_play(service, match_id, tokens, picks, until_reveal_of=last)
            else:
                picks = [L.SELECT + KN1, L.SELECT + KN2, L.SELECT + INF1, L.TRADE + (1, 2)[variant]]
                _pick_then_play(service, match_id, tokens, picks, until_reveal_of=None)
            m = service._match(match_id)
            if differ == "trading card":  # up to the action that turned the card over, excluded
                count = next(i for i, e in enumerate(m.entries) if any(q == WHITE for q, _ in e.trades))
            else:
                count = m.action_count
            streams.append({seat: [e.SerializeToString(deterministic=True)
                                   for e in _events(service, match_id, seat, tokens)[:count]]
                            for seat in (0, None, 1)})
        finally:
            service.close()
    a, b = streams
    assert len(a[0]) >= 15 and a[0] == b[0] and a[None] == b[None]
    assert a[1] != b[1]  # seat 1's own picks are named in its own stream
    hidden = [mpb.MatchEvent.FromString(x) for x in a[0] if mpb.MatchEvent.FromString(x).entry.WhichOneof("what")
              == "hidden_pick"]
    assert hidden and all(not e.HasField("action") for e in hidden)
    assert all(not o.pick.HasField("token") and not o.pick.HasField("trading_card") for e in hidden for o in e.outcomes
               if o.WhichOneof("outcome") == "pick")


# ------------------------------------------------------------------------------------------ observations
def test_observation_describes_itself_and_round_trips():
    for before, _, after in _random_game(3, 2):
        if after.is_chance_node() or after.phase not in (Phase.SELECT, Phase.MOVE, Phase.ADVANCE, Phase.TERMINAL):
            continue
        for seat in range(3):
            obs = after.observation(seat)
            msg = convert.observation_from_dict(after.game, obs)
            assert msg.seat == seat and msg.HasField("seat")
            cp = after.current_player()
            assert (msg.to_act if msg.HasField("to_act") else -1) == (cp if cp >= 0 else -1)
            assert msg.actor == (gpb.ACTOR_PLAYER if cp >= 0 else gpb.ACTOR_NOBODY)
            assert msg.stage == convert.stage_to_proto(after.phase)
            if after.phase == Phase.MOVE:
                assert msg.context.army_card_round == after.round
            if after.phase == Phase.ADVANCE:
                assert msg.context.advancing == after.round
            back = convert.observation_dict(after.game, gpb.Observation.FromString(msg.SerializeToString()), seat)
            for key in ("loc", "vp", "sel_army", "sel_trade", "cursor", "round", "phase", "turn"):
                assert back[key] == obs[key], key


def _select_position():
    s, rng = new_game(players=2, seed=1), random.Random(1)
    while not (s.phase == Phase.SELECT and s.current_player() == 1):
        s.apply_action(sample_chance(s, rng) if s.is_chance_node() else rng.choice(s.legal_actions()))
    return s


def test_a_request_for_another_seat_than_the_observation_names_both():
    pos = convert.position_from(_select_position(), 1)
    with pytest.raises(convert.PositionError, match=r"position\.observation\.seat: the observation is seat 1's, but "
                                                    r"the request asks for seat 0"):
        convert.observed_position(pos, 0)


def test_range_errors_speak_the_wires_terms():
    s = _select_position()
    pos = convert.position_from(s, 1)
    bad = gpb.Position()
    bad.CopyFrom(pos)
    t = bad.observation.players[0].tokens[2]
    t.place, t.territory = gpb.PLACE_MAP, 200
    with pytest.raises(convert.PositionError) as e:
        convert.observed_position(bad, 1)
    assert str(e.value) == ("position.observation.players[0].tokens[2].territory: expected a territory id in "
                            "[0, 92] (with place PLACE_MAP), got 200")
    bad.CopyFrom(pos)
    bad.observation.players[0].castle_site = 700
    with pytest.raises(convert.PositionError, match=r"castle_site: expected a castle site id in \[0, 34\], or unset "
                                                    r"\(no Castle yet\), got 700$"):
        convert.observed_position(bad, 1)
    assert convert._translate("state.won[0][1]: expected an integer in [0, 92], got number 500", "p", 0) == \
        "p.context.won[0].territory: expected a territory id in [0, 92], got 500"


# ------------------------------------------------------------------------------------------ DescribeGame
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_describe_game_gives_the_grid_and_unique_stable_labels(seed):
    setup = gpb.GameSetup(players=4, map_seed=seed)
    game = convert.game_from_setup(setup)
    d = convert.describe_game(game, setup)
    assert (d.grid_rows, d.grid_columns) == (10, 10)
    labels = [t.label for t in d.territories]
    sites = [c.label for c in d.castle_sites]
    assert len(set(labels)) == len(labels) and len(set(sites)) == len(sites)
    assert labels == territory_labels(load_map(None, seed=seed))  # stable: the same setup, the same names
    cells = set()
    for t in d.territories:
        pairs = list(zip(t.cells[::2], t.cells[1::2]))
        assert all(0 <= r < d.grid_rows and 0 <= c < d.grid_columns for r, c in pairs)
        cells.update(pairs)
        assert t.label.split(" ")[0] in ("Hill", "Wood", "Mountain", "Village", "City", "Central")
    assert len(cells) == 100
    for t in d.territories:
        if t.joined_corner:
            halves = [c for c in d.castle_sites if c.territory == t.id]
            assert len(halves) == 2 and halves[0].label != halves[1].label
            assert {(c.row, c.column) for c in halves} == set(zip(t.cells[::2], t.cells[1::2]))
    assert labels[tid(load_map(None, seed=0), "C1-2")] == "Wood C2" if seed == 0 else True


def test_labels_of_a_map_with_named_territories():
    m = load_map("turn_example")
    assert grid_size(m) == (6, 9)
    labels = territory_labels(m)
    assert labels[m.territory("Clinton Wood").id] == "Wood F1 Clinton Wood" and len(set(labels)) == len(labels)
    assert len(set(castle_site_labels(m))) == len(m.castle_sites)


# ------------------------------------------------------------------------------------------ LegalActions
def test_legal_actions_answer_says_who_is_to_act_and_gives_structured_actions():
    from feudo_ai.wire.advisor import AdvisorServicer

    class _Call:
        def set(self, **kw):
            pass

    import feudo_ai.wire.advisor as adv

    s = _select_position()
    servicer = AdvisorServicer()
    real = adv.current_call
    adv.current_call = lambda: _Call()
    try:
        out = servicer.LegalActions(apb.LegalActionsRequest(position=convert.position_from(s, 1), seat=1), None)
        waiting = servicer.LegalActions(apb.LegalActionsRequest(position=convert.position_from(s, 0), seat=0), None)
    finally:
        adv.current_call = real
    assert out.seat_to_act and out.to_act == 1 and out.actor == gpb.ACTOR_PLAYER and out.seat == 1
    assert all(a.kind == gpb.ACTION_KIND_SELECT_ARMY_CARD and a.HasField("token") for a in out.actions)
    assert not waiting.actions and waiting.to_act == 1 and waiting.current_player == 1


# ------------------------------------------------------------------------------------------ Suggest's actions
def _suggest(server, state, seat, iterations=200):
    import grpc

    from feudo.v1 import advisor_pb2_grpc

    with grpc.insecure_channel(server.address) as channel:
        stub = advisor_pb2_grpc.AdvisorStub(channel)
        return stub.Suggest(apb.SuggestRequest(position=convert.position_from(state, seat), seat=seat,
                                               limits=apb.Limits(iterations=iterations, seed=3)), timeout=60).advice


def _march_position():
    """A position of a seeded random game where the seat to act marches (R9) with at least 2 shillings."""
    for seed in range(1, 30):
        s, rng = new_game(players=2, seed=seed), random.Random(seed)
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(sample_chance(s, rng))
                continue
            if s.phase == Phase.MARCH and s.shillings >= 2 and len(s.legal_actions()) > 2:
                return s
            s.apply_action(rng.choice(s.legal_actions()))
    raise AssertionError("no march in 29 seeded games")


@pytest.mark.parametrize("where", ["selection", "march"])
def test_suggest_gives_every_action_the_structured_fields_of_a_legal_action(server, where):
    """Suggest's best, plan and alternatives carry the same fields LegalActions gives (kind, token, trading card,
    from/to, cost), each read where it is played: checked against action_info of the engine's own state, the plan
    walked by applying its actions (a march's cost is what that march spends, R9)."""
    state = _select_position() if where == "selection" else _march_position()
    seat = state.current_player()
    advice = _suggest(server, state, seat)
    ref = state.clone()
    for msg in advice.alternatives:
        assert msg.action == convert.action_to_proto(ref, msg.action.id)
        assert msg.action.kind != gpb.ACTION_KIND_UNSPECIFIED
    assert advice.best == convert.action_to_proto(ref, advice.best.id) == advice.plan[0]
    walk = state.clone()
    for msg in advice.plan:
        if walk.current_player() != seat:
            break
        info = action_info(walk, msg.id)
        assert gpb.ActionKind.Name(msg.kind) == "ACTION_KIND_" + info.kind and msg.player == seat
        if info.kind == "MARCH":
            before = walk.shillings
            assert msg.HasField("cost") and msg.HasField("token") and msg.HasField("to_territory")
        walk.apply_action(msg.id)
        if info.kind == "MARCH" and walk.phase == Phase.MARCH and walk.current_player() == seat:
            assert walk.shillings == before - msg.cost
    if where == "selection":
        kinds = [m.kind for m in advice.plan]
        assert kinds.count(gpb.ACTION_KIND_SELECT_ARMY_CARD) == 3 and kinds[-1] == gpb.ACTION_KIND_SELECT_TRADING_CARD
        assert all(m.HasField("token") for m in advice.plan[:3]) and advice.plan[-1].HasField("trading_card")


# ------------------------------------------------------------------------------------------ SubmitAction
def test_submit_action_answers_the_seats_next_observation(server):
    """Two external seats play a whole short match; each seat calls GetObservation only when its turn comes back
    after the other's; while it acts again at once (its selection's four picks, R6; its moves), SubmitAction's
    answer is all it reads. Every answer equals a GetObservation made right after it."""
    from feudo_ai.matches.client import MatchesClient

    rng = random.Random(4)
    with MatchesClient(server.address) as c:
        match_id, tokens = c.create_match(players=2, seats=["external", "external"], seed=4, turns=1)
        submits = straight = 0
        while True:
            obs = c.observation(match_id, 0, tokens[0])
            if obs.finished:
                break
            seat = obs.to_act
            obs = c.observation(match_id, seat, tokens[seat]) if seat != 0 else obs
            while obs.HasField("to_act") and obs.to_act == seat and not obs.finished:
                ans = c.submit(match_id, seat, tokens[seat], rng.choice(obs.legal_actions).id, obs.action_count)
                submits += 1
                assert ans.action_count == obs.action_count + 1 and not ans.retry
                assert ans.observation == c.observation(match_id, seat, tokens[seat])
                assert ans.observation.observation.seat == seat and ans.observation.action_count >= ans.action_count
                if ans.observation.HasField("to_act") and ans.observation.to_act == seat:
                    assert ans.observation.legal_actions  # (its action_count counts chance drawn since)
                    straight += 1
                obs = ans.observation
    assert obs.finished and straight > submits // 2 and submits > 20


def test_suggest_gives_structured_fields_in_every_phase(server):
    """In the first decision of every phase of seeded random games, every action Suggest answers has its kind and
    equals the legal action LegalActions would give for it (the plan's first and the alternatives)."""
    from service_helpers import positions_by_phase

    for phase, state in positions_by_phase(3).items():
        seat = state.current_player()
        advice = _suggest(server, state, seat, iterations=100)
        assert all(m.kind != gpb.ACTION_KIND_UNSPECIFIED for m in advice.plan), phase
        for m in [advice.best, *(a.action for a in advice.alternatives)]:
            assert m == convert.action_to_proto(state, m.id), phase
