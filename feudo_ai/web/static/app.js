// The Feudo web table: a client of the feudo.v1 Advisor and Matches services over the Connect protocol (JSON).
// It only ever asks for its own seat's view (GetObservation with the seat's token): the server never sends another
// seat's unrevealed cards, so neither the network nor the page can hold them.

import { COLOURS, drawBoard } from "./board.js";
import { RpcError, h, rpc } from "./common.js";
import { showCompanion } from "./companion.js";

const PHASE = {
  PHASE_PLACE_CASTLE: "place your Castle (click a highlighted territory)",
  PHASE_CHOOSE_ORDER: "choose the order of play",
  PHASE_SELECT: "select, in secret, three Army Cards (ascending) and then a Trading Card",
  PHASE_REVEAL: "reveal one of your selected Army Cards",
  PHASE_MOVE: "move the revealed token (click a highlighted territory) or stay",
  PHASE_MILADY: "Milady: charm a Baron or infect, or decline",
  PHASE_MARCH: "march with your shillings (click a destination; cost = path length) or stop",
  PHASE_ATTACK: "declare an attack (click a highlighted territory) or pass",
  PHASE_ATTACK_JOIN: "add tokens to the attack, then launch it",
  PHASE_ADVANCE: "advance into the won territories, or stop",
  PHASE_TERMINAL: "the game is over",
};

// measured in the page (ms): the first board drawn since the navigation started; a watched event to the board
// redrawn; a click to the board redrawn with its answer (the browser test reports them, docs/web.md)
window.feudoTimings = { firstBoard: null, updates: [], moves: [] };

// ------------------------------------------------------------------------------------------ the services
// WatchMatch as a Connect server stream (application/connect+json envelopes). The server ends an HTTP stream after
// a while (deadline_exceeded): it is resumed from the last action count seen, so no event is missed.
async function watch(request, onEvent, signal) {
  const enc = new TextEncoder(), dec = new TextDecoder();
  let from = Number(request.fromActionCount || 0);
  while (!signal.aborted) {
    const payload = enc.encode(JSON.stringify({ ...request, fromActionCount: String(from) }));
    const body = new Uint8Array(5 + payload.length);
    new DataView(body.buffer).setUint32(1, payload.length);
    body.set(payload, 5);
    let error = null;
    try {
      const r = await fetch("/feudo.v1.Matches/WatchMatch", {
        method: "POST", headers: { "Content-Type": "application/connect+json" }, body, signal,
      });
      const reader = r.body.getReader();
      let buf = new Uint8Array(0);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const joined = new Uint8Array(buf.length + value.length);
        joined.set(buf); joined.set(value, buf.length); buf = joined;
        while (buf.length >= 5) {
          const n = new DataView(buf.buffer, buf.byteOffset).getUint32(1);
          if (buf.length < 5 + n) break;
          const flags = buf[0], msg = JSON.parse(dec.decode(buf.subarray(5, 5 + n)) || "{}");
          buf = buf.slice(5 + n);
          if (flags & 2) { error = msg.error || null; continue; }
          from = Number(msg.actionCount || 0);
          onEvent(msg);
          if (msg.end) return;
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      error = { code: "unavailable", message: String(e) };
    }
    if (error && error.code !== "deadline_exceeded") {
      if (["not_found", "permission_denied", "unauthenticated"].includes(error.code)) throw new RpcError(error.code, error.message);
      setStatus(`connection lost (${error.code}); reconnecting…`);
      await new Promise(res => setTimeout(res, 1000));
    }
  }
}

// ------------------------------------------------------------------------------------------ small helpers
function setStatus(text, error = false) {
  const el = document.getElementById("status");
  el.textContent = text; el.className = error ? "error" : "";
}
const seats = () => JSON.parse(localStorage.getItem("feudo.seats") || "{}");
function keepToken(matchId, seat, token) {
  const all = seats(); all[matchId] = { ...(all[matchId] || {}), [seat]: token };
  localStorage.setItem("feudo.seats", JSON.stringify(all));
}
const pct = p => `${Math.round(p * 100)}%`;

// ------------------------------------------------------------------------------------------ the lobby
const LEVELS = ["easy", "medium", "hard", "max"];

async function showLobby() {
  const view = document.getElementById("view");
  const seatRows = h("div");
  const players = h("select", { id: "players", "aria-label": "players", onchange: () => drawSeats() },
    ...[2, 3, 4].map(n => h("option", { value: n }, `${n} players`)));
  const turns = h("input", { id: "turns", type: "number", min: 1, max: 30, placeholder: "10", "aria-label": "turns", size: 4 });
  const names = ["Blue", "White", "Yellow", "Red"];
  function drawSeats() {
    const n = Number(players.value);
    seatRows.replaceChildren(...names.slice(0, n).map((name, i) => {
      const choice = h("select", { id: `seat${i}`, "aria-label": `${name}'s player`,
        onchange: () => { spec.hidden = choice.value !== "spec"; } },
        h("option", { value: "you", selected: i === 0 }, "you"),
        ...LEVELS.map(l => h("option", { value: l, selected: i > 0 && l === "medium" }, `bot: ${l}`)),
        h("option", { value: "open" }, "open seat (a link to share)"),
        h("option", { value: "spec" }, "bot spec…"));
      const spec = h("input", { id: `spec${i}`, placeholder: "e.g. ismcts:seconds=1", hidden: true, "aria-label": `${name}'s bot spec` });
      return h("div", { class: "seat-row" }, h("span", { class: "swatch", style: `background:${COLOURS[name]}` }),
        h("b", {}, name), choice, spec);
    }));
  }
  drawSeats();
  const error = h("p", { class: "error", role: "alert" });
  async function create() {
    const n = Number(players.value), seatSpecs = [], mine = [];
    for (let i = 0; i < n; i++) {
      const v = document.getElementById(`seat${i}`).value;
      if (v === "you" || v === "open") { seatSpecs.push({ external: true }); if (v === "you") mine.push(i); }
      else seatSpecs.push({ bot: v === "spec" ? document.getElementById(`spec${i}`).value.trim() : v });
    }
    const setup = { players: n };
    if (turns.value) setup.options = { turns: Number(turns.value) };
    try {
      const r = await rpc("Matches", "CreateMatch", { setup, seats: seatSpecs, seed: String(Math.floor(Math.random() * 2 ** 31)) });
      for (const t of r.tokens) keepToken(r.matchId, t.seat || 0, t.token);
      const seat = mine.length ? mine[0] : (r.tokens[0] ? r.tokens[0].seat || 0 : null);
      location.hash = seat == null ? `#watch/${r.matchId}` : `#match/${r.matchId}/${seat}`;
    } catch (e) { error.textContent = e.message; }
  }
  const live = h("ul", { id: "live" });
  view.replaceChildren(h("div", { class: "lobby" },
    h("section", { class: "panel", "aria-labelledby": "new-h" }, h("h2", { id: "new-h" }, "New match"),
      h("div", { class: "seat-row" }, players, h("label", {}, "turns ", turns)), seatRows,
      h("p", {}, h("button", { class: "primary", id: "create", onclick: create }, "Start the match")), error,
      h("p", { class: "muted" }, "Bots: easy < medium < hard < max. An open seat gets a link: whoever opens it plays that seat.")),
    h("section", { class: "panel", "aria-labelledby": "live-h" }, h("h2", { id: "live-h" }, "Matches on this server"), live),
    h("section", { class: "panel", "aria-labelledby": "companion-h" }, h("h2", { id: "companion-h" }, "At a real table"),
      h("p", {}, "Playing on the physical board? The companion follows your game as you enter what happens, and advises your seat."),
      h("p", {}, h("a", { href: "#companion", id: "open-companion", class: "button" }, "Open the companion")))));
  try {
    const { matches = [] } = await rpc("Matches", "ListMatches", {});
    const mine = seats();
    matches.sort((a, b) => (b.created || 0) - (a.created || 0));
    live.replaceChildren(...matches.slice(0, 30).map(m => {
      const held = Object.keys(mine[m.matchId] || {});
      return h("li", {}, `${m.players} players (${(m.seats || []).join(", ")}), turn ${m.turn || 0}`,
        m.finished ? " — over " : " — live ",
        h("a", { href: `#watch/${m.matchId}` }, "watch"),
        ...held.map(seat => [" · ", h("a", { href: `#match/${m.matchId}/${seat}` }, `play seat ${seat}`)]));
    }));
    if (!matches.length) live.replaceChildren(h("li", { class: "muted" }, "none yet"));
  } catch (e) { live.replaceChildren(h("li", { class: "error" }, e.message)); }
  setStatus("");
}

// ------------------------------------------------------------------------------------------ the table
let T = null;  // the table being shown

async function showTable(matchId, seat) {
  const token = (seats()[matchId] || {})[seat];
  if (!token) { setStatus(`no token for seat ${seat} of this match in this browser`, true); return showLobby(); }
  if (T) T.abort.abort();
  T = { matchId, seat: Number(seat), token, abort: new AbortController(), desc: null, obs: null, hint: null,
        log: [], choice: null, busy: false };
  const t = T;
  try {
    await refresh(t);
  } catch (e) { setStatus(e.message, true); return; }
  watch({ matchId, seat: t.seat, token }, ev => {
    const arrived = performance.now();
    if (ev.text) t.log.push(ev.text);
    clearTimeout(t.refreshTimer);
    t.refreshTimer = setTimeout(() => refresh(t, arrived).catch(e => setStatus(e.message, true)), 30);
  }, t.abort.signal).catch(e => setStatus(e.message, true));
}

async function refresh(t, arrived = null) {
  const obs = await rpc("Matches", "GetObservation", { matchId: t.matchId, seat: t.seat, token: t.token });
  if (t !== T) return;
  if (!t.desc) t.desc = (await rpc("Advisor", "DescribeGame", { setup: obs.setup })).game;
  const same = t.obs && obs.actionCount === t.obs.actionCount && obs.finished === t.obs.finished;
  if (same && arrived != null) return;  // nothing new: keep the page (and the keyboard focus) as it is
  if (t.obs && !same) { t.hint = null; t.choice = null; }
  t.obs = obs;
  render(t);
  document.body.dataset.actionCount = obs.actionCount;  // for tests and tools: the action count shown
  const now = performance.now();
  if (window.feudoTimings.firstBoard == null) window.feudoTimings.firstBoard = now;
  if (arrived != null) window.feudoTimings.updates.push(now - arrived);
}

// Which kind of action an id is, and its offset (DescribeGame's action ranges).
function decode(desc, id) {
  for (const r of desc.actionRanges) {
    const first = r.first || 0;
    if (id >= first && id < first + r.size) return { range: r.name, offset: id - first };
  }
  return { range: "?", offset: 0 };
}

// The territory a legal action is played by clicking (Castle site, move, march, attack); null for the others.
function targetOf(desc, action) {
  const { range, offset } = decode(desc, action.id);
  const n = desc.territories.length;
  if (range === "PLACE") return (desc.castleSites[offset] || {}).territory || 0;
  if (range === "MOVE" || range === "ATTACK") return offset;
  if (range === "MARCH") return offset % n;
  return null;
}

async function submit(t, action) {
  if (t.busy) return;
  t.busy = true;
  const clicked = performance.now();
  setStatus(`playing: ${action.text}`);
  try {
    await rpc("Matches", "SubmitAction", { matchId: t.matchId, seat: t.seat, token: t.token, action: action.id,
                                          expectedActionCount: t.obs.actionCount });
    setStatus("");
  } catch (e) {
    setStatus(e.message, true);
  } finally {
    t.busy = false;
  }
  await refresh(t);
  window.feudoTimings.moves.push(performance.now() - clicked);
}

async function askHint(t) {
  const panel = document.getElementById("hint");
  panel.replaceChildren(h("p", { class: "muted" }, "thinking…"));
  try {
    const r = await rpc("Advisor", "Suggest", {
      position: { setup: t.obs.setup, observation: t.obs.observation }, seat: t.seat,
      limits: { seconds: 1.0, seed: "1" },
    });
    if (t !== T) return;
    t.hint = { advice: r.advice, at: t.obs.actionCount };
    render(t);
  } catch (e) { panel.replaceChildren(h("p", { class: "error" }, e.message)); }
}

function render(t) {
  const { desc, obs } = t;
  const o = obs.observation;
  const names = desc.playerNames;
  const me = t.seat, toAct = obs.toAct ?? null;
  const legal = obs.legalActions || [];
  const best = t.hint && t.hint.at === obs.actionCount ? (t.hint.advice.best || {}).id : null;
  const view = document.getElementById("view");

  // the decision
  const boardActions = new Map();  // territory -> legal actions played by clicking it
  const listed = [];
  for (const a of legal) {
    const terr = targetOf(desc, a);
    if (terr == null) listed.push(a);
    else { if (!boardActions.has(terr)) boardActions.set(terr, []); boardActions.get(terr).push(a); }
  }
  const side = h("div", { class: "side" });
  let decision;
  if (obs.finished) {
    const winners = (o.winners || []).map(w => names[w]);
    const vps = o.players.map((p, i) => `${names[i]} ${p.vp || 0}`).join(", ");
    decision = h("section", { class: "panel end", id: "end", role: "status" },
      h("h2", {}, (o.winners || []).includes(me) ? "You won!" : `${winners.join(" and ")} won`),
      h("p", {}, `Victory points: ${vps}`), h("p", {}, h("a", { href: "#" }, "Back to the lobby")));
  } else if (legal.length) {
    decision = h("section", { class: "panel", id: "decision", "aria-live": "polite" },
      h("p", { class: "decision" }, `Your turn (${names[me]}): ${PHASE[o.phase] || o.phase}`),
      decisionControls(t, listed, best),
      t.choice ? h("div", { class: "choices", id: "pick" }, h("span", {}, "Which one? "),
        ...t.choice.map(a => h("button", { class: a.id === best ? "best" : "", onclick: () => submit(t, a) }, a.text))) : null,
      h("p", {}, h("button", { id: "hint-button", onclick: () => askHint(t) }, "Hint"),
        " ", h("span", { class: "muted" }, "the Advisor's plan, from your view only")),
      h("div", { id: "hint", class: "hint" }, t.hint && t.hint.at === obs.actionCount ? hintView(t) : null),
      h("details", {}, h("summary", {}, `all ${legal.length} choices as a list`),
        h("div", { class: "choices" }, ...legal.map(a => h("button", { "data-action": a.id, class: a.id === best ? "best" : "",
          onclick: () => submit(t, a) }, a.text)))));
  } else {
    decision = h("section", { class: "panel", id: "decision" },
      h("p", { class: "decision" }, toAct == null ? "…" : `Waiting for ${names[toAct]}: ${(PHASE[o.phase] || o.phase).replace("your", "their").replace(/ \(click[^)]*\)/, "")}`));
  }
  side.append(...[decision, playersView(t), handView(t), invites(t)].filter(Boolean),
    h("section", { class: "panel" }, h("h3", {}, "What happened"),
      h("div", { class: "log", id: "log", tabindex: 0 }, ...t.log.slice(-80).map(x => h("div", {}, x)))));
  view.replaceChildren(h("div", { class: "table" }, h("div", {}, board(t, boardActions, best),
    h("p", { class: "muted" }, `Turn ${o.turn || 0} of ${desc.turns}${o.tiebreak ? " (tie-break)" : ""}. ` +
      "Tokens: owner's initial and number; a dark token is plague-stricken. Squares: Castles. ☠: the Plague Token. ✚: the Convent on the Central Hill.")), side));
  const log = document.getElementById("log");
  if (log) log.scrollTop = log.scrollHeight;
}

function decisionControls(t, listed, best) {
  const { desc } = t;
  const ranges = listed.map(a => decode(desc, a.id).range);
  // the selection, the reveal and the joins are played from the hand (handView); the rest are buttons here
  const here = listed.filter((a, i) => !["SELECT", "TRADE", "REVEAL"].includes(ranges[i]));
  return h("div", { class: "choices", id: "choices" }, ...here.map(a =>
    h("button", { "data-action": a.id, class: a.id === best ? "best" : "", onclick: () => submit(t, a) }, a.text)));
}

function hintView(t) {
  const a = t.hint.advice, names = t.desc.playerNames;
  const beliefs = new Map();
  for (const b of a.beliefs || []) {
    const p = b.player || 0;
    if (!beliefs.has(p)) beliefs.set(p, []);
    beliefs.get(p).push(b);
  }
  return h("div", {},
    h("p", {}, h("b", {}, "Plan: "), (a.plan || []).map(x => x.text).join(", then ")),
    h("table", {}, h("tr", {}, h("th", {}, "now"), h("th", {}, "win"), h("th", {}, "visits")),
      ...(a.alternatives || []).slice(0, 5).map(x => h("tr", {}, h("td", {}, x.action.text),
        h("td", {}, pct(x.winProbability || 0)), h("td", {}, x.visits || 0)))),
    ...[...beliefs].map(([p, bs]) => h("p", { class: "muted" }, `${names[p]} probably selected: `,
      bs.sort((x, y) => y.probability - x.probability).slice(0, 4).map(b => `${b.card} ${pct(b.probability)}`).join(", "))));
}

function playersView(t) {
  const { desc, obs } = t, o = obs.observation, names = desc.playerNames;
  return h("section", { class: "panel players", "aria-label": "players" }, ...o.players.map((p, i) => {
    const revealed = (p.tokens || []).map((tk, j) => tk.cardRevealed ? desc.army[j].name : null).filter(Boolean);
    const bits = [];
    if (p.selectionDone) bits.push("selection done");
    else if (p.selectedArmyCards) bits.push(`${p.selectedArmyCards} card${p.selectedArmyCards > 1 ? "s" : ""} face down`);
    if (revealed.length) bits.push(`revealed: ${revealed.join(", ")}`);
    if (p.revealedTradingCard != null) bits.push(`trading card: ${desc.tradingCards[p.revealedTradingCard]} shillings`);
    return h("div", { class: `player${obs.toAct === i && !obs.finished ? " to-act" : ""}`, "data-seat": i },
      h("span", { class: "swatch", style: `display:inline-block;width:1em;height:1em;border:1px solid #000;border-radius:50%;background:${COLOURS[names[i]]}` }),
      h("span", { class: "name" }, names[i], i === t.seat ? " (you)" : ""), h("span", { class: "vp" }, `${p.vp || 0} VP`),
      h("span", { class: "muted" }, bits.join(" · ")));
  }));
}

// The seat's own cards: the hand (Army Cards then Trading Cards), its secret selection marked, legal picks clickable.
function handView(t) {
  const { desc, obs } = t, me = obs.observation.players[t.seat], own = obs.observation.ownSelection || {};
  const legal = new Map((obs.legalActions || []).map(a => [a.id, a]));
  const best = t.hint && t.hint.at === obs.actionCount ? (t.hint.advice.best || {}).id : null;
  const byRange = {};
  for (const r of desc.actionRanges) byRange[r.name] = r.first || 0;
  const selected = new Set(own.armyCards || []);
  const army = desc.army.map((c, j) => {
    const tk = me.tokens[j] || {};
    const action = legal.get(byRange.SELECT + j) || legal.get(byRange.REVEAL + j);
    return h("button", { class: `card${selected.has(j) ? " selected" : ""}${tk.cardHeld ? "" : " gone"}${action && action.id === best ? " best" : ""}`,
      disabled: !action, "data-action": action ? action.id : null, "aria-label": `${c.name}${selected.has(j) ? ", selected" : ""}${action ? `: ${action.text}` : ""}`,
      onclick: action ? () => submit(t, action) : null },
      h("div", { class: "num" }, tk.stricken ? c.black : c.red), h("div", {}, c.name));
  });
  const trading = desc.tradingCards.map((v, k) => {
    const action = legal.get(byRange.TRADE + k);
    const held = (me.tradingCardsHeld || [])[k];
    return h("button", { class: `card${own.tradingCard === k ? " selected" : ""}${held ? "" : " gone"}${action && action.id === best ? " best" : ""}`,
      disabled: !action, "data-action": action ? action.id : null, "aria-label": `Trading Card ${v} shillings${action ? `: ${action.text}` : ""}`,
      onclick: action ? () => submit(t, action) : null }, h("div", { class: "num" }, v), h("div", {}, "shillings"));
  });
  return h("section", { class: "panel", "aria-label": "your cards" }, h("h3", {}, "Your cards"),
    h("div", { class: "hand", id: "army-hand" }, army), h("div", { class: "hand", id: "trading-hand", style: "margin-top:.4em" }, trading),
    h("p", { class: "muted" }, "Green: in your secret selection this turn. Faded: discarded."));
}

function invites(t) {
  const mine = seats()[t.matchId] || {};
  const others = Object.entries(mine).filter(([s]) => Number(s) !== t.seat);
  if (!others.length) return null;
  return h("section", { class: "panel" }, h("h3", {}, "Open seats"), ...others.map(([s, token]) => {
    const link = `${location.origin}${location.pathname}#join/${t.matchId}/${s}/${token}`;
    return h("p", {}, `${t.desc.playerNames[s]}: `, h("input", { value: link, readonly: true, size: 30, "aria-label": `link for seat ${s}` }),
      " ", h("a", { href: `#match/${t.matchId}/${s}` }, "play it here"));
  }));
}

// The board (board.js, shared with the companion), its legal targets clickable.
function board(t, boardActions, best) {
  return drawBoard(t.desc, t.obs.observation, boardActions, best, actions => pickOnBoard(t, actions));
}

function pickOnBoard(t, actions) {
  if (actions.length === 1) return submit(t, actions[0]);
  t.choice = actions;  // e.g. which token marches there, or which Castle site of a joined corner
  render(t);
  const first = document.querySelector("#pick button");
  if (first) first.focus();
}

// ------------------------------------------------------------------------------------------ spectators
async function showWatch(matchId) {
  if (T) T.abort.abort();
  T = null;
  const abort = new AbortController();
  const log = h("div", { class: "log", id: "log" });
  document.getElementById("view").replaceChildren(h("section", { class: "panel" },
    h("h2", {}, "Watching (public events only)"), log, h("p", {}, h("a", { href: "#" }, "Back to the lobby"))));
  window.addEventListener("hashchange", () => abort.abort(), { once: true });
  await watch({ matchId }, ev => {
    log.append(h("div", {}, ev.end ? `The match is over: VP ${(ev.end.vp || []).join(", ")}` : ev.text));
    log.scrollTop = log.scrollHeight;
  }, abort.signal).catch(e => setStatus(e.message, true));
}

// ------------------------------------------------------------------------------------------ routes
function route() {
  const parts = location.hash.replace(/^#/, "").split("/");
  if (parts[0] === "join" && parts.length === 4) {  // a shared seat link: keep the token, drop it from the address
    keepToken(parts[1], parts[2], parts[3]);
    history.replaceState(null, "", `#match/${parts[1]}/${parts[2]}`);
    return showTable(parts[1], parts[2]);
  }
  if (parts[0] === "match" && parts.length === 3) return showTable(parts[1], parts[2]);
  if (parts[0] === "watch" && parts.length === 2) return showWatch(parts[1]);
  if (T) { T.abort.abort(); T = null; }
  if (parts[0] === "companion") return showCompanion(document.getElementById("view"), setStatus);
  return showLobby();
}
window.addEventListener("hashchange", route);
route();
