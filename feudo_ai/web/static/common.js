// What the web app's pages share: calling the feudo.v1 services over the Connect protocol (JSON: one request, one
// answer; or a server stream of messages), building DOM elements, and reading an advice's figures.

export class RpcError extends Error {
  constructor(code, message) { super(`${code}: ${message}`); this.code = code; this.detail = message; }
}

export async function rpc(service, method, body) {
  const r = await fetch(`/feudo.v1.${service}/${method}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}),
  });
  const data = await r.json().catch(() => ({ code: "unknown", message: `HTTP ${r.status}` }));
  if (!r.ok) throw new RpcError(data.code, data.message);
  return data;
}

// A probability as a whole percentage: 0.125 -> "13%".
export const pct = p => `${Math.round(p * 100)}%`;

// An advice's beliefs ({player, card, probability}; a player 0 may be left out of the JSON) as a Map from each
// player to their beliefs, the most probable first.
export function beliefsByPlayer(advice) {
  const beliefs = new Map();
  for (const b of advice.beliefs || []) {
    const p = b.player || 0;
    if (!beliefs.has(p)) beliefs.set(p, []);
    beliefs.get(p).push(b);
  }
  for (const bs of beliefs.values()) bs.sort((x, y) => y.probability - x.probability);
  return beliefs;
}

// An HTML element: h("p", { class: "muted", onclick: f }, "text", child, ...).
export function h(tag, attrs = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v == null) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat()) if (kid != null) el.append(kid instanceof Node ? kid : String(kid));
  return el;
}

// One Connect server stream (application/connect+json envelopes): onMessage for each message; returns the
// end-of-stream error ({code, message}) or null. A fetch error (the network, or `signal` aborted) is thrown.
export async function serverStream(path, request, onMessage, signal) {
  const enc = new TextEncoder(), dec = new TextDecoder();
  const payload = enc.encode(JSON.stringify(request));
  const body = new Uint8Array(5 + payload.length);
  new DataView(body.buffer).setUint32(1, payload.length);
  body.set(payload, 5);
  const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/connect+json" }, body, signal });
  const reader = r.body.getReader();
  let buf = new Uint8Array(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return null;
    const joined = new Uint8Array(buf.length + value.length);
    joined.set(buf); joined.set(value, buf.length); buf = joined;
    while (buf.length >= 5) {
      const n = new DataView(buf.buffer, buf.byteOffset).getUint32(1);
      if (buf.length < 5 + n) break;
      const flags = buf[0], msg = JSON.parse(dec.decode(buf.subarray(5, 5 + n)) || "{}");
      buf = buf.slice(5 + n);
      if (flags & 2) return msg.error || null;
      if (onMessage(msg) === false) return null;
    }
  }
}
