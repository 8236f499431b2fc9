// What the web app's pages share: calling the feudo.v1 services over the Connect protocol (JSON), and building DOM
// elements.

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
