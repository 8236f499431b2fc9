"""What the README's ``grpcurl`` call does, done through server reflection alone (no generated stubs): the request
type is read from the server, the README's JSON request is parsed into it, the method is called by name, and the
answer is read with the reflected response type, as grpcurl (or any client in another language) would."""

from __future__ import annotations

import random

import grpc
from engine import Phase, new_game, sample_chance
from google.protobuf import descriptor_pool, json_format, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from service_helpers import running_server


def test_suggest_by_reflection_like_the_readme_grpcurl_call():
    # the README's position: the first selection of a 2-player game, seed 1
    state, rng = new_game(players=2, seed=1), random.Random(1)
    while state.phase != Phase.SELECT:
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions()))
    with running_server() as server, grpc.insecure_channel(server.address) as channel:
        db = ProtoReflectionDescriptorDatabase(channel)
        assert {"feudo.v1.Advisor", "grpc.health.v1.Health"} <= set(db.get_services())
        pool = descriptor_pool.DescriptorPool(db)
        method = pool.FindServiceByName("feudo.v1.Advisor").methods_by_name["Suggest"]
        request_cls = message_factory.GetMessageClass(method.input_type)
        response_cls = message_factory.GetMessageClass(method.output_type)
        request = json_format.ParseDict({"position": {"stateJson": state.to_json()}, "seat": 0,
                                         "limits": {"iterations": 2000, "seed": 1}}, request_cls())
        call = channel.unary_unary("/feudo.v1.Advisor/Suggest", request_serializer=request_cls.SerializeToString,
                                   response_deserializer=response_cls.FromString)
        answer = json_format.MessageToDict(call(request, timeout=30))
    advice = answer["advice"]
    assert advice["decision"] == "DECISION_KIND_SELECTION"
    # the complete selection (R6): three ascending Army Cards then one Trading Card, each legal in turn
    layout = state.game.layout
    ids = [a["id"] for a in advice["plan"]]
    assert len(ids) == 4 and ids[:3] == sorted(ids[:3])
    assert all(layout.decode(a)[0] == "SELECT" for a in ids[:3]) and layout.decode(ids[3])[0] == "TRADE"
    replay = state.clone()
    for a in advice["plan"]:
        assert a["id"] in replay.legal_actions() and a["text"] == replay.action_to_string(a["id"])
        replay.apply_action(a["id"])
    assert int(advice["stats"]["iterations"]) >= 2000 and advice["best"]["id"] == ids[0]
