"""The feudo.v1 services over HTTP (Connect protocol) from a real `feudo serve` process: JSON unary calls as curl
makes them, errors as Connect error JSON with the gRPC status's code, the API token, and WatchMatch as a Connect
server stream; the same calls over gRPC answer the same. What the web table builds on them: the legal actions after
staged picks (Advisor.LegalActions on the seat's WatchMatch entries plus the picks) and the spectator's public view
(GetObservation with public_view)."""

from __future__ import annotations

import json
import os
import re
import signal
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request

import grpc
import pytest
from service_helpers import ROOT, free_port
from service_helpers import post_json as post

from feudo.v1 import matches_pb2 as mpb
from feudo.v1 import matches_pb2_grpc as mpb_grpc


def start(*args: str, env: dict | None = None) -> tuple[subprocess.Popen, str, str]:
    proc = subprocess.Popen([sys.executable, "-m", "feudo_ai", "serve", "--address", "127.0.0.1:0", "--http",
                             "127.0.0.1:0", "--log-level", "WARNING", *args], cwd=str(ROOT), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    first, second = proc.stdout.readline(), proc.stdout.readline()
    grpc_address = re.search(r"listening on (\S+)", first)
    http = re.search(r"(http://\S+)/", second)
    if not (grpc_address and http):
        proc.kill()
        pytest.fail(f"server did not start: {first!r} {second!r} {proc.stderr.read()[-2000:]}")
    return proc, grpc_address.group(1), http.group(1)


@pytest.fixture(scope="module")
def server():
    proc, grpc_address, http = start()
    yield grpc_address, http
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0


def stream(url: str, body: dict, timeout_ms: int | None = None) -> tuple[list[dict], dict]:
    """A Connect server stream with JSON: its messages and its end-of-stream message."""
    payload = json.dumps(body).encode()
    headers = {"Content-Type": "application/connect+json"}
    if timeout_ms:
        headers["Connect-Timeout-Ms"] = str(timeout_ms)
    req = urllib.request.Request(url, data=struct.pack(">BI", 0, len(payload)) + payload, method="POST",
                                 headers=headers)
    messages, end = [], {}
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.headers["Content-Type"] == "application/connect+json"
        while True:
            head = r.read(5)
            if len(head) < 5:
                break
            flags, n = struct.unpack(">BI", head)
            item = json.loads(r.read(n))
            if flags & 2:
                end = item
                break
            messages.append(item)
    return messages, end


def test_unary_json_calls_and_errors_with_the_grpc_code(server):
    grpc_address, http = server
    status, body = post(f"{http}/feudo.v1.Advisor/DescribeGame", {"setup": {"players": 2}})
    assert status == 200 and body["game"]["playerNames"][:2] == ["Blue", "White"] and body["game"]["territories"]
    # a match of one external seat against a bot; the seat plays its Castle placement by JSON calls
    status, created = post(f"{http}/feudo.v1.Matches/CreateMatch",
                           {"setup": {"players": 2}, "seats": [{"external": True}, {"bot": "random"}], "seed": 3})
    assert status == 200 and len(created["tokens"]) == 1  # seat 0's (0 is left out of JSON: the default)
    match_id, token = created["matchId"], created["tokens"][0]["token"]
    _, obs = post(f"{http}/feudo.v1.Matches/GetObservation", {"matchId": match_id, "seat": 0, "token": token})
    assert "observation" in obs and obs["setup"]["players"] == 2
    # the Advisor on the seat's observation: the position a browser builds from GetObservation
    if obs.get("legalActions"):
        status, advice = post(f"{http}/feudo.v1.Advisor/Suggest",
                              {"position": {"setup": obs["setup"], "observation": obs["observation"]}, "seat": 0,
                               "limits": {"iterations": "500", "seed": "1"}})
        assert status == 200, advice
        assert advice["advice"]["best"]["id"] in {a["id"] for a in obs["legalActions"]}
    # errors: Connect's error JSON, with the code gRPC gives for the same call
    channel = grpc.insecure_channel(grpc_address)
    stub = mpb_grpc.MatchesStub(channel)
    cases = [({"matchId": "nope", "seat": 0, "token": token}, "not_found", 404),
             ({"matchId": match_id, "seat": 0}, "unauthenticated", 401),
             ({"matchId": match_id, "seat": 0, "token": "wrong"}, "permission_denied", 403),
             ({"matchId": match_id, "seat": 1, "token": token}, "permission_denied", 403)]
    for request, code, http_status in cases:
        status, body = post(f"{http}/feudo.v1.Matches/GetObservation", request)
        assert (status, body["code"]) == (http_status, code), body
        with pytest.raises(grpc.RpcError) as e:
            stub.GetObservation(mpb.GetObservationRequest(match_id=request["matchId"], seat=request["seat"],
                                                          token=request.get("token", "")))
        assert e.value.code().name.lower() == code and e.value.details() == body["message"]
    channel.close()
    status, body = post(f"{http}/feudo.v1.Advisor/Suggest", b'{"position": ')
    assert (status, body["code"]) == (400, "invalid_argument")
    status, body = post(f"{http}/feudo.v1.Advisor/Suggest", {"position": {"setup": {"players": 2}, "history": {}},
                                                            "limits": {"iterations": "999999999"}})
    assert body["code"] in ("resource_exhausted", "failed_precondition")


def test_watch_match_streams_to_the_end(server):
    _, http = server
    _, created = post(f"{http}/feudo.v1.Matches/CreateMatch",
                      {"setup": {"players": 2, "options": {"turns": 1}}, "seats": [{"bot": "random"}, {"bot": "random"}],
                       "seed": 5})
    messages, end = stream(f"{http}/feudo.v1.Matches/WatchMatch", {"matchId": created["matchId"]})
    assert end.get("error") is None and "end" in messages[-1] and len(messages) > 10
    assert all("hiddenPick" in m["entry"] for m in messages[:-1] if m.get("entry", {}).get("pick"))
    # resuming from a count gives the rest
    again, _ = stream(f"{http}/feudo.v1.Matches/WatchMatch", {"matchId": created["matchId"], "fromActionCount": "7"})
    assert again == messages[7:]
    # errors in a stream: the end-of-stream message carries the code
    _, end = stream(f"{http}/feudo.v1.Matches/WatchMatch", {"matchId": "nope"})
    assert end["error"]["code"] == "not_found"


def test_the_web_table_is_served(server):
    _, http = server
    with urllib.request.urlopen(f"{http}/", timeout=10) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/html")
        assert b'<link rel="icon" href="favicon.svg"' in r.read()  # the tab's icon: no request for it ends in 404
    with urllib.request.urlopen(f"{http}/favicon.svg", timeout=10) as r:
        assert r.status == 200 and r.headers["Content-Type"] == "image/svg+xml" and r.read().startswith(b"<svg")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{http}/../pyproject.toml", timeout=10)
    assert e.value.code == 404


def test_the_api_token_and_the_flags(tmp_path):
    (tmp_path / "token").write_text("s3cret\n")
    proc, _, http = start("--token-file", str(tmp_path / "token"))
    try:
        status, body = post(f"{http}/feudo.v1.Advisor/DescribeGame", {"setup": {"players": 2}})
        assert (status, body["code"]) == (401, "unauthenticated")
        status, _ = post(f"{http}/feudo.v1.Advisor/DescribeGame", {"setup": {"players": 2}},
                         {"Authorization": "Bearer s3cret"})
        assert status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
    out = subprocess.run([sys.executable, "-m", "feudo_ai", "serve", "--no-http", "--no-grpc"], cwd=str(ROOT),
                         capture_output=True, text=True, timeout=60, env={**os.environ})
    assert out.returncode == 2 and "nothing to serve" in out.stderr


def my_turn(http: str, seat: dict) -> dict:
    """The seat's observation once it is to act (the server's bot may still be playing its answer)."""
    for _ in range(200):
        obs = post(f"{http}/feudo.v1.Matches/GetObservation", seat)[1]
        if obs.get("legalActions") or obs.get("finished"):
            return obs
        time.sleep(0.05)
    raise AssertionError(f"seat {seat['seat']} never got to act: {obs}")


def test_staged_picks_get_the_legal_actions_the_match_then_has(server):
    """What the web table does for a staged decision (R6 selection): the seat's WatchMatch entries plus the picks
    it has staged, as a History, to Advisor.LegalActions; the answer is what the match offers once they are sent."""
    _, http = server
    _, created = post(f"{http}/feudo.v1.Matches/CreateMatch",
                      {"setup": {"players": 2, "options": {"turns": 1}}, "seats": [{"external": True}, {"bot": "easy"}],
                       "seed": 11})
    match_id, token = created["matchId"], created["tokens"][0]["token"]
    seat = {"matchId": match_id, "seat": 0, "token": token}
    obs = my_turn(http, seat)
    while obs["observation"]["phase"] != "PHASE_SELECT":  # the first legal action until the selection
        status, _ = post(f"{http}/feudo.v1.Matches/SubmitAction", {**seat, "action": obs["legalActions"][0].get("id", 0),
                                                                   "expectedActionCount": obs["actionCount"]})
        assert status == 200
        obs = my_turn(http, seat)
    count = int(obs["actionCount"])
    events, _ = stream(f"{http}/feudo.v1.Matches/WatchMatch", {**seat, "fromActionCount": "0"}, timeout_ms=1500)
    entries = [{k: v for k, v in ev["entry"].items() if k != "phase"} for ev in events if "entry" in ev][:count]
    assert len(entries) == count
    staged = []
    for _ in range(3):  # three Army Cards staged one by one, each checked against the match after sending it
        pick = obs["legalActions"][-1]
        staged.append({"player": 0, "action": pick["id"], "pick": True})
        status, answer = post(f"{http}/feudo.v1.Advisor/LegalActions", {
            "position": {"setup": obs["setup"], "history": {"entries": entries + staged}}, "seat": 0})
        assert status == 200, answer
        status, _ = post(f"{http}/feudo.v1.Matches/SubmitAction", {**seat, "action": pick["id"],
                                                                   "expectedActionCount": obs["actionCount"]})
        assert status == 200
        obs = my_turn(http, seat)
        assert answer["seatToAct"] and answer["phase"] == obs["observation"]["phase"]
        assert [a["id"] for a in answer["actions"]] == [a["id"] for a in obs["legalActions"]]


def test_the_public_view_is_a_seats_view_without_its_selection(server):
    grpc_address, http = server
    _, created = post(f"{http}/feudo.v1.Matches/CreateMatch",
                      {"setup": {"players": 2}, "seats": [{"external": True}, {"bot": "easy"}], "seed": 12})
    match_id, token = created["matchId"], created["tokens"][0]["token"]
    seat = {"matchId": match_id, "seat": 0, "token": token}
    obs = my_turn(http, seat)
    while not (obs["observation"]["phase"] == "PHASE_SELECT" and obs["observation"].get("ownSelection")):
        status, _ = post(f"{http}/feudo.v1.Matches/SubmitAction", {**seat, "action": obs["legalActions"][0].get("id", 0),
                                                                   "expectedActionCount": obs["actionCount"]})
        assert status == 200
        obs = my_turn(http, seat)
    # seat 0 has a card in its secret selection now (R6): the public view has the same facts, but not that card
    status, public = post(f"{http}/feudo.v1.Matches/GetObservation", {"matchId": match_id, "publicView": True})
    assert status == 200 and "legalActions" not in public and public["actionCount"] == obs["actionCount"]
    mine = dict(obs["observation"])
    assert mine.pop("ownSelection")["armyCards"] and mine.pop("seat", 0) == 0
    assert public["observation"] == mine
    # the same over gRPC; and what a public view may not be given
    channel = grpc.insecure_channel(grpc_address)
    stub = mpb_grpc.MatchesStub(channel)
    answer = stub.GetObservation(mpb.GetObservationRequest(match_id=match_id, public_view=True))
    assert not answer.observation.HasField("own_selection") and not answer.observation.HasField("seat")
    for request, code, field in [({"matchId": match_id, "publicView": True, "token": token}, "invalid_argument", "token"),
                                 ({"matchId": match_id, "publicView": True, "seat": 1}, "invalid_argument", "seat"),
                                 ({"matchId": "nope", "publicView": True}, "not_found", "")]:
        status, body = post(f"{http}/feudo.v1.Matches/GetObservation", request)
        assert body["code"] == code and body["message"].startswith(field), body
    channel.close()
