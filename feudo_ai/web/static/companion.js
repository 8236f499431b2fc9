// The companion at a real table: a person plays Feudo on the physical board, enters here what happens there (chance,
// the other players' public actions, their own secret selection) and asks for advice for their seat.
//
// The page keeps the game as the services' history form of a Position (setup + entries, the other seats' secret picks
// hidden, R22) and holds no rule: at every step Advisor.LegalActions (include_next_entries, include_observation)
// says who acts and lists exactly the entries that may come next (chance's outcomes, the other seats' visible
// actions with the Trading Cards they turn over, the seat's own picks) and gives the seat's observation to draw.
// An event with a single possibility is entered for the person, with a line saying so. Advice is Advisor.Suggest
// for the seat. The game is kept in localStorage (a reload finds it) and can be downloaded and uploaded as a JSON
// file, which the services check before it replaces anything.

import { COLOURS, drawBoard } from "./board.js";
import { beliefsByPlayer, h, pct, rpc } from "./common.js";

const KEY = "feudo.companion";
const FORMAT = "feudo-companion-web/1";
export const ADVICE_LIMITS = { iterations: "5000", seed: "1" };  // fixed iterations and seed: the same advice every time
const NAMES = ["Blue", "White", "Yellow", "Red"];
const BOARD_KINDS = new Set(["ACTION_KIND_PLACE_CASTLE", "ACTION_KIND_MOVE", "ACTION_KIND_MARCH", "ACTION_KIND_ATTACK_DECLARE"]);

// What is being entered, by phase: the person reads it above the choices.
function explain(phase, who, mine) {
  return {
    PHASE_CHANCE_PLACER: "Who places the next Castle is chance: at the table the Coats-of-Arms are shuffled and one " +
      "is drawn (R21). Enter the player drawn.",
    PHASE_PLACE_CASTLE: `${mine ? "You place" : `${who} places`} a Castle: click its site on the board (highlighted) or choose it below.`,
    PHASE_CHANCE_DECIDER: "Who decides the order of play is chance: the players tied for the fewest VP draw (R5). Enter who was drawn.",
    PHASE_CHOOSE_ORDER: `${mine ? "You choose" : `${who} chooses`} the order of play for this turn.`,
    PHASE_SELECT: "Your secret selection, as you made it at the table: three Army Cards (in ascending order), then a Trading Card (R6).",
    PHASE_CHANCE_PLAGUE: "The plague card turned over at the table (R18): enter the card drawn.",
    PHASE_REVEAL: mine ? "Reveal one of your selected Army Cards." : `${who} reveals an Army Card: which card was turned over?`,
    PHASE_MOVE: "The revealed token moves (click where it went) or stays.",
    PHASE_MILADY: "The Milady charms a Baron, infects, or does neither (R13).",
    PHASE_MARCH: `${mine ? "You march" : `${who} marches`} with the Trading Card's shillings (click the destination), or stops (R9).`,
    PHASE_ATTACK: `${mine ? "You declare" : `${who} declares`} an attack (click the territory attacked), or no attack (R11).`,
    PHASE_ATTACK_JOIN: "Tokens join the declared attack, then it is launched (R11).",
    PHASE_ADVANCE: "Tokens advance into the won territory, or stop (R14).",
  }[phase] || "";
}

// ------------------------------------------------------------------------------------------ the game kept
function loadKept() {
  try { return JSON.parse(localStorage.getItem(KEY) || "null"); } catch { return null; }
}
function keep(game) {
  if (game) localStorage.setItem(KEY, JSON.stringify(game)); else localStorage.removeItem(KEY);
}
const position = game => ({ setup: game.setup, history: game.history });

// A file's shape, before the services check its content: a clear error naming the field.
function checkShape(doc) {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw new Error("the file: expected a JSON object");
  if (doc.format !== FORMAT) throw new Error(`format: expected "${FORMAT}", got ${JSON.stringify(doc.format)}`);
  if (!Number.isInteger(doc.seat) || doc.seat < 0) throw new Error(`seat: expected a seat number (0-3), got ${JSON.stringify(doc.seat)}`);
  if (doc.setup === null || typeof doc.setup !== "object" || Array.isArray(doc.setup)) throw new Error("setup: expected an object");
  if (doc.history === null || typeof doc.history !== "object" || Array.isArray(doc.history)) throw new Error("history: expected an object");
  if (doc.history.entries != null && !Array.isArray(doc.history.entries)) throw new Error("history.entries: expected a list");
  for (const k of ["typed", "log"]) if (doc[k] != null && !Array.isArray(doc[k])) throw new Error(`${k}: expected a list`);
  const n = (doc.history.entries || []).length;
  return { format: FORMAT, seat: doc.seat, setup: doc.setup, history: { castleSites: doc.history.castleSites || [], entries: doc.history.entries || [] },
           typed: (doc.typed || []).length === n ? doc.typed : (doc.history.entries || []).map(e => !("hiddenPick" in e)),
           log: (doc.log || []).length === n ? doc.log : (doc.history.entries || []).map((e, i) => `entry ${i + 1}`) };
}

// The services' answer for a game: who acts, the entries that may come next, the seat's observation. A service error
// names the field as the request has it ("position.history..."): said as the file has it.
async function ask(game) {
  try {
    return await rpc("Advisor", "LegalActions", { position: position(game), seat: game.seat,
                                                  includeObservation: true, includeNextEntries: true });
  } catch (e) {
    throw new Error(String(e.detail || e.message).replace(/\bposition\./g, ""));
  }
}

// ------------------------------------------------------------------------------------------ the page
let C = null;  // the companion shown

export async function showCompanion(view, setStatus) {
  C = { view, setStatus, game: null, desc: null, answer: null, advice: null, pending: null, error: "", busy: false };
  const c = C;
  const kept = loadKept();
  if (kept) {
    try {
      c.game = checkShape(kept);
      await settle(c);
    } catch (e) {
      c.game = null;
      c.error = `the game kept in this browser could not be read: ${e.message}`;
    }
  }
  draw(c);
  setStatus("");
}

// Ask the services about the game; enter the events that have only one possibility (each with a line saying so).
async function settle(c) {
  c.desc = c.desc && JSON.stringify(c.desc.setup) === JSON.stringify(c.game.setup) ? c.desc
    : (await rpc("Advisor", "DescribeGame", { setup: c.game.setup })).game;
  for (let guard = 0; guard < 500; guard++) {
    const answer = await ask(c.game);
    const next = answer.nextEntries || [];
    if (next.length !== 1) { c.answer = answer; break; }
    c.game.history.entries.push(next[0].entry);
    c.game.typed.push(false);
    c.game.log.push(`${next[0].text} (the only possible event: entered)`);
  }
  keep(c.game);
  document.body.dataset.companionEntries = c.game.history.entries.length;  // for tests and tools
}

async function act(c, fn) {
  if (c.busy) return;
  c.busy = true;
  c.error = "";
  try { await fn(); } catch (e) { c.error = e.message; }
  c.busy = false;
  if (c === C) draw(c);
}

// The person entered one of the possible events (a group: one action, its Trading Card variants).
function choose(c, group) {
  if (group.variants.length > 1) { c.pending = { group, chosen: [] }; c.choices = null; return draw(c); }
  enter(c, group.variants[0]);
}

function enter(c, next) {
  act(c, async () => {
    const before = JSON.stringify(c.game);
    c.game.history.entries.push(next.entry);
    c.game.typed.push(true);
    c.game.log.push(next.text);
    c.pending = null; c.choices = null; c.advice = null;
    try { await settle(c); } catch (e) { c.game = JSON.parse(before); throw e; }
  });
}

// Undo: the person's last entry, and the ones entered for them after it (they follow from it again).
function undo(c) {
  act(c, async () => {
    const last = c.game.typed.lastIndexOf(true);
    if (last < 0) throw new Error("nothing to undo: no event entered yet");
    for (const k of ["typed", "log"]) c.game[k] = c.game[k].slice(0, last);
    c.game.history.entries = c.game.history.entries.slice(0, last);
    c.pending = null; c.choices = null; c.advice = null;
    await settle(c);
  });
}

function advise(c) {
  act(c, async () => {
    c.advice = { thinking: true };
    draw(c);
    const r = await rpc("Advisor", "Suggest", { position: position(c.game), seat: c.game.seat, limits: ADVICE_LIMITS })
      .catch(e => { c.advice = null; throw new Error(`advice: ${e.detail || e.message}`); });
    c.advice = { advice: r.advice, at: c.game.history.entries.length };
  });
}

function start(c, form) {
  act(c, async () => {
    const players = Number(form.players.value), seat = Number(form.seat.value);
    const setup = { players };
    if (form.turns.value) setup.options = { turns: Number(form.turns.value) };
    const order = form.order.value.trim();
    if (order) setup.boardOrder = { boards: order.split(/[\s,]+/).map(Number) };
    else if (form.mapSeed.value) setup.mapSeed = String(form.mapSeed.value);
    if (seat >= players) throw new Error(`seat: ${NAMES[seat]} does not play in a ${players}-player game`);
    const game = { format: FORMAT, seat, setup, history: { castleSites: [], entries: [] }, typed: [], log: [] };
    c.desc = null;
    const previous = c.game;
    c.game = game;
    try { await settle(c); } catch (e) { c.game = previous; c.desc = null; throw e; }
    c.advice = null;
  });
}

function download(c) {
  const blob = new Blob([JSON.stringify(c.game, null, 1)], { type: "application/json" });
  const a = h("a", { href: URL.createObjectURL(blob), download: "feudo-companion.json" });
  document.body.append(a); a.click(); a.remove();
}

function upload(c, file) {
  act(c, async () => {
    let doc;
    try { doc = JSON.parse(await file.text()); } catch (e) { throw new Error(`${file.name}: not JSON (${e.message})`); }
    let game;
    try { game = checkShape(doc); } catch (e) { throw new Error(`${file.name}: ${e.message}`); }
    let desc;
    try {  // checked by the services before anything changes
      desc = (await rpc("Advisor", "DescribeGame", { setup: game.setup })).game;
      await ask(game);
    } catch (e) {
      throw new Error(`${file.name}: ${String(e.detail || e.message).replace(/\bposition\./g, "")}`);
    }
    c.game = game; c.desc = desc; c.pending = null; c.advice = null;
    await settle(c);
  });
}

function forget(c) {
  keep(null);
  c.game = null; c.answer = null; c.advice = null; c.pending = null; c.error = "";
  draw(c);
}

// ------------------------------------------------------------------------------------------ drawing
function draw(c) {
  if (c !== C) return;
  const tools = h("p", { class: "choices" },
    c.game ? h("button", { id: "companion-undo", onclick: () => undo(c) }, "Undo") : null,
    c.game ? h("button", { id: "companion-download", onclick: () => download(c) }, "Download the game") : null,
    h("label", { class: "button" }, "Upload a game ", h("input", { type: "file", id: "companion-upload", accept: ".json,application/json",
      onchange: e => e.target.files[0] && upload(c, e.target.files[0]) })),
    c.game ? h("button", { id: "companion-new", onclick: () => forget(c) }, "New game") : null);
  const error = h("p", { class: "error", id: "companion-error", role: "alert" }, c.error || "");
  if (!c.game) {
    c.view.replaceChildren(h("div", { class: "lobby" }, setupForm(c), h("section", { class: "panel" },
      h("h2", {}, "Go on with a game"), h("p", {}, "A game downloaded from the companion: "), tools, error)));
    return;
  }
  const { desc, answer, game } = c, o = answer.observation, names = desc.playerNames;
  const next = answer.nextEntries || [];
  const groups = [];  // one per action: the Trading Card variants of the same action together
  for (const n of next) {
    const key = n.action ? `a${n.action.id}` : "hidden";
    let g = groups.find(x => x.key === key);
    if (!g) groups.push(g = { key, id: n.action ? n.action.id : null, action: n.action, text: n.text.replace(/; Trading Cards turned over:.*/, ""), variants: [] });
    g.variants.push(n);
  }
  const best = c.advice && c.advice.advice && c.advice.at === game.history.entries.length ? (c.advice.advice.best || {}).id : null;
  const onBoard = new Map();
  for (const g of groups) {
    if (!g.action || !BOARD_KINDS.has(g.action.kind) || g.action.toTerritory == null) continue;
    const t = g.action.toTerritory || 0;
    if (!onBoard.has(t)) onBoard.set(t, []);
    onBoard.get(t).push(g);
  }
  const mine = answer.seatToAct === true;
  const who = answer.actor === "ACTOR_CHANCE" ? "chance" : answer.toAct != null ? names[answer.toAct] : "";
  const side = h("div", { class: "side" });
  let decision;
  if (!next.length) {
    const vps = o.players.map((p, i) => `${names[i]} ${p.vp || 0}`).join(", ");
    decision = h("section", { class: "panel end", id: "companion-end" }, h("h2", {}, "The game is over"),
      h("p", {}, `Winners: ${(o.winners || []).map(w => names[w]).join(", ")}. Victory points: ${vps}`));
  } else {
    decision = h("section", { class: "panel", id: "companion-next", "aria-live": "polite" },
      h("p", { class: "decision" }, `Next event: ${who === "chance" ? "chance" : mine ? `you (${names[game.seat]})` : who}`),
      h("p", { id: "companion-explain" }, explain(o.phase, who, mine)),
      c.pending ? tradeQuestion(c) : null,
      c.choices ? h("div", { class: "choices", id: "companion-pick" }, h("span", {}, "Which one? "),
        ...c.choices.map(g => h("button", { class: g.id === best ? "best" : "", onclick: () => choose(c, g) }, g.text))) : null,
      h("div", { class: "choices", id: "companion-choices" }, ...groups.map(g => h("button", {
        "data-action": g.id, class: g.id != null && g.id === best ? "best" : "", onclick: () => choose(c, g) }, g.text))),
      h("p", {}, h("button", { id: "companion-advise", disabled: !mine, onclick: () => advise(c) }, "Advise"), " ",
        h("span", { class: "muted" }, mine ? "the Advisor's plan for your seat, from what you have seen"
          : "advice is for your own decisions")),
      h("div", { id: "companion-advice", class: "hint" }, adviceView(c, names)));
  }
  side.append(decision, tools, error, playersView(c),
    h("section", { class: "panel" }, h("h3", {}, `What happened (${game.history.entries.length} events)`),
      h("div", { class: "log", id: "companion-log", tabindex: 0 }, ...game.log.slice(-80).map(x => h("div", {}, x)))));
  for (const g of groups) g.best = g.id != null && g.id === best;
  const svg = drawBoard(desc, o, { targets: onBoard, onPick: gs => {
    if (gs.length === 1) return choose(c, gs[0]);
    c.choices = gs; c.pending = null; draw(c);
  } });
  c.view.replaceChildren(h("div", { class: "table companion" }, h("div", {}, h("h2", {}, `Companion: ${names[game.seat]} at a real table`), svg,
    h("p", { class: "muted" }, `Turn ${o.turn || 0} of ${desc.turns}. Highlighted: where the next event may happen; click it, or choose it in the list.`)), side));
  const log = document.getElementById("companion-log");
  if (log) log.scrollTop = log.scrollHeight;
}

// The Trading Cards an action turned over, asked one by one among the services' variants of that action.
function tradeQuestion(c) {
  const { group, chosen } = c.pending, names = c.desc.playerNames, values = c.desc.tradingCards;
  const same = (n, k) => { const t = n.entry.tradingCardsRevealed || []; return t.length > k && (t[k].player || 0) === chosen[k][0] && (t[k].card || 0) === chosen[k][1]; };
  const left = group.variants.filter(n => chosen.every((_, k) => same(n, k)));
  if (left.length === 1) { setTimeout(() => enter(c, left[0])); return h("p", { class: "muted" }, "entering…"); }
  const k = chosen.length;
  const options = new Map();
  for (const n of left) {
    const t = (n.entry.tradingCardsRevealed || [])[k];
    if (t) options.set(`${t.player || 0}:${t.card || 0}`, [t.player || 0, t.card || 0]);
  }
  const player = [...options.values()][0][0];
  return h("div", { class: "choices", id: "companion-trade" },
    h("span", {}, `${group.text}: it turns over ${names[player]}'s Trading Card. Which one? `),
    ...[...options.values()].map(([p, card]) => h("button", { onclick: () => { chosen.push([p, card]); draw(c); } },
      `${values[card] || 0} shillings`)),
    h("button", { onclick: () => { c.pending = null; draw(c); } }, "cancel"));
}

function adviceView(c, names) {
  if (!c.advice) return null;
  if (c.advice.thinking) return h("p", { class: "muted" }, "thinking…");
  if (c.advice.at !== c.game.history.entries.length) return null;
  const a = c.advice.advice;
  return h("div", {},
    h("p", { id: "companion-plan" }, h("b", {}, "Plan: "), (a.plan || []).map(x => x.text).join(", then ")),
    h("table", { id: "companion-alternatives" }, h("tr", {}, h("th", {}, "now"), h("th", {}, "win"), h("th", {}, "visits")),
      ...(a.alternatives || []).map(x => h("tr", {}, h("td", {}, x.action.text),
        h("td", {}, pct(x.winProbability || 0)), h("td", {}, String(x.visits || 0))))),
    ...[...beliefsByPlayer(a)].map(([p, bs]) => h("p", { class: "muted belief" }, `${names[p]} probably selected: `,
      bs.slice(0, 6).map(b => `${b.card} ${pct(b.probability)}`).join(", "))),
    h("p", { class: "muted" }, `${a.stats.iterations || 0} iterations, seed ${ADVICE_LIMITS.seed}`));
}

function playersView(c) {
  const { desc, answer, game } = c, o = answer.observation, names = desc.playerNames, own = o.ownSelection || {};
  return h("section", { class: "panel players", "aria-label": "players" }, ...o.players.map((p, i) => {
    const revealed = (p.tokens || []).map((tk, j) => tk.cardRevealed ? desc.army[j].name : null).filter(Boolean);
    const bits = [];
    if (i === game.seat && (own.armyCards || []).length) bits.push(`your selection: ${own.armyCards.map(j => desc.army[j].name).join(", ")}` +
      (own.tradingCard != null ? `, ${desc.tradingCards[own.tradingCard]} shillings` : ""));
    else if (p.selectedArmyCards) bits.push(`${p.selectedArmyCards} card${p.selectedArmyCards > 1 ? "s" : ""} face down`);
    if (revealed.length) bits.push(`revealed: ${revealed.join(", ")}`);
    if (p.revealedTradingCard != null) bits.push(`trading card: ${desc.tradingCards[p.revealedTradingCard]} shillings`);
    return h("div", { class: `player${answer.toAct === i ? " to-act" : ""}`, "data-seat": i },
      h("span", { class: "swatch", style: `display:inline-block;width:1em;height:1em;border:1px solid #000;border-radius:50%;background:${COLOURS[names[i]]}` }),
      h("span", { class: "name" }, names[i], i === game.seat ? " (you)" : ""), h("span", { class: "vp" }, `${p.vp || 0} VP`),
      h("span", { class: "muted" }, bits.join(" · ")));
  }));
}

function setupForm(c) {
  const form = h("form", { id: "companion-setup", onsubmit: e => { e.preventDefault(); start(c, form); } },
    h("div", { class: "seat-row" }, h("label", {}, "Players ", h("select", { name: "players", id: "companion-players" },
      ...[2, 3, 4].map(n => h("option", { value: n }, `${n}`))))),
    h("div", { class: "seat-row" }, h("label", {}, "Your colour ", h("select", { name: "seat", id: "companion-seat" },
      ...NAMES.map((n, i) => h("option", { value: i }, n))))),
    h("div", { class: "seat-row" }, h("label", {}, "Turns ", h("input", { name: "turns", id: "companion-turns", type: "number", min: 1, max: 30, placeholder: "10", size: 4 }))),
    h("div", { class: "seat-row" }, h("label", {}, "Board order ", h("input", { name: "order", id: "companion-order", placeholder: "e.g. 2,0,3,1", size: 10 })),
      h("label", {}, " or map seed ", h("input", { name: "mapSeed", id: "companion-map-seed", type: "number", min: 0, placeholder: "0", size: 5 }))),
    h("p", { class: "muted" }, "Board order: the four boards (0-3 for a-d) as they lie at the table, top-left, top-right, " +
      "bottom-right, bottom-left; without it, the packaged assembly of the map seed."),
    h("p", {}, h("button", { class: "primary", id: "companion-start", type: "submit" }, "Follow a new game")));
  return h("section", { class: "panel" }, h("h2", {}, "The companion: a game on the real board"),
    h("p", {}, "Enter what happens at the table as it happens: chance (who places a Castle, who decides the order, the " +
      "plague card), the other players' visible actions (reveals, moves, marches, attacks, the Trading Cards turned over) and " +
      "your own secret selection. The others' selections are never asked for. At your decisions, Advise asks for the " +
      "Advisor's plan for your seat."), form);
}
