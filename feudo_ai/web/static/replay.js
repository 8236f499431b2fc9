// The replay of a game record: a finished match of the server, or an uploaded "feudo-game/1" file (as
// `feudo selfplay --save` writes it), drawn at any action count as one seat saw it then or as a spectator. Every
// position, event text and VP comes from the server (Matches.ReplayRecord: the record replayed by the engine and
// projected to the viewer, R22); no rule is written here.

import { COLOURS, drawBoard } from "./board.js";
import { h, rpc } from "./common.js";

const FILE_KEY = "feudo.replayFile";  // sessionStorage: the uploaded record ({name, json}) #replay-file shows

// The record's part of a ReplayRecord request.
const recordOf = source => source.matchId != null ? { matchId: source.matchId } : { recordJson: source.json };

// Checks an uploaded record with the server (the whole record is replayed: a bad one is refused naming the field or
// the action) and keeps it for #replay-file. Throws an Error whose message starts with the file's name.
export async function openRecordFile(file) {
  const json = await file.text();
  try {
    await rpc("Matches", "ReplayRecord", { recordJson: json, actionCount: "0" });
  } catch (e) { throw new Error(`${file.name}: ${e.detail || e.message}`); }
  sessionStorage.setItem(FILE_KEY, JSON.stringify({ name: file.name, json }));
}

let current = null;  // the replay shown: its keyboard handler is active while its view is in the page

export async function showReplay(view, setStatus, route) {
  let source;
  if (route.matchId != null) source = { matchId: route.matchId, name: `match ${route.matchId}` };
  else {
    const kept = JSON.parse(sessionStorage.getItem(FILE_KEY) || "null");
    if (!kept) {
      view.replaceChildren(h("p", { class: "error", role: "alert" }, "No record file is open: open one from the lobby."),
        h("p", {}, h("a", { href: "#" }, "back to the lobby")));
      return;
    }
    source = { json: kept.json, name: kept.name };
  }
  const r = { source, count: 0, total: 0, seat: null, desc: null, descKey: null, resp: null, asked: 0 };
  current = r;
  r.root = h("div", { class: "replay", id: "replay" }, h("p", {}, "Loading…"));
  view.replaceChildren(r.root);
  setStatus("");
  await go(r, 0, setStatus);
}

// Asks the server for the position after `count` actions as the chosen viewer sees it, and draws it. Only the latest
// answer is drawn (a quick series of steps overtakes its slower answers).
async function go(r, count, setStatus) {
  const asked = ++r.asked;
  const body = { ...recordOf(r.source), actionCount: String(Math.max(0, count)) };
  if (r.seat != null) body.seat = r.seat;
  let resp;
  try {
    resp = await rpc("Matches", "ReplayRecord", body);
    const key = JSON.stringify(resp.setup);
    if (key !== r.descKey) { r.desc = (await rpc("Advisor", "DescribeGame", { setup: resp.setup })).game; r.descKey = key; }
  } catch (e) {
    if (asked === r.asked) setStatus(`${r.source.name}: ${e.detail || e.message}`, true);
    return;
  }
  if (asked !== r.asked || current !== r) return;
  r.resp = resp; r.count = Number(resp.actionCount || 0); r.total = Number(resp.totalActions || 0);
  setStatus("");
  draw(r, setStatus);
}

function draw(r, setStatus) {
  const { desc, resp } = r, o = resp.observation, names = desc.playerNames;
  const to = n => go(r, Math.min(r.total, Math.max(0, n)), setStatus);
  const button = (id, label, n, disabled) => h("button", { id, "aria-label": label, disabled, onclick: () => to(n) }, label);
  const slider = h("input", { id: "replay-slider", type: "range", min: 0, max: r.total, value: r.count,
    "aria-label": "action count", onchange: e => to(Number(e.target.value)) });
  const field = h("input", { id: "replay-count", type: "number", min: 0, max: r.total, value: r.count, size: 6,
    "aria-label": "go to action", onchange: e => to(Number(e.target.value)) });
  const seat = h("select", { id: "replay-seat", "aria-label": "whose view",
    onchange: e => { r.seat = e.target.value === "" ? null : Number(e.target.value); to(r.count); } },
    h("option", { value: "", selected: r.seat == null }, "the public view"),
    ...names.map((n, i) => h("option", { value: i, selected: r.seat === i }, `${n}'s view`)));
  const ev = resp.event;
  const eventText = ev ? `${ev.actionCount}. ${ev.text}` : "the start of the game";
  const own = o.ownSelection || {};
  const ownText = r.seat == null ? null : [...(own.armyCards || []).map(j => desc.army[j].name),
    ...(own.tradingCard != null ? [`${desc.tradingCards[own.tradingCard]} shillings`] : [])].join(", ");
  const players = h("section", { class: "panel players", id: "replay-players", "aria-label": "players" },
    ...o.players.map((p, i) => h("div", { class: `player${o.toAct === i && !resp.finished ? " to-act" : ""}`, "data-seat": i },
      h("span", { class: "swatch", style: `display:inline-block;width:1em;height:1em;border:1px solid #000;border-radius:50%;background:${COLOURS[names[i]]}` }),
      h("span", { class: "name" }, names[i]), h("span", { class: "vp", "data-vp": p.vp || 0 }, `${p.vp || 0} VP`))));
  const winners = (o.winners || []).map(w => names[w]).join(", ");
  r.root.replaceChildren(h("div", { class: "table" },
    h("div", { class: "board-wrap" }, drawBoard(desc, o)),
    h("div", { class: "side" },
      h("section", { class: "panel", "aria-label": "replay" },
        h("h2", {}, `Replay: ${r.source.name}`),
        h("p", { class: "choices" }, button("replay-first", "⏮ first", 0, r.count === 0),
          button("replay-prev", "◀ previous", r.count - 1, r.count === 0),
          button("replay-next", "next ▶", r.count + 1, r.count >= r.total),
          button("replay-last", "last ⏭", r.total, r.count >= r.total)),
        h("p", {}, slider),
        h("p", {}, h("label", {}, "action ", field), ` of ${r.total} · turn ${o.turn || 0}`),
        h("p", {}, h("label", {}, "view ", seat)),
        h("p", { id: "replay-event", "aria-live": "polite" }, eventText),
        resp.finished ? h("p", { id: "replay-end", class: "end" }, `The game is over: ${winners || "nobody"} won.`) : null,
        ownText != null ? h("p", { class: "muted", id: "replay-own" }, `${names[r.seat]}'s selection: ${ownText || "none"}`) : null,
        h("p", { class: "muted" }, "Keys: ← → a step, Home and End the first and the last."),
        h("p", {}, h("a", { href: "#" }, "back to the lobby"))),
      players)));
  document.body.dataset.replay = `${r.count}/${r.seat == null ? "public" : r.seat}`;
  if (!r.onKey) {
    r.onKey = e => {
      if (current !== r || !r.root.isConnected) return document.removeEventListener("keydown", r.onKey);
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;  // their own keys
      const n = { ArrowLeft: r.count - 1, ArrowRight: r.count + 1, Home: 0, End: r.total }[e.key];
      if (n == null) return;
      e.preventDefault();
      go(r, Math.min(r.total, Math.max(0, n)), setStatus);
    };
    document.addEventListener("keydown", r.onKey);
  }
}
