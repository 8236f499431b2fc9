// The Feudo board as SVG, drawn from DescribeGame's map (territories' grid cells) and one seat's observation:
// terrain, Castles, Cities' owners, tokens, the Plague Token, and the legal targets a click plays. Shared by the web
// table (app.js) and the companion (companion.js); it draws only what the observation holds, plus what the caller
// marks: a token being marched and the territories of staged (not yet sent) actions.

const SVGNS = "http://www.w3.org/2000/svg";
export const COLOURS = { Blue: "#0072B2", White: "#f4f4f4", Yellow: "#F0E442", Red: "#D55E00" };  // colour-blind safe
const TEXT_ON = { Blue: "#fff", White: "#000", Yellow: "#000", Red: "#000" };
const KIND = {
  TERRITORY_KIND_HILL: ["#d9c89e", "Hill"], TERRITORY_KIND_WOOD: ["#7fae63", "Wood"],
  TERRITORY_KIND_MOUNTAIN: ["#9a948c", "Mountain"], TERRITORY_KIND_VILLAGE: ["#efe0b0", "Village"],
  TERRITORY_KIND_CITY: ["#c99aa5", "City"], TERRITORY_KIND_CENTRAL_HILL: ["#e6cf8a", "Central Hill"],
};

// An SVG element: svgEl("rect", { x: 0, onclick: f }, child, ...).
export function svgEl(tag, attrs = {}, ...kids) {
  const el = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v); else el.setAttribute(k, v);
  }
  for (const kid of kids.flat()) if (kid != null) el.append(kid instanceof Node ? kid : String(kid));
  return el;
}

const s = svgEl;

// A territory's grid cells as [row, column] pairs (none for an unknown territory).
export function cellsOf(tr) {
  const out = [];
  for (let i = 0; i < ((tr || {}).cells || []).length; i += 2) out.push([tr.cells[i], tr.cells[i + 1]]);
  return out;
}

// The board from DescribeGame: each territory's grid cells, its kind, Castles, Cities' owners, tokens, the plague.
// targets: territory -> the entries a click there picks (each with its text, and best: the Advisor's pick), the only
// clickable places; onPick(entries) is called with them. marching: the {player, token} being marched (outlined);
// staged: the territories of staged actions (marked).
export function drawBoard(desc, o, { targets = new Map(), onPick = () => {}, marching = null, staged = [] } = {}) {
  const names = desc.playerNames;
  let rows = 0, cols = 0;
  for (const tr of desc.territories) for (const [r, c] of cellsOf(tr)) { rows = Math.max(rows, r + 1); cols = Math.max(cols, c + 1); }
  rows = desc.gridRows || rows; cols = desc.gridColumns || cols;
  const svg = s("svg", { class: "board", viewBox: `-0.45 -0.45 ${cols + 0.55} ${rows + 0.55}`, role: "img", "aria-label": "the board" });
  // coordinates: the column letters and row numbers of every place's name ("Wood C2": column C, row 2)
  const colName = c => { let out = ""; for (let n = c; n >= 0; n = Math.floor(n / 26) - 1) out = String.fromCharCode(65 + n % 26) + out; return out; };
  for (let c = 0; c < cols; c++) svg.append(s("text", { class: "coord", x: c + 0.5, y: -0.12, "font-size": 0.3, "text-anchor": "middle", fill: "#5a3a1a" }, colName(c)));
  for (let r = 0; r < rows; r++) svg.append(s("text", { class: "coord", x: -0.1, y: r + 0.6, "font-size": 0.3, "text-anchor": "end", fill: "#5a3a1a" }, String(r + 1)));
  const cityOwner = new Map((o.cityOwners || []).map(c => [c.territory || 0, c.player || 0]));
  for (const [id, tr] of desc.territories.entries()) {
    const [fill] = KIND[tr.kind] || ["#ccc", tr.kind];
    const g = s("g", { "data-territory": id }, s("title", {}, `${tr.label || tr.name}${cityOwner.has(id) ? `, ${names[cityOwner.get(id)]}'s City` : ""}`));
    for (const [r, c] of cellsOf(tr)) {
      g.append(s("rect", { class: "terr", x: c, y: r, width: 1, height: 1, fill }));
      if (cityOwner.has(id)) g.append(s("rect", { x: c + 0.05, y: r + 0.05, width: 0.9, height: 0.9, fill: "none",
        stroke: COLOURS[names[cityOwner.get(id)]], "stroke-width": 0.08 }));
      const mark = { TERRITORY_KIND_CITY: "City", TERRITORY_KIND_WOOD: "wood", TERRITORY_KIND_MOUNTAIN: "mtn", TERRITORY_KIND_VILLAGE: "vil" }[tr.kind];
      if (mark) g.append(s("text", { x: c + 0.5, y: r + 0.95, "font-size": 0.16, "text-anchor": "middle", fill: "#3b2f23" }, mark));
      if (tr.kind === "TERRITORY_KIND_CENTRAL_HILL") g.append(s("text", { x: c + 0.5, y: r + 0.6, "font-size": 0.4, "text-anchor": "middle" }, "✚"));
    }
    svg.append(g);
  }
  // Castles
  for (const [i, p] of o.players.entries()) {
    if (p.castleSite == null) continue;
    const site = desc.castleSites[p.castleSite] || {};
    // the site's own cell (the two halves of a joined corner are two cells); else the territory's first cell
    const [r, c] = ("row" in site || "column" in site) ? [site.row || 0, site.column || 0] : cellsOf(desc.territories[site.territory || 0])[0];
    svg.append(s("g", { class: "castle" }, s("title", {}, `${names[i]}'s Castle (${site.label || "site " + p.castleSite})`),
      s("rect", { x: c + 0.04, y: r + 0.04, width: 0.32, height: 0.32, fill: COLOURS[names[i]], stroke: "#000", "stroke-width": 0.03 }),
      s("text", { x: c + 0.2, y: r + 0.28, "font-size": 0.22, "text-anchor": "middle", fill: TEXT_ON[names[i]] }, names[i][0])));
  }
  // the Plague Token
  if (o.plague && o.plague.village != null) {
    const [r, c] = cellsOf(desc.territories[o.plague.village])[0];
    svg.append(s("text", { class: "plague-token", x: c + 0.82, y: r + 0.3, "font-size": 0.28, "text-anchor": "middle" }, s("title", {}, "the Plague Token"), "☠"));
  }
  // tokens
  const at = new Map();
  for (const [i, p] of o.players.entries()) for (const [j, tk] of (p.tokens || []).entries()) {
    if (tk.place !== "PLACE_MAP") continue;
    const terr = tk.territory || 0;
    if (!at.has(terr)) at.set(terr, []);
    at.get(terr).push({ player: i, index: j, stricken: !!tk.stricken });
  }
  for (const [terr, list] of at) {
    const [r, c] = cellsOf(desc.territories[terr])[0];
    list.forEach((tk, k) => {
      const x = c + 0.22 + (k % 3) * 0.28, y = r + 0.5 + Math.floor(k / 3) * 0.28 - (list.length > 3 ? 0.14 : 0);
      const card = desc.army[tk.index], name = names[tk.player];
      const num = tk.stricken ? card.black : card.red;
      const isMarching = !!marching && marching.token === tk.index && marching.player === tk.player;
      svg.append(s("g", { class: `token${isMarching ? " marching" : ""}`, "data-player": tk.player, "data-token": tk.index },
        s("title", {}, `${name} ${card.name}${tk.stricken ? " (plague-stricken)" : ""}`),
        s("circle", { cx: x, cy: y, r: 0.14, fill: tk.stricken ? "#222" : COLOURS[name], stroke: tk.stricken ? COLOURS[name] : "#000", "stroke-width": tk.stricken ? 0.05 : 0.02 }),
        s("text", { x, y: y + 0.055, "font-size": 0.14, "text-anchor": "middle", "font-weight": 700, fill: tk.stricken ? "#fff" : TEXT_ON[name] }, `${name[0]}${num}`)));
    });
  }
  // the staged marches and attack target: marked (they are this page's only)
  for (const terr of staged) {
    for (const [r, c] of cellsOf(desc.territories[terr])) svg.append(s("rect", { class: "staged-mark",
      "data-territory": terr, x: c + 0.1, y: r + 0.1, width: 0.8, height: 0.8, rx: 0.1 }));
  }
  // legal targets: only these are clickable
  for (const [terr, list] of targets) {
    const tr = desc.territories[terr];
    const label = list.length === 1 ? list[0].text : `${tr.label || tr.name}: ${list.length} choices`;
    const isBest = list.some(x => x.best);
    const g = s("g", { class: `legal${isBest ? " best" : ""}`, tabindex: 0, role: "button", "aria-label": label, "data-territory": terr,
      onclick: () => onPick(list),
      onkeydown: e => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onPick(list); } } },
      s("title", {}, label));
    for (const [r, c] of cellsOf(tr)) {
      g.append(s("rect", { x: c, y: r, width: 1, height: 1, fill: "#fff", "fill-opacity": 0.01 }));
      g.append(s("rect", { class: "hl", x: c + 0.06, y: r + 0.06, width: 0.88, height: 0.88, rx: 0.08,
        style: isBest ? "stroke:#0b61a4;stroke-width:.14;stroke-dasharray:none" : null }));
    }
    svg.append(g);
  }
  return svg;
}
