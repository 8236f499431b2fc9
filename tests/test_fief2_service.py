"""Fief 2 over the wire (``fief2.v1``, shared messages in ``tabletop.v1``), against a real server process
(``python server.py``, gRPC and HTTP): a whole hosted match, privacy by twin games (F46, F52), bad inputs, the
Connect/HTTP side."""

from __future__ import annotations

import json
import random
from xml.etree import ElementTree

import grpc
import pytest

from fief2 import GameRecord, new_game, sample_chance
from fief2.data import DATA_DIR
from fief2.v1 import advisor_pb2 as apb
from fief2.v1 import advisor_pb2_grpc as apb_grpc
from fief2.v1 import game_pb2 as gpb
from fief2.v1 import matches_pb2 as mpb
from fief2.v1 import matches_pb2_grpc as mpb_grpc
from tabletop.v1 import tabletop_pb2 as tpb

from service_helpers import free_port, post_json, start_process

EXTERNAL = tpb.SeatSpec(external=True)


def bot(spec: str) -> tpb.SeatSpec:
    return tpb.SeatSpec(bot=spec)


@pytest.fixture(scope="module")
def server():
    http_port = free_port()
    # WARNING: the process's output goes to a pipe nobody reads while the tests run, and one log line per call
    # over a whole match would fill it and block the server
    proc, port = start_process("--http", f"127.0.0.1:{http_port}", "--max-seconds", "5", "--log-level", "WARNING")
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield (apb_grpc.AdvisorServiceStub(channel), mpb_grpc.MatchesServiceStub(channel), f"http://127.0.0.1:{http_port}",
               channel)
    finally:
        channel.close()
        proc.terminate()
        proc.wait(timeout=30)


def rpc_error(call, *args) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call(*args)
    return info.value


def seat_position(match_id: str, seat: int, token: str) -> gpb.Position:
    return gpb.Position(match=tpb.SeatRef(match_id=match_id, seat=seat, token=token))


# ------------------------------------------------------------------------------------------ a whole match
def test_whole_three_family_match_one_open_seat_two_greedy_bots(server):
    """Seat 1 is played here through SubmitAction, seats 0 and 2 by the server's greedy bots, to the end (F51)."""
    from feudo_ai.bots.fief2_bots import Fief2GreedyBot

    advisor, matches, _, _ = server
    r = matches.CreateMatch(mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3),
                                                   seats=[bot("greedy"), EXTERNAL, bot("greedy")], seed=11))
    assert [t.seat for t in r.tokens] == [1]
    me, token, rng = 1, r.tokens[0].token, random.Random(3)
    submitted: dict[int, int] = {}  # log index -> action played here
    for _ in range(20_000):
        obs = matches.GetObservation(mpb.GetObservationRequest(match_id=r.match_id, seat=me, token=token))
        if obs.finished:
            break
        if obs.observation.HasField("to_act") and obs.observation.to_act == me:
            legal = advisor.LegalActions(apb.LegalActionsRequest(position=seat_position(r.match_id, me, token),
                                                                 seat=me))
            assert [a.id for a in legal.actions] == [a.id for a in obs.legal_actions]  # Advisor == Matches
            if len(submitted) % 2:  # every other decision the Advisor's (its search of the seat's view)
                limits = tpb.SearchLimits(iterations=64, seed=len(submitted))
                advice = advisor.Suggest(apb.SuggestRequest(position=seat_position(r.match_id, me, token), seat=me,
                                                            limits=limits))
                assert advice.best.id in {a.id for a in obs.legal_actions}
                assert advice.stats.iterations == 64 or len(obs.legal_actions) == 1
                action = advice.best.id
                # the observation form (what GetObservation gave) is the same position to the Advisor
                observed = gpb.Position(observation_json=obs.observation.json, setup=obs.setup)
                again = advisor.Suggest(apb.SuggestRequest(position=observed, seat=me, limits=limits))
                assert (again.best, list(again.alternatives)) == (advice.best, list(advice.alternatives))
                assert advisor.LegalActions(apb.LegalActionsRequest(position=observed, seat=me)).actions == \
                    legal.actions
            else:
                action = rng.choice(obs.legal_actions).id
            done = matches.SubmitAction(mpb.SubmitActionRequest(match_id=r.match_id, seat=me, token=token,
                                                                action=action,
                                                                expected_action_count=obs.action_count))
            assert done.action_count == obs.action_count + 1 and not done.retry
            submitted[obs.action_count] = action
        else:
            # not our turn: the bots move on the server; wait for the next event rather than polling
            stream = matches.WatchMatch(mpb.WatchMatchRequest(match_id=r.match_id, seat=me, token=token,
                                                              from_action_count=obs.action_count))
            next(iter(stream))
            stream.cancel()
    assert obs.finished
    assert len(submitted) > 20
    events = list(matches.WatchMatch(mpb.WatchMatchRequest(match_id=r.match_id, seat=me, token=token)))
    end = events[-1].end
    record = matches.GetRecord(mpb.GetRecordRequest(match_id=r.match_id))
    assert record.record.format == "fief2-game/1" and list(record.seats) == ["greedy", "external", "greedy"]
    rec = GameRecord.from_json(record.record.json)
    assert rec.seed == 11 and len(rec.actions) == obs.action_count == len(events) - 1
    # replayed by the rules here: every action legal, each of ours where the server said, each bot's the greedy
    # player's choice, the end as the stream says
    st, greedy, bot_moves = new_game(players=3), Fief2GreedyBot(0), 0
    for i, a in enumerate(rec.actions):
        actor = st.current_player()
        if i in submitted:
            assert actor == me and a == submitted[i]
        elif actor in (0, 2) and len(st.legal_actions()) > 1:
            assert greedy.choose(st.clone()) == a, f"action {i}"
            bot_moves += 1
        if actor >= 0:
            assert events[i].actor == actor
        st.apply_action(a)
    assert bot_moves > 20
    assert st.is_terminal() and list(end.winners) == list(st.winners)
    assert list(end.power) == [st.power(f) for f in range(3)] and end.turns == st.turn
    listed = [m for m in matches.ListMatches(mpb.ListMatchesRequest()).matches if m.match_id == r.match_id]
    assert listed[0].finished and list(listed[0].winners) == list(st.winners)
    # a finished match takes no more actions
    e = rpc_error(matches.SubmitAction, mpb.SubmitActionRequest(match_id=r.match_id, seat=me, token=token, action=0,
                                                                 expected_action_count=obs.action_count))
    assert e.code() == grpc.StatusCode.FAILED_PRECONDITION


# ------------------------------------------------------------------------------------------ privacy (F46)
def twin_openings(players: int = 3, seed: int = 5) -> tuple[list[int], list[int]]:
    """Two openings to the end of turn 1's deal (F10) that differ only in which of families 1 and 2 got which
    card: the k-th card dealt to family 1 in one is the k-th dealt to family 2 in the other. Family 0's hand, the
    deck and every public fact are the same."""
    rng = random.Random(seed)
    st = new_game(players=players, turn_limit=4)
    actions, deals = [], []  # deals: (index in actions, family receiving)
    while not (st.turn == 1 and not st.is_chance_node() and deals):
        if st.is_chance_node():
            a = sample_chance(st, rng)
            before = [len(h) for h in st.hands]
            st.apply_action(a)
            deals.append((len(actions), next(f for f in range(players) if len(st.hands[f]) > before[f])))
        else:
            a = st.legal_actions()[0]
            st.apply_action(a)
        actions.append(a)
    twin = list(actions)
    to1 = [i for i, f in deals if f == 1]
    to2 = [i for i, f in deals if f == 2]
    assert len(to1) == len(to2) == 3
    for i, j in zip(to1, to2):
        twin[i], twin[j] = actions[j], actions[i]
    return actions, twin


def test_twin_games_differing_in_another_familys_hand_look_the_same_to_seat_0(server):
    """F46: two matches identical but for families 1 and 2's hands (their cards swapped): every answer seat 0
    gets, from Matches and from the Advisor on its match seat, is the same byte for byte, to the end (Suggest's:
    the same advice; only its clock differs)."""
    advisor, matches, _, _ = server
    openings = twin_openings()
    assert openings[0] != openings[1]
    twins = []
    for opening in openings:
        r = matches.CreateMatch(mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3, turn_limit=4),
                                                       seats=[EXTERNAL] * 3, seed=99, opening=opening))
        twins.append((r.match_id, {t.seat: t.token for t in r.tokens}))

    def observe(match_id, tokens, seat):
        return matches.GetObservation(mpb.GetObservationRequest(match_id=match_id, seat=seat, token=tokens[seat]))

    # the premise: family 1's hand is not the same in the twins (it sees its own hand)
    hands1 = [list(observe(m, t, 1).observation.hand) for m, t in twins]
    assert hands1[0] != hands1[1]
    rng, steps = random.Random(7), 0
    while True:
        seen = []
        for m, t in twins:
            pos = seat_position(m, 0, t[0])
            seen.append((observe(m, t, 0).SerializeToString(),
                         advisor.LegalActions(apb.LegalActionsRequest(position=pos, seat=0)).SerializeToString(),
                         advisor.RenderPosition(apb.RenderPositionRequest(position=pos, seat=0)).SerializeToString()))
        assert seen[0] == seen[1], f"step {steps}: seat 0 tells the twins apart"
        obs = observe(*twins[0], 0)
        if obs.finished:
            break
        actor = obs.observation.to_act
        if actor == 0:
            advice = [advisor.Suggest(apb.SuggestRequest(position=seat_position(m, 0, t[0]), seat=0,
                                                         limits=tpb.SearchLimits(iterations=100, seed=steps)))
                      for m, t in twins]
            assert advice[0].best == advice[1].best and advice[0].alternatives == advice[1].alternatives
            action = rng.choice(obs.legal_actions).id
        else:  # families 1 and 2 play the same action in both twins: the lowest legal in both ("end", "pass"...)
            common = set.intersection(*({a.id for a in observe(m, t, actor).legal_actions} for m, t in twins))
            assert common, f"step {steps}: no action of family {actor} is legal in both twins"
            action = min(common)
        answers = [matches.SubmitAction(mpb.SubmitActionRequest(
            match_id=m, seat=actor, token=t[actor], action=action,
            expected_action_count=obs.action_count)).SerializeToString() for m, t in twins]
        assert answers[0] == answers[1]
        steps += 1
        assert steps < 5000
    assert steps > 50
    streams = [[e.SerializeToString() for e in matches.WatchMatch(mpb.WatchMatchRequest(match_id=m, seat=0,
                                                                                           token=t[0]))]
               for m, t in twins]
    assert streams[0] == streams[1]
    spectators = [[e.SerializeToString() for e in matches.WatchMatch(mpb.WatchMatchRequest(match_id=m))]
                  for m, _ in twins]
    assert spectators[0] == spectators[1]
    # ... while family 1's own stream, and the records once over, do tell them apart (the premise held)
    ones = [[e.text for e in matches.WatchMatch(mpb.WatchMatchRequest(match_id=m, seat=1, token=t[1]))]
            for m, t in twins]
    assert ones[0] != ones[1]
    records = [matches.GetRecord(mpb.GetRecordRequest(match_id=m)).record.json for m, _ in twins]
    assert json.loads(records[0])["actions"] != json.loads(records[1])["actions"]
    summaries = [[(s.players, list(s.seats), s.action_count, s.finished, list(s.winners), list(s.points))
                  for s in matches.ListMatches(mpb.ListMatchesRequest()).matches if s.match_id == m][0]
                 for m, _ in twins]
    assert summaries[0] == summaries[1]


def test_twin_states_look_the_same_to_seat_0_through_the_advisor(server):
    """The state form: two whole states differing only in families 1 and 2's hands give seat 0 the same legal
    actions, picture and advice (the server reads only seat 0's view of them)."""
    advisor, _, _, _ = server
    states = []
    for opening in twin_openings(seed=8):
        st = new_game(players=3, turn_limit=4)
        for a in opening:
            st.apply_action(a)
        states.append(st)
    assert states[0].hands[1] != states[1].hands[1] and states[0].hands[0] == states[1].hands[0]
    assert states[0].current_player() == 0
    answers = []
    for st in states:
        pos = gpb.Position(state_json=json.dumps(st.to_dict()))
        answers.append((advisor.LegalActions(apb.LegalActionsRequest(position=pos, seat=0)).SerializeToString(),
                        advisor.RenderPosition(apb.RenderPositionRequest(position=pos, seat=0)).SerializeToString()))
    assert answers[0] == answers[1]  # the text and the SVG pictures included
    picture = advisor.RenderPosition(apb.RenderPositionRequest(position=pos, seat=0))
    root = ElementTree.fromstring(picture.svg)
    assert root.tag.endswith("svg") and picture.text
    advice = [advisor.Suggest(apb.SuggestRequest(position=gpb.Position(state_json=json.dumps(st.to_dict())), seat=0,
                                                 limits=tpb.SearchLimits(iterations=400, seed=2))) for st in states]
    assert advice[0].best == advice[1].best and advice[0].alternatives == advice[1].alternatives
    assert len(advice[0].alternatives) > 1
    # the picture has the hands' counts (public, F46), not their cards
    assert f"family 1: {states[0].cash[1]} florins, 3 cards" in picture.text
    assert advisor.LegalActions(apb.LegalActionsRequest(position=gpb.Position(state_json=json.dumps(
        states[0].to_dict())), seat=1)).actions == []  # not its turn


# ------------------------------------------------------------------------------------------ bad input
@pytest.fixture(scope="module")
def open_match(server):
    _, matches, _, _ = server
    r = matches.CreateMatch(mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3),
                                                   seats=[EXTERNAL, bot("greedy"), bot("random")], seed=1))
    return r.match_id, r.tokens[0].token


def assert_error(error: grpc.RpcError, code: grpc.StatusCode, field: str) -> None:
    assert error.code() == code, (error.code(), error.details())
    assert error.details().startswith(field), error.details()
    assert len(error.details()) <= 1000


def test_unknown_and_illegal_actions_are_invalid_arguments_naming_action(server, open_match):
    _, matches, _, _ = server
    match_id, token = open_match
    obs = matches.GetObservation(mpb.GetObservationRequest(match_id=match_id, seat=0, token=token))
    assert obs.observation.to_act == 0 and obs.legal_actions  # F7: seat 0 picks first
    for action in (10 ** 6, 1580):
        e = rpc_error(matches.SubmitAction, mpb.SubmitActionRequest(match_id=match_id, seat=0, token=token,
                                                                     action=action,
                                                                     expected_action_count=obs.action_count))
        assert_error(e, grpc.StatusCode.INVALID_ARGUMENT, "action:")
    after = matches.GetObservation(mpb.GetObservationRequest(match_id=match_id, seat=0, token=token))
    assert after.action_count == obs.action_count  # nothing changed


def test_tokens_are_checked_on_every_seat_call(server, open_match):
    advisor, matches, _, _ = server
    match_id, token = open_match
    cases = [("", grpc.StatusCode.UNAUTHENTICATED, "token:"),
             ("x" * 32, grpc.StatusCode.PERMISSION_DENIED, "token:"),
             ("x" * 100_000, grpc.StatusCode.INVALID_ARGUMENT, "token:")]
    for bad, code, field in cases:
        assert_error(rpc_error(matches.GetObservation, mpb.GetObservationRequest(match_id=match_id, seat=0,
                                                                                  token=bad)), code, field)
        assert_error(rpc_error(matches.SubmitAction, mpb.SubmitActionRequest(match_id=match_id, seat=0, token=bad,
                                                                              action=0)), code, field)
        assert_error(rpc_error(advisor.LegalActions, apb.LegalActionsRequest(
            position=seat_position(match_id, 0, bad), seat=0)), code, "position.match." + field)
    # a bot's seat has no token to give
    assert_error(rpc_error(matches.GetObservation, mpb.GetObservationRequest(match_id=match_id, seat=1,
                                                                              token=token)),
                 grpc.StatusCode.PERMISSION_DENIED, "seat 1")
    assert_error(rpc_error(advisor.LegalActions, apb.LegalActionsRequest(position=seat_position(match_id, 0, token),
                                                                         seat=2)),
                 grpc.StatusCode.INVALID_ARGUMENT, "position.match.seat")


def test_oversized_and_malformed_fields_name_the_field(server):
    advisor, matches, _, _ = server
    cases = [
        (matches.GetObservation, mpb.GetObservationRequest(match_id="m" * 20_000, seat=0, token="t"),
         grpc.StatusCode.INVALID_ARGUMENT, "match_id:"),
        (matches.GetObservation, mpb.GetObservationRequest(match_id="nosuchmatch", seat=0, token="t"),
         grpc.StatusCode.NOT_FOUND, "match_id:"),
        (matches.CreateMatch, mpb.CreateMatchRequest(setup=gpb.GameSetup(players=7), seats=[EXTERNAL] * 7),
         grpc.StatusCode.INVALID_ARGUMENT, "setup.players:"),
        (matches.CreateMatch, mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3, turn_limit=5000),
                                                     seats=[EXTERNAL] * 3),
         grpc.StatusCode.INVALID_ARGUMENT, "setup.turn_limit:"),
        (matches.CreateMatch, mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3), seats=[EXTERNAL] * 2),
         grpc.StatusCode.INVALID_ARGUMENT, "seats:"),
        (matches.CreateMatch, mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3),
                                                     seats=[EXTERNAL, bot("g" * 5000), EXTERNAL]),
         grpc.StatusCode.INVALID_ARGUMENT, "seats[1].bot:"),
        (matches.CreateMatch, mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3),
                                                     seats=[EXTERNAL, bot("ismcts-v2"), EXTERNAL]),
         grpc.StatusCode.INVALID_ARGUMENT, "seats[1].bot: 'ismcts-v2' is a Feudo bot, not a Fief 2 one"),
        (matches.CreateMatch, mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3),
                                                     seats=[EXTERNAL, EXTERNAL, bot("greedy:depth=500")]),
         grpc.StatusCode.INVALID_ARGUMENT, "seats[2].bot:"),
        (matches.CreateMatch, mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3),
                                                     seats=[EXTERNAL, EXTERNAL, bot("ismcts:seconds=500")]),
         grpc.StatusCode.RESOURCE_EXHAUSTED, "seats[2].bot: seconds=500 is beyond this server's cap 5"),
        (matches.CreateMatch, mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3),
                                                     seats=[bot("pimc:threads=64"), EXTERNAL, EXTERNAL]),
         grpc.StatusCode.RESOURCE_EXHAUSTED, "seats[0].bot: threads=64"),
        (matches.CreateMatch, mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3), seats=[EXTERNAL] * 3,
                                                     opening=[10 ** 6]),
         grpc.StatusCode.INVALID_ARGUMENT, "opening[0]:"),
        (matches.CreateMatch, mpb.CreateMatchRequest(setup=gpb.GameSetup(players=3), seats=[EXTERNAL] * 3,
                                                     opening=[0] * 30_000),
         grpc.StatusCode.INVALID_ARGUMENT, "opening:"),
        (advisor.DescribeGame, apb.DescribeGameRequest(setup=gpb.GameSetup(players=2)),
         grpc.StatusCode.INVALID_ARGUMENT, "setup.players:"),
        (advisor.LegalActions, apb.LegalActionsRequest(seat=0), grpc.StatusCode.INVALID_ARGUMENT, "position:"),
        (advisor.LegalActions, apb.LegalActionsRequest(position=gpb.Position(state_json="{" * 600_000), seat=0),
         grpc.StatusCode.INVALID_ARGUMENT, "position.state_json:"),
        (advisor.LegalActions, apb.LegalActionsRequest(position=gpb.Position(state_json="[1, 2"), seat=0),
         grpc.StatusCode.INVALID_ARGUMENT, "position.state_json:"),
        (advisor.RenderPosition, apb.RenderPositionRequest(position=gpb.Position(
            state_json=json.dumps({**new_game(players=3).to_dict(), "cash": "lots"})), seat=0),
         grpc.StatusCode.INVALID_ARGUMENT, "position.state_json:"),
        (advisor.LegalActions, apb.LegalActionsRequest(position=gpb.Position(
            state_json=json.dumps(new_game(players=3).to_dict())), seat=3),
         grpc.StatusCode.INVALID_ARGUMENT, "seat:"),
    ]
    for call, request, code, field in cases:
        assert_error(rpc_error(call, request), code, field)
    # the observation form: only the seat's own observation, of the request's seat
    st = new_game(players=3)
    leaky = {**st.observation(0), "hands": [[1], [2], [3]]}
    for obs, seat, field in ((leaky, 0, "position.observation_json: observation.hands[1]"),
                             (st.observation(1), 0, "position.observation_json: seat:"),
                             ({"players": 3}, 0, "position.observation_json: seat:"),
                             ({**st.observation(0), "seat": 0, "cash": [1]}, 0, "position.observation_json:")):
        e = rpc_error(advisor.LegalActions, apb.LegalActionsRequest(
            position=gpb.Position(observation_json=json.dumps(obs)), seat=seat))
        assert_error(e, grpc.StatusCode.INVALID_ARGUMENT, field)
    e = rpc_error(advisor.LegalActions, apb.LegalActionsRequest(position=gpb.Position(
        observation_json=json.dumps(st.observation(0)), setup=gpb.GameSetup(players=4)), seat=0))
    assert_error(e, grpc.StatusCode.INVALID_ARGUMENT, "position.setup.players:")
    # a state whose fields are well typed but no game reaches (a family holding the same card twice)
    st = new_game(players=3).to_dict()
    st["hands"] = [[0, 0], [], []]
    e = rpc_error(advisor.LegalActions, apb.LegalActionsRequest(position=gpb.Position(state_json=json.dumps(st)),
                                                                seat=0))
    assert_error(e, grpc.StatusCode.INVALID_ARGUMENT, "position.state_json:")
    # beyond the message cap (1 MiB): gRPC's own refusal, before any of it is read
    e = rpc_error(advisor.LegalActions, apb.LegalActionsRequest(position=gpb.Position(state_json="x" * (2 << 20))))
    assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_suggest_checks_the_request_then_searches_the_seats_view(server, open_match):
    """Limits beyond the caps and a seat not to act are refused as for Feudo; then the search's best action is
    one of the seat's legal actions, the same for the same seed and iterations."""
    advisor, _, _, _ = server
    match_id, token = open_match
    pos = seat_position(match_id, 0, token)
    assert_error(rpc_error(advisor.Suggest, apb.SuggestRequest(position=pos, seat=0,
                                                               limits=tpb.SearchLimits(seconds=50))),
                 grpc.StatusCode.RESOURCE_EXHAUSTED, "limits.seconds:")
    assert_error(rpc_error(advisor.Suggest, apb.SuggestRequest(position=pos, seat=0,
                                                               limits=tpb.SearchLimits(iterations=0))),
                 grpc.StatusCode.INVALID_ARGUMENT, "limits.iterations:")
    assert_error(rpc_error(advisor.Suggest, apb.SuggestRequest(position=pos, seat=0,
                                                               limits=tpb.SearchLimits(threads=3))),
                 grpc.StatusCode.RESOURCE_EXHAUSTED, "limits.threads:")
    st = new_game(players=3)
    e = rpc_error(advisor.Suggest, apb.SuggestRequest(position=gpb.Position(state_json=json.dumps(st.to_dict())),
                                                      seat=2, limits=tpb.SearchLimits(iterations=100)))
    assert_error(e, grpc.StatusCode.FAILED_PRECONDITION, "seat 2 is not to act; seat 0 is")
    six = new_game(players=6)  # six families are searched too (the sixth's rewards beside the node pool)
    answer = advisor.Suggest(apb.SuggestRequest(position=gpb.Position(state_json=json.dumps(six.to_dict())), seat=0,
                                                limits=tpb.SearchLimits(iterations=100, seed=2)))
    assert answer.stats.searched and answer.stats.iterations == 100 and answer.best.id in six.legal_actions()
    legal = {a.id for a in advisor.LegalActions(apb.LegalActionsRequest(position=pos, seat=0)).actions}
    answers = [advisor.Suggest(apb.SuggestRequest(position=pos, seat=0, limits=tpb.SearchLimits(iterations=300,
                                                                                                seed=4)))
               for _ in range(2)]
    assert answers[0].best.id in legal and answers[0].stats.iterations == 300 and answers[0].stats.searched
    assert [(a.action.id, a.visits) for a in answers[0].alternatives] == \
        [(a.action.id, a.visits) for a in answers[1].alternatives]
    assert sum(a.visits for a in answers[0].alternatives) <= 300
    # a time budget: the answer within it (from the call's arrival), with some search done
    timed = advisor.Suggest(apb.SuggestRequest(position=pos, seat=0, limits=tpb.SearchLimits(seconds=0.2, seed=4)))
    assert timed.best.id in legal and timed.stats.iterations > 0


# ------------------------------------------------------------------------------------------ HTTP (Connect)
def test_describe_game_over_http_json_is_the_map_and_ruleset_as_data(server):
    _, _, http, _ = server
    status, body = post_json(f"{http}/fief2.v1.AdvisorService/DescribeGame", {"setup": {"players": 4}})
    assert status == 200
    game = body["game"]
    # checked against fief2's own map file, read here
    data = json.loads((DATA_DIR / "maps" / "default.json").read_text())
    ids = [v["id"] for v in data["villages"]]
    assert [v["code"] for v in game["map"]["villages"]] == ids
    roads = {tuple(sorted((ids.index(a), ids.index(b)))) for a, b in data["roads"]}
    assert {(r.get("a", 0), r["b"]) for r in game["map"]["roads"]} == roads
    for v in game["map"]["villages"]:  # adjacency is the roads seen from each village
        i = v.get("index", 0)
        assert sorted(v["neighbours"]) == sorted({b for a, b in roads if a == i} | {a for a, b in roads if b == i})
    assert [f["code"] for f in game["map"]["fiefs"]] == [f["id"] for f in data["fiefs"]]
    assert {f["rank"] for f in game["map"]["fiefs"]} <= {"FIEF_RANK_BARON", "FIEF_RANK_COUNT", "FIEF_RANK_DUKE"}
    assert [b["code"] for b in game["map"]["bishoprics"]] == [b["id"] for b in data["bishoprics"]]
    assert game["setup"]["players"] == 4 and game["ruleset"]["handSize"] == 3  # F10: hands of three
    assert int(game["numActions"]) == sum(r["count"] for r in game["actionRanges"])
    # an error is Connect's error JSON with the gRPC code, naming the field
    status, body = post_json(f"{http}/fief2.v1.AdvisorService/DescribeGame", {"setup": {"players": 9}})
    assert status == 400 and body["code"] == "invalid_argument" and body["message"].startswith("setup.players:")
    # and the hosted matches answer over HTTP too
    status, body = post_json(f"{http}/fief2.v1.MatchesService/CreateMatch",
                             {"setup": {"players": 3}, "seats": [{"external": True}, {"bot": "greedy"},
                                                                 {"bot": "easy"}], "seed": "4"})
    assert status == 200 and len(body["tokens"]) == 1
    status, obs = post_json(f"{http}/fief2.v1.MatchesService/GetObservation",
                            {"matchId": body["matchId"], "seat": 0, "token": body["tokens"][0]["token"]})
    assert status == 200 and obs["observation"]["phase"] == "PHASE_SETUP" and obs["legalActions"]


def test_reflection_and_health_name_the_fief2_services(server):
    """grpcurl and load balancers see the new services like feudo.v1's."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

    _, _, _, channel = server
    services = set(ProtoReflectionDescriptorDatabase(channel).get_services())
    assert {"fief2.v1.AdvisorService", "fief2.v1.MatchesService", "feudo.v1.Advisor", "feudo.v1.Matches"} <= services
    health = health_pb2_grpc.HealthStub(channel)
    for name in ("fief2.v1.AdvisorService", "fief2.v1.MatchesService"):
        assert health.Check(health_pb2.HealthCheckRequest(service=name)).status == \
            health_pb2.HealthCheckResponse.SERVING

