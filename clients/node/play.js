#!/usr/bin/env node
// Plays one seat of a hosted Feudo match through the gRPC services, asking the Advisor at every decision.
//
// Everything it sends and reads is code generated from proto/feudo/v1 (gen/, made by `buf generate` with
// protoc-gen-es at `npm ci`); the gRPC protocol over HTTP/2 is @connectrpc/connect-node's. No Python in the loop:
//   1. Advisor.DescribeGame: the action id ranges (every advised and legal id is read through them);
//   2. Matches.CreateMatch: this client holds one seat (external), bots hold the others;
//   3. Matches.WatchMatch: after each event, while this seat is to act (Matches.GetObservation), it asks
//      Advisor.Suggest for the position built from what Matches gave it (the observation form: GetObservation's
//      setup + observation, or the history form: that setup, castle_sites and the seat's WatchMatch entries),
//      checks that Advisor.LegalActions for that position are the match's legal actions and that the advised
//      action is among them, and submits it (Matches.SubmitAction at the
//      observed action count, so that a retry is applied once);
//   4. at the MatchEnd: Matches.GetRecord, and a JSON summary on stdout.
// Any error (a failed call, an advised action that is not legal, a match that does not end in time): exit 1.
//
//   node play.js --address 127.0.0.1:50051 --players 4 --bots medium,easy,easy --iterations 200

import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import { Advisor } from "./gen/feudo/v1/advisor_pb.js";
import { Matches } from "./gen/feudo/v1/matches_pb.js";
import { GameSetupSchema, PositionSchema } from "./gen/feudo/v1/game_pb.js";

const USAGE = `usage: node play.js [--address HOST:PORT] [--players 2-4] [--seat N] [--bots SPEC,...] [--seed N]
                    [--form observation|history] [--iterations N] [--seconds S] [--double-submit]
                    [--timeout SECONDS] [--token API_TOKEN]`;

function options() {
  const { values } = parseArgs({
    options: {
      address: { type: "string", default: "127.0.0.1:50051" },
      players: { type: "string", default: "2" },
      seat: { type: "string", default: "0" },
      bots: { type: "string", default: "medium" },          // the other seats in seat order; the last one repeats
      seed: { type: "string", default: "1" },
      form: { type: "string", default: "observation" },     // the Position form sent to Suggest
      iterations: { type: "string", default: "200" },       // Suggest's budget (limits.iterations)
      seconds: { type: "string" },                          // or/and a time budget (limits.seconds)
      "double-submit": { type: "boolean", default: false }, // send every SubmitAction twice: the second is a retry
      timeout: { type: "string", default: "120" },          // the whole match, seconds
      token: { type: "string" },                            // the server's API token, if it has one
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const int = (name) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name}: not a number: ${values[name]}`);
    return n;
  };
  const o = {
    address: values.address,
    players: int("players"),
    seat: int("seat"),
    bots: values.bots.split(",").map((b) => b.trim()).filter(Boolean),
    seed: int("seed"),
    form: values.form,
    iterations: int("iterations"),
    seconds: values.seconds === undefined ? undefined : Number(values.seconds),
    doubleSubmit: values["double-submit"],
    timeoutMs: Number(values.timeout) * 1000,
    token: values.token,
  };
  if (o.seat >= o.players) throw new Error(`--seat ${o.seat}: the match has ${o.players} players`);
  if (!["observation", "history"].includes(o.form)) throw new Error(`--form: observation or history, not ${o.form}`);
  if (o.bots.length === 0) throw new Error("--bots: at least one bot spec");
  return o;
}

// The name of an action id's range (DescribeGame's action_ranges), e.g. "SELECT", "MOVE"; "?" outside them all.
function rangeOf(ranges, id) {
  const r = ranges.find((r) => id >= r.first && id < r.first + r.size);
  return r ? r.name : "?";
}

function newSummary(o) {
  return {
    address: o.address, players: o.players, seat: o.seat, form: o.form, match_id: null,
    decisions: 0, legal_checks: 0, suggests: 0, advised_legal: 0, advised_illegal: 0, submits: 0, retries: 0,
    events: 0, actions: 0, finished: false, winners: [], vp: [], by_range: {}, errors: [], seconds: 0,
  };
}

async function play(o, summary) {
  const headers = o.token ? { authorization: `Bearer ${o.token}` } : undefined;
  const transport = createGrpcTransport({ baseUrl: `http://${o.address}` });
  const advisor = createClient(Advisor, transport);
  const matches = createClient(Matches, transport);
  const started = Date.now();
  const deadline = started + o.timeoutMs;
  // every unary call's options: the API token and a deadline at what is left of --timeout
  const opts = () => ({ headers, timeoutMs: Math.max(1000, deadline - Date.now()) });

  // Every failed call is recorded once, with its method and gRPC status (a ConnectError's code is the gRPC code);
  // this client's own checks throw plain Errors, passed on as they are.
  const recorded = new WeakSet();
  async function call(method, f) {
    try {
      return await f();
    } catch (e) {
      if (recorded.has(e) || (e instanceof Error && !(e instanceof ConnectError) && e.name !== "AbortError")) throw e;
      const err = ConnectError.from(e);
      summary.errors.push({ method, code: Code[err.code] ?? String(err.code), message: err.rawMessage });
      recorded.add(err);
      throw err;
    }
  }

  const setup = create(GameSetupSchema, {
    players: o.players,
    ruleset: { case: "options", value: {} },
    map: { case: "mapSeed", value: BigInt(o.seed) },
  });
  const game = (await call("DescribeGame", () => advisor.describeGame({ setup }, opts()))).game;
  const ranges = game.actionRanges;
  if (ranges.length === 0 || game.numDistinctActions === 0) throw new Error("DescribeGame: no action ranges");

  const seats = [];
  for (let s = 0, b = 0; s < o.players; s++) {
    seats.push(s === o.seat ? { player: { case: "external", value: true } }
                            : { player: { case: "bot", value: o.bots[Math.min(b++, o.bots.length - 1)] } });
  }
  const created = await call("CreateMatch", () =>
    matches.createMatch({ setup, seats, seed: BigInt(o.seed) }, opts()));
  summary.match_id = created.matchId;
  const token = created.tokens.find((t) => t.seat === o.seat)?.token;
  if (!token) throw new Error(`CreateMatch: no token for seat ${o.seat}`);
  const seatCall = { matchId: created.matchId, seat: o.seat, token };

  const entries = [];   // the seat's WatchMatch entries, in order: the history form's log

  // The position the Advisor is asked about, from what Matches gave this seat only.
  function position(obs) {
    if (o.form === "observation") {
      return create(PositionSchema, { setup: obs.setup, form: { case: "observation", value: obs.observation } });
    }
    if (BigInt(entries.length) !== obs.actionCount) {
      throw new Error(`history form: ${entries.length} entries watched, the match is at ${obs.actionCount}`);
    }
    return create(PositionSchema, {
      setup: obs.setup,
      form: { case: "history", value: { castleSites: obs.castleSites, entries } },
    });
  }

  // Every decision of this seat until it is not to act: Suggest, check, SubmitAction.
  async function playMyTurns() {
    for (;;) {
      const obs = await call("GetObservation", () => matches.getObservation(seatCall, opts()));
      if (obs.finished || obs.toAct !== o.seat) return;
      // the history form needs every entry up to the observed count: wait for the stream to deliver them
      if (o.form === "history" && BigInt(entries.length) < obs.actionCount) return;
      summary.decisions++;
      const limits = { iterations: BigInt(o.iterations), seed: BigInt(o.seed + summary.decisions) };
      if (o.seconds !== undefined) limits.seconds = o.seconds;
      const pos = position(obs);
      // the Advisor's legal actions for the position must be the match's own (ids and texts, in order)
      const asked = await call("LegalActions", () =>
        advisor.legalActions({ position: pos, seat: o.seat }, opts()));
      const words = (actions) => actions.map((a) => `${a.id} ${a.text}`).join("; ");
      if (!asked.seatToAct || words(asked.actions) !== words(obs.legalActions)) {
        throw new Error(`LegalActions at action count ${obs.actionCount} (seat_to_act=${asked.seatToAct}): ` +
                        `${words(asked.actions)} != GetObservation's ${words(obs.legalActions)}`);
      }
      summary.legal_checks++;
      const advice = (await call("Suggest", () => advisor.suggest(
        { position: pos, seat: o.seat, limits }, opts()))).advice;
      summary.suggests++;
      const best = advice?.best;
      const legal = asked.actions.map((a) => a.id);
      if (!best || !legal.includes(best.id)) {
        summary.advised_illegal++;
        throw new Error(`Suggest advised ${best ? `${best.id} "${best.text}"` : "nothing"} at action count ` +
                        `${obs.actionCount}; legal: ${legal.join(",")}`);
      }
      summary.advised_legal++;
      const range = rangeOf(ranges, best.id);
      summary.by_range[range] = (summary.by_range[range] ?? 0) + 1;
      const submit = { ...seatCall, action: best.id, expectedActionCount: obs.actionCount };
      const done = await call("SubmitAction", () => matches.submitAction(submit, opts()));
      summary.submits++;
      if (done.retry || done.actionCount !== obs.actionCount + 1n) {
        throw new Error(`SubmitAction at ${obs.actionCount}: retry=${done.retry} action_count=${done.actionCount}`);
      }
      if (o.doubleSubmit) {   // the same call again: applied once, answered the same, flagged as a retry
        const again = await call("SubmitAction", () => matches.submitAction(submit, opts()));
        if (!again.retry || again.actionCount !== done.actionCount) {
          throw new Error(`SubmitAction retry at ${obs.actionCount}: retry=${again.retry} ` +
                          `action_count=${again.actionCount} (first: ${done.actionCount})`);
        }
        summary.retries++;
      }
    }
  }

  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), Math.max(0, deadline - Date.now()));
  try {
    await playMyTurns();
    const stream = matches.watchMatch({ matchId: created.matchId, seat: o.seat, token, fromActionCount: 0n },
                                      { headers, signal: abort.signal });
    await call("WatchMatch", async () => {
      for await (const event of stream) {
        summary.events++;
        if (event.event.case === "end") {
          summary.finished = true;
          summary.winners = [...event.event.value.winners];
          summary.vp = [...event.event.value.vp];
          break;
        }
        if (event.event.case === "entry") {
          entries.push(event.event.value);
          if (BigInt(entries.length) !== event.actionCount) {
            throw new Error(`WatchMatch: entry ${entries.length} came with action_count ${event.actionCount}`);
          }
        }
        await playMyTurns();
      }
    });
  } catch (e) {
    if (abort.signal.aborted) throw new Error(`the match did not end within ${o.timeoutMs / 1000} s`);
    throw e;
  } finally {
    clearTimeout(timer);
  }
  if (!summary.finished) throw new Error("WatchMatch ended without a MatchEnd");

  const last = await call("GetObservation", () => matches.getObservation(seatCall, opts()));
  if (!last.finished || last.toAct !== undefined) throw new Error("GetObservation: the match is not finished");
  const record = await call("GetRecord", () =>
    matches.getRecord({ matchId: created.matchId }, opts()));
  summary.actions = record.actions.length;
  if (JSON.stringify([...record.winners]) !== JSON.stringify(summary.winners)) {
    throw new Error(`GetRecord winners ${[...record.winners]} != MatchEnd winners ${summary.winners}`);
  }
  const outside = record.actions.filter((a) => a >= game.numDistinctActions);
  if (outside.length) throw new Error(`GetRecord: action ids beyond num_distinct_actions: ${outside}`);
}

let o;
try {
  o = options();
} catch (e) {
  console.error(`${e.message}\n${USAGE}`);
  process.exit(2);
}
const summary = newSummary(o);
const started = Date.now();
let error = null;
try {
  await play(o, summary);
} catch (e) {
  error = e instanceof ConnectError ? `${Code[e.code]}: ${e.rawMessage}` : e.message;
}
summary.seconds = (Date.now() - started) / 1000;
const ok = error === null && summary.errors.length === 0;
console.log(JSON.stringify({ ok, error, ...summary }));
if (!ok) console.error(`feudo node client: ${error ?? "a call failed"}`);
process.exit(ok ? 0 : 1);
