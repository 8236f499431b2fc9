// The Feudo web table: a client of the feudo.v1 Advisor and Matches services over the Connect protocol (JSON).
// It only ever asks for its own seat's view (GetObservation with the seat's token): the server never sends another
// seat's unrevealed cards, so neither the network nor the page can hold them.

import { COLOURS, cellsOf, drawBoard, svgEl } from "./board.js";
import { RpcError, beliefsByPlayer, h, pct, rpc, serverStream } from "./common.js";
import { showCompanion } from "./companion.js";
import { openRecordFile, showReplay } from "./replay.js";

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
window.feudoTimings = { firstBoard: null, updates: [], animatedUpdates: [], moves: [] };

// ------------------------------------------------------------------------------------------ the services
// WatchMatch as a Connect server stream. The server ends an HTTP stream after a while (deadline_exceeded): it is
// resumed from the last action count seen, so no event is missed.
async function watch(request, onEvent, signal) {
  let from = Number(request.fromActionCount || 0), over = false;
  while (!signal.aborted && !over) {
    let error = null;
    try {
      error = await serverStream("/feudo.v1.Matches/WatchMatch", { ...request, fromActionCount: String(from) }, msg => {
        from = Number(msg.actionCount || 0);
        onEvent(msg);
        if (msg.end) { over = true; return false; }
      }, signal);
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

// ------------------------------------------------------------------------------------------ the lobby
const LEVELS = ["easy", "medium", "hard", "max"];

async function showLobby() {
  const view = document.getElementById("view");
  const seatRows = h("div");
  const players = h("select", { id: "players", "aria-label": "players", onchange: () => drawSeats() },
    ...[2, 3, 4].map(n => h("option", { value: n }, `${n} players`)));
  const turns = h("input", { id: "turns", type: "number", min: 1, max: 30, placeholder: "10", "aria-label": "turns", size: 4 });
  // the match's seed (chance and the bots): given, the same clicks replay the same match; empty, a random one
  const seed = h("input", { id: "seed", type: "number", min: 0, placeholder: "random", "aria-label": "seed", size: 8 });
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
      const chosen = seed.value.trim() ? seed.value.trim() : String(Math.floor(Math.random() * 2 ** 31));
      const r = await rpc("Matches", "CreateMatch", { setup, seats: seatSpecs, seed: chosen });
      const tokens = r.tokens || [];  // none for a match of bots only (an empty list is left out of JSON)
      for (const t of tokens) keepToken(r.matchId, t.seat || 0, t.token);
      const seat = mine.length ? mine[0] : (tokens[0] ? tokens[0].seat || 0 : null);
      location.hash = seat == null ? `#watch/${r.matchId}` : `#match/${r.matchId}/${seat}`;
    } catch (e) { error.textContent = e.message; }
  }
  const live = h("ul", { id: "live" });
  const recordError = h("p", { class: "error", role: "alert", id: "record-error" });
  view.replaceChildren(h("div", { class: "lobby" },
    h("section", { class: "panel", "aria-labelledby": "new-h" }, h("h2", { id: "new-h" }, "New match"),
      h("div", { class: "seat-row" }, players, h("label", {}, "turns ", turns), h("label", {}, "seed ", seed)), seatRows,
      h("p", {}, h("button", { class: "primary", id: "create", onclick: create }, "Start the match")), error,
      h("p", { class: "muted" }, "Bots: easy < medium < hard < max. An open seat gets a link: whoever opens it plays that seat.")),
    h("section", { class: "panel", "aria-labelledby": "live-h" }, h("h2", { id: "live-h" }, "Matches on this server"), live),
    h("section", { class: "panel", "aria-labelledby": "record-h" }, h("h2", { id: "record-h" }, "Replay a record"),
      h("p", {}, "A game record (\"feudo-game/1\", as ", h("code", {}, "feudo selfplay --save"), " writes it), step by step."),
      h("p", {}, h("label", { class: "button" }, "Open a record file ", h("input", { type: "file", id: "record-file",
        accept: ".json,application/json", onchange: async e => {
          const file = e.target.files[0];
          if (!file) return;
          recordError.textContent = "";
          try { await openRecordFile(file); location.hash = "#replay-file"; }
          catch (err) { recordError.textContent = err.message; }
          e.target.value = "";
        } }))), recordError),
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
        m.finished ? [" · ", h("a", { href: `#replay/${m.matchId}`, class: "replay-link", "data-match": m.matchId }, "Replay")] : null,
        ...held.map(seat => [" · ", h("a", { href: `#match/${m.matchId}/${seat}` }, `play seat ${seat}`)]));
    }));
    if (!matches.length) live.replaceChildren(h("li", { class: "muted" }, "none yet"));
  } catch (e) { live.replaceChildren(h("li", { class: "error" }, e.message)); }
  setStatus("");
}

// ------------------------------------------------------------------------------------------ the table
let T = null;  // the table being shown

// Decisions of several actions in a row by the same seat, staged in the page and sent only on Confirm: the phase
// they start in -> the phases they go on in (the secret selection, R6; marches, R9; an attack: its target, the
// tokens joining it, the launch, R11). Which actions are legal at each staged step is asked of the Advisor
// (LegalActions on the seat's history plus the staged actions): no rule is written here.
const STAGED = {
  PHASE_SELECT: ["PHASE_SELECT"], PHASE_MARCH: ["PHASE_MARCH"],
  PHASE_ATTACK: ["PHASE_ATTACK_JOIN"], PHASE_ATTACK_JOIN: ["PHASE_ATTACK_JOIN"],
};
const PICK_KINDS = new Set(["ACTION_KIND_SELECT_ARMY_CARD", "ACTION_KIND_SELECT_TRADING_CARD"]);
const ANIMATION_MS = 500;

async function showTable(matchId, seat) {
  const token = (seats()[matchId] || {})[seat];
  if (!token) { setStatus(`no token for seat ${seat} of this match in this browser`, true); return showLobby(); }
  const t = newTable({ matchId, seat: Number(seat), token });
  try {
    await refresh(t);
  } catch (e) { setStatus(e.message, true); return; }
  follow(t, { matchId, seat: t.seat, token });
}

function newTable(fields) {
  if (T) { T.abort.abort(); stopAnalysis(T); }
  T = { abort: new AbortController(), desc: null, obs: null, hint: null, log: [], entries: [], narration: [],
        anims: [], choice: null, busy: false, stage: null, analysis: { on: false, key: null, abort: null },
        spectator: false, seat: null, ...fields };
  return T;
}

// The event stream: the log, the seat's history (for staged decisions), the narration of fights and plague, and
// the board animated with what an event did before it is redrawn.
function follow(t, request) {
  watch(request, ev => {
    const arrived = performance.now();
    const count = Number(ev.actionCount || 0);
    if (ev.entry) t.entries[count - 1] = ev.entry;
    if (ev.text) t.log.push(ev.text);
    if (ev.end) t.log.push(`The match is over: VP ${(ev.end.vp || []).join(", ")}`);
    const lines = narrate(t, ev);
    if (lines.length) { t.narration.push(...lines); drawNarration(t); }
    // what happens while the table is open is animated (not the events replayed on (re)connecting), even when the
    // board already shows it (an action of this seat is drawn as soon as it is sent); this seat's own moves are not
    if (t.liveFrom != null && count > t.liveFrom)
      t.anims.push(...(ev.outcomes || []).filter(o => !(o.move && ev.entry && ev.entry.player === t.seat)));
    schedule(t, arrived);
  }, t.abort.signal).catch(e => setStatus(e.message, true));
}

function schedule(t, arrived) {
  clearTimeout(t.refreshTimer);
  t.refreshTimer = setTimeout(async () => {
    if (t !== T) return;  // this table was closed since
    if (t.busy || t.animating) return schedule(t, arrived);  // our own actions are being sent: redraw after them
    let animated = false;
    if (t.anims.length && document.querySelector("svg.board")) {
      t.animating = true;
      try { animated = await animate(t, t.anims.splice(0)); } finally { t.animating = false; }
    }
    refresh(t, arrived, animated).catch(e => setStatus(e.message, true));
  }, 30);
}

async function refresh(t, arrived = null, animated = false) {
  const obs = t.spectator
    ? await rpc("Matches", "GetObservation", { matchId: t.matchId, publicView: true })
    : await rpc("Matches", "GetObservation", { matchId: t.matchId, seat: t.seat, token: t.token });
  if (t !== T) return;
  // refreshes overlap (one after this seat's action, one per event): an answer overtaken by a newer one is dropped,
  // or the table would go back to an older position and throw away the picks staged on the newer one
  const older = t.obs && Number(obs.actionCount || 0) < Number(t.obs.actionCount || 0);
  if (older || (t.obs && t.obs.finished && !obs.finished)) return;
  if (!t.desc) t.desc = (await rpc("Advisor", "DescribeGame", { setup: obs.setup })).game;
  if (t !== T) return;  // the page went elsewhere (the lobby, say) while the game was described: draw nothing
  const same = t.obs && obs.actionCount === t.obs.actionCount && obs.finished === t.obs.finished;
  if (same && arrived != null) {  // nothing new: keep the page (and the keyboard focus) as it is
    if (animated) window.feudoTimings.animatedUpdates.push(performance.now() - arrived);
    return;
  }
  if (t.obs && !same) { t.hint = null; t.choice = null; }
  if (!same) t.stage = { phase: obs.observation.phase, actions: [], legal: [obs.legalActions || []], done: false,
                         loading: false, marchToken: null, seq: 0 };
  t.obs = obs;
  if (t.liveFrom == null) t.liveFrom = Number(obs.actionCount);
  render(t);
  document.body.dataset.actionCount = obs.actionCount;  // for tests and tools: the action count shown
  const now = performance.now();
  if (window.feudoTimings.firstBoard == null) window.feudoTimings.firstBoard = now;
  if (arrived != null) (animated ? window.feudoTimings.animatedUpdates : window.feudoTimings.updates).push(now - arrived);
}

// ------------------------------------------------------------------------------------------ staged decisions
const staging = t => !!(t.stage && STAGED[t.stage.phase] && (t.obs.legalActions || []).length);

// The legal actions now: the seat's, or the Advisor's answer after the staged ones ([] while it is asked, or once
// the staged actions make the whole decision).
function currentLegal(t) {
  const st = t.stage;
  if (!st) return [];
  if (st.loading || st.done) return [];
  return st.legal[st.actions.length] || [];
}

// The seat's position for the Advisor: its observation, or, with staged actions, its history (the WatchMatch
// entries it was sent) plus the staged actions, which only the Advisor sees (they are not sent to the match).
async function positionFor(t) {
  const st = t.stage;
  if (!st || !st.actions.length) return { setup: t.obs.setup, observation: t.obs.observation };
  const n = Number(t.obs.actionCount);
  for (let waited = 0; t.entries.filter(Boolean).length < n; waited += 50) {  // the stream is still catching up
    if (waited > 5000) throw new Error("the event stream is behind the observation");
    await new Promise(res => setTimeout(res, 50));
  }
  const entries = t.entries.slice(0, n).map(({ phase, ...e }) => e);
  for (const a of st.actions) entries.push({ player: t.seat, action: a.id, pick: PICK_KINDS.has(a.kind) });
  return { setup: t.obs.setup, history: { castleSites: t.obs.castleSites || [], entries } };
}

// A pick: sent at once for a one-action decision; staged (not sent) for a decision of several actions.
async function choose(t, action) {
  if (!staging(t)) return submit(t, action);
  const st = t.stage;
  if (st.loading || st.done || t.busy) return;
  st.actions.push(action); st.marchToken = null; st.loading = true; t.choice = null;
  const seq = ++st.seq, n = st.actions.length;
  render(t);
  try {
    const r = await rpc("Advisor", "LegalActions", { position: await positionFor(t), seat: t.seat });
    if (t.stage !== st || st.seq !== seq) return;  // undone (or redrawn) meanwhile
    if (r.seatToAct && STAGED[st.phase].includes(r.phase) && (r.actions || []).length) st.legal[n] = r.actions;
    else st.done = true;  // the decision is whole: Confirm sends it
  } catch (e) {
    if (t.stage !== st || st.seq !== seq) return;
    // what would follow depends on what this seat cannot see (e.g. another's Trading Card turned over): every
    // staged action was legal when picked, and the decision stops here
    st.done = true;
  }
  st.loading = false;
  render(t);
  const next = document.querySelector(st.done ? "#confirm" : "svg.board g.legal, #army-hand button:not([disabled]), #trading-hand button:not([disabled]), #choices button");
  if (next) next.focus();
}

function undo(t) {
  const st = t.stage;
  if (!st || t.busy) return false;
  if (t.choice) t.choice = null;
  else if (st.marchToken != null) st.marchToken = null;
  else if (st.actions.length) {
    st.actions.pop(); st.legal.length = st.actions.length + 1; st.done = false; st.loading = false; st.seq++;
  } else return false;
  render(t);
  return true;
}

async function confirm(t) {
  const st = t.stage;
  if (!st || !st.actions.length || st.loading || t.busy) return;
  await play(t, st.actions.map(a => actionText(t, a)).join(", "), st.actions.map(a => a.id));
}

async function submit(t, action) {
  if (t.busy) return;
  await play(t, action.text, [action.id]);
}

// Sends the seat's actions in order (each at the action count the one before it left), the table busy meanwhile,
// then shows the match as it is now; the time from the click to that goes to window.feudoTimings.moves.
async function play(t, text, ids) {
  t.busy = true;
  const clicked = performance.now();
  let count = t.obs.actionCount;
  setStatus(`playing: ${text}`);
  try {
    for (const id of ids) {
      const r = await rpc("Matches", "SubmitAction", { matchId: t.matchId, seat: t.seat, token: t.token, action: id,
                                                       expectedActionCount: count });
      count = r.actionCount;
    }
    setStatus("");
  } catch (e) {
    setStatus(e.message, true);
  } finally {
    t.busy = false;
  }
  await refresh(t);
  window.feudoTimings.moves.push(performance.now() - clicked);
}

// Enter confirms the staged decision; Backspace or u takes back the last staged pick (not while typing).
document.addEventListener("keydown", e => {
  const t = T;
  if (!t || !t.stage || e.ctrlKey || e.metaKey || e.altKey) return;
  const el = e.target, tag = (el.tagName || "").toLowerCase();
  if (["input", "select", "textarea"].includes(tag)) return;
  if (e.key === "Backspace" || e.key === "u") {
    if (undo(t)) e.preventDefault();
  } else if (e.key === "Enter" && t.stage.actions.length && !(el.closest && el.closest("button, a, summary, [role=button]"))) {
    e.preventDefault();
    confirm(t);
  }
});

// ------------------------------------------------------------------------------------------ the Advisor
// A fixed budget and seed, not a time: the same position gets the same hint (about a second on two cores)
const HINT_LIMITS = { iterations: "20000", seed: "1" };

async function askHint(t) {
  const panel = document.getElementById("hint");
  panel.replaceChildren(h("p", { class: "muted" }, "thinking…"));
  const key = decisionKey(t);
  try {
    const r = await rpc("Advisor", "Suggest", { position: await positionFor(t), seat: t.seat,
                                                limits: HINT_LIMITS });
    if (t !== T || decisionKey(t) !== key) return;
    t.hint = { advice: r.advice, key };
    render(t);
  } catch (e) { panel.replaceChildren(h("p", { class: "error" }, e.message)); }
}

// The decision being thought about: the observation's action count and the staged picks; null when there is
// none to analyse (not the seat's turn, or the staged picks make the whole decision).
function decisionKey(t) {
  const st = t.stage;
  if (!t.obs || t.spectator || !(t.obs.legalActions || []).length || !st || st.loading || st.done) return null;
  return `${t.obs.actionCount}:${st.actions.map(a => a.id).join(",")}`;
}

// Analysis mode: Advisor.Analyze streamed for the decision while the person thinks; a new decision restarts it.
function syncAnalysis(t) {
  const a = t.analysis, key = a.on ? decisionKey(t) : null;
  document.body.dataset.analysis = key ? `on ${key}` : a.on ? "on" : "off";
  if (key === a.key) return;
  stopAnalysis(t);
  if (!key) return;
  a.key = key; a.advice = null; a.update = 0; a.final = false;
  const abort = a.abort = new AbortController();
  (async () => {
    const position = await positionFor(t);
    if (abort.signal.aborted) return;
    const error = await serverStream("/feudo.v1.Advisor/Analyze", { position, seat: t.seat,
      limits: { seconds: 20, seed: "1" }, intervalSeconds: 0.5 }, msg => {
      if (abort.signal.aborted) return false;
      a.advice = msg.advice; a.update = msg.update || 0; a.final = !!msg.final;
      drawAnalysis(t);
    }, abort.signal);
    if (error && !abort.signal.aborted) { a.error = error.message; drawAnalysis(t); }
  })().catch(e => { if (!abort.signal.aborted) { a.error = e.message; drawAnalysis(t); } });
}

function stopAnalysis(t) {
  const a = t.analysis;
  if (a.abort) a.abort.abort();
  a.abort = null; a.key = null; a.advice = null; a.error = null;
}

function drawAnalysis(t) {
  const panel = document.getElementById("analysis");
  if (!panel) return;
  const a = t.analysis;
  panel.dataset.update = a.update || 0;
  panel.dataset.key = a.key || "";
  if (!a.on) { panel.replaceChildren(); return; }
  if (a.error) { panel.replaceChildren(h("p", { class: "error" }, a.error)); return; }
  if (!a.advice) { panel.replaceChildren(h("p", { class: "muted" }, a.key ? "analysing…" : "analysis: waiting for your decision")); return; }
  const adv = a.advice, stats = adv.stats || {};
  panel.replaceChildren(
    h("p", { class: "muted" }, `${a.final ? "done" : "analysing"}: update ${a.update}, ${stats.iterations || 0} iterations`),
    alternativesTable(adv));
}

// Ranked by visits, as the search chooses: the choices it looked at most have the surer win rates (a rate from
// few visits may be higher by chance), which the caption says when the order and the rates disagree.
function alternativesTable(advice) {
  const alts = (advice.alternatives || []).slice(0, 5);
  const shown = x => Math.round((x.winProbability || 0) * 100);  // as pct() prints it
  const disagree = alts.some((x, i) => i > 0 && shown(x) > shown(alts[0]));
  return h("table", {}, disagree ? h("caption", { class: "muted" }, "ranked by visits: the search looked most at " +
    "the first choices, so their win rates are the surer; a higher rate from fewer visits may be luck") : null,
    h("tr", {}, h("th", {}, "now"), h("th", {}, "win"), h("th", {}, "visits")),
    ...alts.map(x => h("tr", {}, h("td", {}, x.action.text),
      h("td", {}, pct(x.winProbability || 0)), h("td", {}, x.visits || 0))));
}

// ------------------------------------------------------------------------------------------ what happened
const tname = (desc, x) => { const tr = desc.territories[x] || {}; return tr.label || tr.name || `territory ${x}`; };
const tokenName = (t, p, k) => `${t.desc.playerNames[p || 0]}'s ${t.desc.army[k || 0].name}`;
const LOSS = { LOSS_KIND_ELIMINATED: "eliminated", LOSS_KIND_WOUNDED: "wounded", LOSS_KIND_STRICKEN: "stricken" };

// A short narration of an event's fights and plague draws, from its structured outcomes (never its text).
function narrate(t, ev) {
  const out = [], { desc } = t, names = desc ? desc.playerNames : [];
  if (!desc) return out;
  for (const o of ev.outcomes || []) {
    if (o.fight) {
      const f = o.fight, att = f.attacker || 0;
      const side = list => (list || []).map(x => `${tokenName(t, x.player, x.token)} (${x.strength || 0})`).join(", ");
      const lost = [...(f.attackersLost || []), ...(f.defendersLost || [])]
        .map(l => `${tokenName(t, l.player, l.token)} ${LOSS[l.result] || "lost"}`);
      const vp = (f.vpChanges || []).map(v => `${names[v.player || 0]} ${v.delta > 0 ? "+" : ""}${v.delta || 0} VP`);
      const defence = (f.defenders || []).length ? side(f.defenders) : "no defender";
      out.push({ kind: "fight", territories: [f.territory || 0], text:
        `Fight at ${tname(desc, f.territory || 0)}: ${side(f.attackers)} against ${defence}` +
        `${f.terrainBonus ? ` + terrain ${f.terrainBonus}` : ""}: ${f.attackStrength || 0} against ${f.defenceStrength || 0}, ` +
        `${f.attackerWon ? `${names[att]} wins` : `${names[att]} loses`}` +
        `${lost.length ? `; ${lost.join(", ")}` : ""}${vp.length ? `; ${vp.join(", ")}` : ""}.` });
    } else if (o.plague) {
      const p = o.plague, struck = p.territoriesStruck || [];
      const moved = p.villageBefore != null && p.villageAfter != null && p.villageBefore !== p.villageAfter;
      const victims = (p.victims || []).map(l => `${tokenName(t, l.player, l.token)} ${LOSS[l.result] || "hit"}`);
      out.push({ kind: "plague", territories: struck, text:
        `Plague: ${p.name} (${p.effect})` +
        (moved ? `: the Plague Token goes from ${tname(desc, p.villageBefore)} to ${tname(desc, p.villageAfter)}` :
         p.villageAfter != null ? `: the Plague Token stays in ${tname(desc, p.villageAfter)}` : "") +
        `${struck.length ? `; struck: ${struck.map(x => tname(desc, x)).join(", ")}` : ""}` +
        `; ${victims.length ? victims.join(", ") : "nobody hit"}.` });
    }
  }
  return out;
}

function drawNarration(t) {
  const el = document.getElementById("narration");
  if (!el) return;
  el.replaceChildren(...t.narration.slice(-3).map(n => h("p", { class: `narration ${n.kind}`,
    "data-territories": n.territories.join(" ") }, n.text)));
}

// The centre of a territory's first cell, and of a player's Castle (where a token "from the Castle" comes from).
function cellCentre(desc, terr) {
  const cells = (desc.territories[terr] || {}).cells || [0, 0];
  return [cells[1] + 0.5, cells[0] + 0.5];
}
function castleTerritory(t, p) {
  const site = (t.obs.observation.players[p] || {}).castleSite;
  return site == null ? null : (t.desc.castleSites[site] || {}).territory || 0;
}

// The board shown is animated with what the events did, before it is redrawn: fought-over and plague-struck
// territories flash, a moved token slides from its old place to its new one (both marked), lost tokens fade.
// Returns whether anything was drawn.
async function animate(t, outcomes) {
  const svg = document.querySelector("svg.board");
  if (!svg || !t.desc) return false;
  const layer = svgEl("g", { class: "anim-layer" });
  const flash = (terr, kind) => {
    for (const [r, c] of cellsOf(t.desc.territories[terr])) layer.append(svgEl("rect", {
      class: `anim flash ${kind}`, "data-territory": terr, x: c + 0.03, y: r + 0.03, width: 0.94, height: 0.94, rx: 0.06 }));
  };
  const fade = losses => {
    for (const l of losses || []) {
      const node = svg.querySelector(`g.token[data-player="${l.player || 0}"][data-token="${l.token || 0}"]`);
      if (node) node.classList.add("anim", "anim-fade");
    }
  };
  for (const o of outcomes) {
    if (o.fight) { flash(o.fight.territory || 0, "fight"); fade(o.fight.attackersLost); fade(o.fight.defendersLost); }
    else if (o.plague) { for (const x of o.plague.territoriesStruck || []) flash(x, "plague"); fade(o.plague.victims); }
    else if (o.milady) fade(o.milady.infected);
    else if (o.reveal && o.reveal.territory != null) flash(o.reveal.territory, "reveal");
    else if (o.move) {
      const m = o.move, p = m.player || 0, from = m.fromTerritory ?? castleTerritory(t, p), to = m.toTerritory || 0;
      const [x2, y2] = cellCentre(t.desc, to);
      layer.append(svgEl("circle", { class: "anim move-to", "data-territory": to, cx: x2, cy: y2, r: 0.3 }));
      if (from != null) {
        const [x1, y1] = cellCentre(t.desc, from);
        layer.append(svgEl("circle", { class: "anim move-from", "data-territory": from, cx: x1, cy: y1, r: 0.3 }),
          svgEl("line", { class: "anim move-path", x1, y1, x2, y2 }));
      }
      const node = svg.querySelector(`g.token[data-player="${p}"][data-token="${m.token || 0}"]`);
      const circle = node && node.querySelector("circle");
      if (circle) {  // slide the token itself from where it stands to where it goes
        node.classList.add("anim", "anim-slide");
        node.getBoundingClientRect();  // the transition starts from where it stands
        node.style.transform = `translate(${x2 - Number(circle.getAttribute("cx"))}px, ${y2 - Number(circle.getAttribute("cy"))}px)`;
      }
    }
  }
  if (!layer.childNodes.length && !svg.querySelector(".anim")) return false;
  svg.append(layer);
  await new Promise(res => setTimeout(res, ANIMATION_MS));
  // the redraw that follows replaces it all; when there is none (the board already showed it), it is undone here
  layer.remove();
  for (const node of svg.querySelectorAll(".token.anim")) {
    node.classList.remove("anim", "anim-fade", "anim-slide");
    node.style.transform = "";
  }
  return true;
}

// ------------------------------------------------------------------------------------------ drawing the table
// The territory a legal action is played by clicking (Castle site, move, march, attack target); null otherwise.
const BOARD_KINDS = new Set(["ACTION_KIND_PLACE_CASTLE", "ACTION_KIND_MOVE", "ACTION_KIND_MARCH", "ACTION_KIND_ATTACK_DECLARE"]);
const HAND_KINDS = new Set(["ACTION_KIND_SELECT_ARMY_CARD", "ACTION_KIND_SELECT_TRADING_CARD", "ACTION_KIND_REVEAL"]);

// What can be picked now, each with where (a territory of the board, or null: a button) and what it does. A march
// is two picks: the token, then its destination (the token is only a step of the page, taken back by Undo).
function options(t, legal, bestId) {
  const st = t.stage, out = [];
  const marches = legal.filter(a => a.kind === "ACTION_KIND_MARCH");
  for (const a of legal) {
    if (HAND_KINDS.has(a.kind) || a.kind === "ACTION_KIND_MARCH") continue;
    out.push({ text: actionText(t, a), id: a.id, kind: a.kind, best: a.id === bestId, territory: BOARD_KINDS.has(a.kind) ? a.toTerritory ?? 0 : null,
               run: () => choose(t, a) });
  }
  if (marches.length && st && st.marchToken == null) {
    const bestAction = marches.find(a => a.id === bestId);
    const byToken = new Map();
    for (const a of marches) if (!byToken.has(a.token || 0)) byToken.set(a.token || 0, a);
    for (const [token, a] of byToken) {
      const where = a.fromTerritory ?? castleTerritory(t, t.seat);
      out.push({ text: `march with ${t.desc.army[token].name} (from ${a.fromCastle ? "its Castle" : tname(t.desc, where)})`,
                 best: !!bestAction && (bestAction.token || 0) === token, territory: where, token, kind: "march-token",
                 run: () => { st.marchToken = token; t.choice = null; render(t); focusFirstTarget(); } });
    }
  } else if (marches.length) {
    for (const a of marches) if ((a.token || 0) === st.marchToken)
      out.push({ text: a.text, id: a.id, kind: a.kind, best: a.id === bestId, territory: a.toTerritory ?? 0, run: () => choose(t, a) });
  }
  return out;
}

// An action's words: the engine's text, but for the passes, whose text ("pass") says nothing of what they do.
function actionText(t, a) {
  switch (a.kind) {
    case "ACTION_KIND_ATTACK_LAUNCH": return `launch the attack on ${tname(t.desc, a.toTerritory ?? 0)}`;
    case "ACTION_KIND_NO_ATTACK": return "no (further) attack";
    case "ACTION_KIND_END_MARCH": return "stop marching";
    default: return a.text;
  }
}

function focusFirstTarget() {
  const first = document.querySelector("#pick button, svg.board g.legal");
  if (first) first.focus();
}

function render(t) {
  const { desc, obs } = t;
  const o = obs.observation;
  const names = desc.playerNames;
  const me = t.seat, toAct = obs.toAct ?? null;
  const legal = currentLegal(t), st = t.stage;
  const key = decisionKey(t);
  const best = t.hint && t.hint.key === key && key ? (t.hint.advice.best || {}).id : null;
  const view = document.getElementById("view");
  const opts = options(t, legal, best);
  const boardActions = new Map();  // territory -> what clicking it picks
  for (const x of opts) if (x.territory != null) {
    if (!boardActions.has(x.territory)) boardActions.set(x.territory, []);
    boardActions.get(x.territory).push(x);
  }
  const side = h("div", { class: "side" });
  let decision;
  if (obs.finished) {
    const winners = (o.winners || []).map(w => names[w]);
    const vps = o.players.map((p, i) => `${names[i]} ${p.vp || 0}`).join(", ");
    decision = h("section", { class: "panel end", id: "end", role: "status" },
      h("h2", {}, (o.winners || []).includes(me) ? "You won!" : `${winners.join(" and ")} won`),
      h("p", {}, `Victory points: ${vps}`), h("p", {}, h("a", { href: "#" }, "Back to the lobby")));
  } else if (t.spectator) {
    decision = h("section", { class: "panel", id: "decision" }, h("h2", {}, "Watching (public view only)"),
      h("p", { class: "decision" }, toAct == null ? "…" : `${names[toAct]} to act: ${(PHASE[o.phase] || o.phase)
        .replace("your", "their").replace(/ \(click[^)]*\)/, "")}`),
      h("p", {}, h("a", { href: "#" }, "Back to the lobby")));
  } else if ((obs.legalActions || []).length) {
    const staged = staging(t);
    const everything = [...legal.filter(a => HAND_KINDS.has(a.kind)).map(a => ({ text: a.text, id: a.id, best: a.id === best,
      run: () => choose(t, a) })), ...opts];
    decision = h("section", { class: "panel", id: "decision", "aria-live": "polite" },
      h("p", { class: "decision" }, `Your turn (${names[me]}): ${PHASE[o.phase] || o.phase}`),
      staged ? stagedBar(t) : null,
      h("div", { class: "choices", id: "choices" }, ...opts.filter(x => x.territory == null).map(x =>
        h("button", { "data-action": x.id ?? null, "data-kind": x.kind, class: x.best ? "best" : "", onclick: x.run }, x.text))),
      t.choice ? h("div", { class: "choices", id: "pick" }, h("span", {}, "Which one? "),
        ...t.choice.map(x => h("button", { class: x.best ? "best" : "", onclick: x.run }, x.text))) : null,
      h("p", {}, h("button", { id: "hint-button", onclick: () => askHint(t), disabled: !key }, "Hint"), " ",
        h("button", { id: "analysis-toggle", "aria-pressed": String(t.analysis.on),
          onclick: () => { t.analysis.on = !t.analysis.on; render(t); } }, t.analysis.on ? "Analysis: on" : "Analysis: off"),
        " ", h("span", { class: "muted" }, "the Advisor, from your view only")),
      h("div", { id: "hint", class: "hint" }, t.hint && t.hint.key === key && key ? hintView(t) : null),
      h("div", { id: "analysis", class: "hint", "aria-live": "off" }),
      everything.length ? h("details", {}, h("summary", {}, `all ${everything.length} choices as a list`),
        h("div", { class: "choices" }, ...everything.map(x => h("button", { "data-action": x.id ?? null, class: x.best ? "best" : "",
          onclick: x.run }, x.text)))) : null);
  } else {
    decision = h("section", { class: "panel", id: "decision" },
      h("p", { class: "decision" }, toAct == null ? "…" : `Waiting for ${names[toAct]}: ${(PHASE[o.phase] || o.phase).replace("your", "their").replace(/ \(click[^)]*\)/, "")}`));
  }
  side.append(...[decision, h("section", { class: "panel narration-panel", id: "narration", "aria-live": "polite" }),
    playersView(t), t.spectator ? null : handView(t, legal, best), t.spectator ? null : invites(t)].filter(Boolean),
    h("section", { class: "panel" }, h("h3", {}, "What happened"),
      h("div", { class: "log", id: "log", tabindex: 0 }, ...t.log.slice(-80).map(x => h("div", {}, x)))));
  view.replaceChildren(h("div", { class: "table" }, h("div", { class: "board-wrap" }, board(t, boardActions),
    h("p", { class: "muted" }, `Turn ${o.turn || 0} of ${desc.turns}${o.tiebreak ? " (tie-break)" : ""}. ` +
      "Tokens: owner's initial and number; a dark token is plague-stricken. Squares: Castles. ☠: the Plague Token. ✚: the Convent on the Central Hill.")), side));
  const log = document.getElementById("log");
  if (log) log.scrollTop = log.scrollHeight;
  drawNarration(t);
  document.body.dataset.ui = `${obs.actionCount}:${st ? `${st.actions.length}:${st.marchToken}:${st.loading}:${st.done}` : ""}:${t.choice ? t.choice.length : 0}`;
  if (!t.spectator) { syncAnalysis(t); drawAnalysis(t); }
}

// The staged picks (not sent: nobody else sees them), with Undo and Confirm.
function stagedBar(t) {
  const st = t.stage, n = st.actions.length;
  const words = st.actions.map(a => actionText(t, a));
  if (st.marchToken != null) words.push(`march with ${t.desc.army[st.marchToken].name}…`);
  return h("div", { class: "staged", id: "staged", "data-count": n },
    h("p", {}, h("b", {}, "Not sent yet: "), words.length ? words.join(", then ") : h("span", { class: "muted" }, "nothing picked"),
      st.loading ? h("span", { class: "muted" }, " (asking what may follow…)") : null,
      st.done ? h("span", {}, " — the decision is complete: Confirm sends it") : null),
    h("p", { class: "choices" },
      h("button", { id: "undo", disabled: !(n || st.marchToken != null || t.choice), onclick: () => undo(t),
        "aria-keyshortcuts": "Backspace u" }, "Undo"),
      h("button", { id: "confirm", class: "primary", disabled: !n || st.loading, onclick: () => confirm(t),
        "aria-keyshortcuts": "Enter" }, `Confirm${n ? ` (${n})` : ""}`),
      h("span", { class: "muted" }, "Undo: Backspace or u. Confirm: Enter.")));
}

function hintView(t) {
  const a = t.hint.advice, names = t.desc.playerNames;
  return h("div", {},
    h("p", {}, h("b", {}, "Plan: "), (a.plan || []).map(x => x.text).join(", then ")),
    alternativesTable(a),
    ...[...beliefsByPlayer(a)].map(([p, bs]) => h("p", { class: "muted" }, `${names[p]} probably selected: `,
      bs.slice(0, 4).map(b => `${b.card} ${pct(b.probability)}`).join(", "))));
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

// The seat's own cards: the hand (Army Cards then Trading Cards), its secret selection marked (staged picks
// dashed), legal picks clickable.
function handView(t, legal, best) {
  const { desc, obs } = t, me = obs.observation.players[t.seat], own = obs.observation.ownSelection || {};
  const byToken = new Map(), byTrade = new Map();
  for (const a of legal) {
    if (a.kind === "ACTION_KIND_SELECT_ARMY_CARD" || a.kind === "ACTION_KIND_REVEAL") byToken.set(a.token || 0, a);
    if (a.kind === "ACTION_KIND_SELECT_TRADING_CARD") byTrade.set(a.tradingCard || 0, a);
  }
  const staged = (t.stage && t.stage.actions) || [];
  const stagedTokens = new Set(staged.filter(a => a.kind === "ACTION_KIND_SELECT_ARMY_CARD").map(a => a.token || 0));
  const stagedTrade = staged.find(a => a.kind === "ACTION_KIND_SELECT_TRADING_CARD");
  const selected = new Set(own.armyCards || []);
  const army = desc.army.map((c, j) => {
    const tk = me.tokens[j] || {}, action = byToken.get(j), mark = selected.has(j) ? " selected" : stagedTokens.has(j) ? " staged" : "";
    return h("button", { class: `card${mark}${tk.cardHeld ? "" : " gone"}${action && action.id === best ? " best" : ""}`,
      disabled: !action, "data-action": action ? action.id : null,
      "aria-label": `${c.name}${selected.has(j) ? ", selected" : stagedTokens.has(j) ? ", picked, not sent yet" : ""}${action ? `: ${action.text}` : ""}`,
      onclick: action ? () => choose(t, action) : null },
      h("div", { class: "num" }, tk.stricken ? c.black : c.red), h("div", {}, c.name));
  });
  const trading = desc.tradingCards.map((v, k) => {
    const action = byTrade.get(k), held = (me.tradingCardsHeld || [])[k];
    const mark = own.tradingCard === k ? " selected" : stagedTrade && (stagedTrade.tradingCard || 0) === k ? " staged" : "";
    return h("button", { class: `card${mark}${held ? "" : " gone"}${action && action.id === best ? " best" : ""}`,
      disabled: !action, "data-action": action ? action.id : null, "aria-label": `Trading Card ${v} shillings${action ? `: ${action.text}` : ""}`,
      onclick: action ? () => choose(t, action) : null }, h("div", { class: "num" }, v), h("div", {}, "shillings"));
  });
  return h("section", { class: "panel", "aria-label": "your cards" }, h("h3", {}, "Your cards"),
    h("div", { class: "hand", id: "army-hand" }, army), h("div", { class: "hand", id: "trading-hand", style: "margin-top:.4em" }, trading),
    h("p", { class: "muted" }, "Green: in your secret selection this turn. Dashed: picked, not sent yet. Faded: discarded."));
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

// The board (board.js, shared with the companion): what can be picked there clickable, the token being marched and
// the staged marches and attack target marked.
function board(t, boardActions) {
  const st = t.stage;
  const staged = ((st && st.actions) || [])
    .filter(a => a.toTerritory != null && ["ACTION_KIND_MARCH", "ACTION_KIND_ATTACK_DECLARE"].includes(a.kind))
    .map(a => a.toTerritory);
  return drawBoard(t.desc, t.obs.observation, { targets: boardActions, onPick: list => pickOnBoard(t, list), staged,
    marching: st && st.marchToken != null ? { player: t.seat, token: st.marchToken } : null });
}

function pickOnBoard(t, list) {
  if (list.length === 1) return list[0].run();
  t.choice = list;  // e.g. which token marches from there, or which Castle site of a joined corner
  render(t);
  focusFirstTarget();
}

// ------------------------------------------------------------------------------------------ spectators
// The public view (GetObservation's public_view: no seat, no hand) redrawn from the public event stream.
async function showWatch(matchId) {
  const t = newTable({ matchId, spectator: true });
  try {
    await refresh(t);
  } catch (e) { setStatus(e.message, true); return; }
  follow(t, { matchId });
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
  if (T) { T.abort.abort(); stopAnalysis(T); T = null; }
  if (parts[0] === "replay" && parts.length === 2) return showReplay(document.getElementById("view"), setStatus, { matchId: parts[1] });
  if (parts[0] === "replay-file") return showReplay(document.getElementById("view"), setStatus, {});
  if (parts[0] === "companion") return showCompanion(document.getElementById("view"), setStatus);
  return showLobby();
}
window.addEventListener("hashchange", route);
route();
