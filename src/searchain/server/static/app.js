// The viewer: ask (with live progress over server-sent events read from a fetch stream, so
// the bearer token can be sent), and browse evaluation runs. No build step, no dependencies.
import { renderTrace } from "./trace.js";

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = "searchain-token";

function headers(extra = {}) {
  const t = sessionStorage.getItem(TOKEN_KEY);
  return t ? { ...extra, Authorization: `Bearer ${t}` } : extra;
}

// A cited passage's page (GET /passages/{id}): on a service with a token its link carries
// the signature the service would give it, HMAC-SHA256 of "passage:<id>" under the token
// (server/cited.py), so the page opens in a new tab without the bearer header.
async function pageUrl(id) {
  const url = `/passages/${encodeURIComponent(id)}`;
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) return url;
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(token), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(`passage:${id}`)));
  const hex = [...mac].map((b) => b.toString(16).padStart(2, "0")).join("").slice(0, 32);
  return `${url}?cite=${hex}`;
}

function showError(message) {
  const e = $("error");
  e.textContent = message || "";
  e.hidden = !message;
}

async function failure(res) {
  let message = `HTTP ${res.status}`;
  try { message = (await res.json()).error || message; } catch { /* not JSON */ }
  if (res.status === 401) $("auth").hidden = false;
  return new Error(message);
}

async function api(path) {
  const res = await fetch(path, { headers: headers() });
  if (!res.ok) throw await failure(res);
  return res.json();
}

// -- tabs ----------------------------------------------------------------------------------
const tabs = [$("tab-ask"), $("tab-runs")];
function select(tab) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    $(t.getAttribute("aria-controls")).hidden = !on;
  }
  if (tab.id === "tab-runs") loadRuns();
}
tabs.forEach((t, i) => {
  t.addEventListener("click", () => select(t));
  t.addEventListener("keydown", (e) => {
    const d = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
    if (d) { const n = tabs[(i + d + tabs.length) % tabs.length]; n.focus(); select(n); }
  });
});

// -- ask -----------------------------------------------------------------------------------
function describe(ev) {
  const { event, time, ...d } = ev;
  switch (event) {
    case "start": return `started ${d.method}`;
    case "round": return `round ${d.n}`;
    case "chain": return `round ${d.n}: chain of ${d.queries?.length ?? 0} queries`;
    case "node": return `node ${d.id}: ${d.status} (${d.source})`;
    case "retrieve": return `search: ${d.query}`;
    case "llm": return `LLM call (${d.purpose ?? "?"})`;
    case "mcts_iteration": return `MCTS iteration ${d.i}, best value ${Number(d.best_value).toFixed(3)}`;
    case "subquestion": return `sub-question (depth ${d.depth}): ${d.text}`;
    case "tool": return `tool call: ${d.name}`;
    case "answer": return `answer: ${d.text}`;
    case "note": return `note: ${d.text}`;
    default: return `${event}: ${JSON.stringify(d)}`;
  }
}

function progress(text) {
  const li = document.createElement("li");
  li.textContent = text;
  $("progress").append(li);
  li.scrollIntoView({ block: "nearest" });
}

// Parse "event: x\ndata: {...}\n\n" blocks out of a byte stream.
async function* sse(body) {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let event = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (data) yield { event, data: JSON.parse(data) };
    }
  }
}

function options() {
  const out = {};
  for (const k of ["r_max", "max_tokens", "k"]) {
    const v = $(`opt-${k}`).value;
    if (v !== "") out[k] = Number(v);
  }
  if ($("opt-route").value) out.route = $("opt-route").value;
  return out;
}

async function ask(e) {
  e.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  showError("");
  const button = $("ask");
  button.disabled = true;
  $("progress").replaceChildren();
  $("live").hidden = false;
  $("ask-result").replaceChildren();
  $("ask-result").setAttribute("aria-busy", "true");
  try {
    const res = await fetch("/v1/ask/stream", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify({ question, method: $("method").value, options: options() }),
    });
    if (!res.ok) throw await failure(res);
    for await (const { event, data } of sse(res.body)) {
      if (event === "progress") progress(describe(data));
      else if (event === "error") throw new Error(data.error);
      else if (event === "trace") {
        progress("done");
        renderTrace($("ask-result"), data,
          (id) => api(`/v1/passages/context?id=${encodeURIComponent(id)}&around=1`), pageUrl);
      }
    }
  } catch (err) {
    showError(err.message);
  } finally {
    button.disabled = false;
    $("ask-result").setAttribute("aria-busy", "false");
  }
}

async function loadMethods() {
  try {
    const { methods, default: def } = await api("/v1/methods");
    const sel = $("method");
    sel.replaceChildren(...methods.map((m) => {
      const o = document.createElement("option");
      o.value = m.name;
      o.textContent = m.name;
      if (m.description) o.title = m.description;
      o.selected = m.name === def;
      return o;
    }));
  } catch (err) {
    showError(err.message);
  }
}

// -- runs ----------------------------------------------------------------------------------
function cell(tag, text) {
  const c = document.createElement(tag);
  c.textContent = text;
  return c;
}

function table(head, rows) {
  const t = document.createElement("table");
  const tr = document.createElement("tr");
  head.forEach((h) => tr.append(cell("th", h)));
  t.append(tr, ...rows);
  const wrap = document.createElement("div");
  wrap.className = "table-wrap";
  wrap.append(t);
  return wrap;
}

function button(text, label, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.setAttribute("aria-label", label);
  b.addEventListener("click", onClick);
  return b;
}

async function loadRuns() {
  try {
    const { runs } = await api("/v1/runs");
    const rows = runs.map((r) => {
      const tr = document.createElement("tr");
      const open = button(r.name, `Open run ${r.name}`, () => loadRun(r.name));
      const td = document.createElement("td");
      td.append(open);
      tr.append(td, cell("td", r.dataset ?? ""), cell("td", r.methods.join(", ")),
        cell("td", String(r.records)), cell("td", String(r.errors)));
      return tr;
    });
    $("runs").replaceChildren(runs.length
      ? table(["run", "dataset", "methods", "records", "errors"], rows)
      : cell("p", "No runs found in the server's runs directory (searchain eval --out runs/NAME)."));
  } catch (err) {
    showError(err.message);
  }
}

const pct = (c) => `${(100 * c.mean).toFixed(1)} [${(100 * c.lo).toFixed(1)}, ${(100 * c.hi).toFixed(1)}]`;

async function loadRun(name, failuresOnly = false) {
  try {
    const q = failuresOnly ? "?failures=true&limit=1000" : "?limit=1000";
    const d = await api(`/v1/runs/${encodeURIComponent(name)}${q}`);
    const names = [...new Set(d.metrics.flatMap((r) => Object.keys(r.metrics)))].sort();
    const mrows = d.metrics.map((r) => {
      const tr = document.createElement("tr");
      tr.append(cell("td", r.method), cell("td", String(r.items)), cell("td", String(r.failed)),
        ...names.map((n) => cell("td", r.metrics[n] ? pct(r.metrics[n]) : "–")));
      return tr;
    });
    const filter = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.id = "failures-only";
    box.checked = failuresOnly;
    box.addEventListener("change", () => loadRun(name, box.checked));
    filter.append(box, " failures only (errors and wrong answers)");
    const irows = d.items.map((it) => {
      const tr = document.createElement("tr");
      if (it.failure) tr.className = "fail";
      const td = document.createElement("td");
      td.append(button("trace", `Show the trace of ${it.id} (${it.method})`,
        () => loadItem(name, it.id, it.method)));
      const score = Object.entries(it.metrics).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ");
      tr.append(td, cell("td", it.method), cell("td", it.question),
        cell("td", it.status === "ok" ? it.answer : `error: ${it.error ?? ""}`), cell("td", score));
      return tr;
    });
    $("run-detail").replaceChildren(
      cell("h3", `Run ${d.name}: metrics (%, 95 % bootstrap CI)`),
      table(["method", "items", "failed", ...names], mrows),
      cell("h3", `Items (${d.total}${failuresOnly ? " failures" : ""})`),
      Object.assign(document.createElement("div"), { className: "filters" }),
      table(["", "method", "question", "answer", "metrics"], irows));
    $("run-detail").querySelector(".filters").append(filter);
    $("run-trace").replaceChildren();
  } catch (err) {
    showError(err.message);
  }
}

async function loadItem(run, id, method) {
  try {
    const path = `/v1/runs/${encodeURIComponent(run)}/items/${encodeURIComponent(id)}`;
    const d = await api(`${path}?method=${encodeURIComponent(method)}`);
    const rec = d.records[0];
    if (rec.trace) renderTrace($("run-trace"), rec.trace);
    else $("run-trace").replaceChildren(cell("p", `error: ${rec.error}`));
    $("run-trace").scrollIntoView({ block: "start" });
  } catch (err) {
    showError(err.message);
  }
}

// -- start ---------------------------------------------------------------------------------
$("token-save").addEventListener("click", () => {
  sessionStorage.setItem(TOKEN_KEY, $("token").value);
  $("auth").hidden = true;
  showError("");
  loadMethods();
});
$("ask-form").addEventListener("submit", ask);
$("question").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("ask-form").requestSubmit();
});
loadMethods();
