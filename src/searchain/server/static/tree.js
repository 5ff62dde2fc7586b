// The reasoning of a trace as an SVG tree: any method's Trace.nodes with parent links.
// SearChain: rounds are branches hanging off the node that got feedback (the feedback is drawn
// on that edge); nodes are coloured by knowledge source. Think&Cite: each node shows its
// action, visits N, value V and reward R, and the chosen path (meta.chosen) is outlined, edges
// included. REBEL: each node shows the tool it called (name and input) or that it answered
// from memory, and how many facts it had. Every node's meta is in full in the details panel.

const SVG = "http://www.w3.org/2000/svg";
const W = 236, GAP_X = 24, GAP_Y = 46, PAD = 16, LINE = 16;
const KNOWN = ["llm", "ir-corrected", "ir-completed", "retrieval", "tool", "question"];
const META_KEYS = ["visits", "value", "reward", "depth", "status", "tool", "facts", "round"];

function el(name, attrs = {}, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

export function clip(s, n) {
  s = String(s ?? "");
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

const num = (v) => (typeof v === "number" && !Number.isInteger(v) ? v.toFixed(2) : String(v ?? "—"));

// Short "visits 3 · value 0.42" line from whatever meta a node has.
export function metaSummary(meta) {
  const parts = [];
  for (const k of META_KEYS) {
    if (!(k in (meta || {}))) continue;
    let v = meta[k];
    if (Array.isArray(v)) v = `${v.length}`;
    else if (k === "tool" && v && typeof v === "object") v = v.name ?? "?";
    else if (typeof v === "object") continue;
    else v = num(v);
    parts.push(`${k} ${v}`);
  }
  return parts.join(" · ");
}

// A tool call's input in a few words: {"q": "Meryl Streep"} -> "Meryl Streep".
function toolInput(input) {
  if (input == null) return "";
  if (typeof input !== "object") return String(input);
  const vals = Object.values(input);
  if (vals.length === 1 && typeof vals[0] !== "object") return String(vals[0]);
  return JSON.stringify(input);
}

const isChosen = (n, trace) =>
  Boolean(n.meta?.chosen) || (trace.meta?.chosen_path || []).includes(n.id);

// The lines under a node's query and answer: what its method recorded about it.
export function nodeLines(n, trace = {}) {
  const m = n.meta || {};
  if ("visits" in m) { // Think&Cite's search tree
    const r = m.reward == null ? "" : ` · R ${num(m.reward)}`;
    const cites = (m.citations || []).map((c) => `[${c}]`).join("");
    return [`N ${m.visits} · V ${num(m.value)}${r}`,
      [m.action ?? n.source, isChosen(n, trace) ? "chosen path" : "", cites && `cites ${cites}`]
        .filter(Boolean).join(" · ")];
  }
  if ("facts" in m || "memory_check" in m || (m.tool && typeof m.tool === "object")) { // REBEL
    const t = m.tool && typeof m.tool === "object" ? m.tool : null;
    // Without a tool call (memory check said yes, a budget ran out) the answer is from memory.
    const how = t
      ? `tool ${t.name ?? "?"}(${toolInput(t.input)})${t.error ? " failed" : ""}`
      : "answered from memory";
    const facts = (m.facts || []).length;
    const subs = (m.split?.subquestions || []).length;
    return [how, [`depth ${m.depth ?? 0}`, `${facts} fact${facts === 1 ? "" : "s"}`,
      subs && `split in ${subs}`, m.note && "note"].filter(Boolean).join(" · ")];
  }
  return [`${n.source} · ${metaSummary(m) || n.id}`];
}

// Tidy-enough layout: leaves take consecutive columns, parents sit above their children.
function layout(nodes) {
  const ids = new Set(nodes.map((n) => n.id));
  const kids = new Map();
  const roots = [];
  for (const n of nodes) {
    if (n.parent != null && ids.has(n.parent) && n.parent !== n.id) {
      if (!kids.has(n.parent)) kids.set(n.parent, []);
      kids.get(n.parent).push(n);
    } else roots.push(n);
  }
  const pos = new Map();
  let col = 0, maxDepth = 0;
  const seen = new Set();
  function place(n, depth) {
    if (seen.has(n.id)) return; // a cycle in bad data must not hang the page
    seen.add(n.id);
    maxDepth = Math.max(maxDepth, depth);
    const children = kids.get(n.id) || [];
    children.forEach((c) => place(c, depth + 1));
    const xs = children.filter((c) => pos.has(c.id)).map((c) => pos.get(c.id).x);
    const x = xs.length ? (Math.min(...xs) + Math.max(...xs)) / 2 : col++;
    pos.set(n.id, { x, depth });
  }
  roots.forEach((r) => place(r, 0));
  return { pos, kids, cols: Math.max(col, 1), depth: maxDepth };
}

function feedbackFor(trace) {
  const by = new Map();
  for (const f of trace.meta?.feedback || []) by.set(f.node, f);
  return by;
}

export function renderTree(container, trace, onSelect) {
  container.replaceChildren();
  const nodes = trace.nodes || [];
  if (!nodes.length) {
    container.textContent = "This method recorded no reasoning nodes.";
    return null;
  }
  const { pos, kids, cols, depth } = layout(nodes);
  const feedback = feedbackFor(trace);
  const lines = new Map(nodes.map((n) => [n.id, nodeLines(n, trace)]));
  const H = 10 + LINE * (2 + Math.max(...[...lines.values()].map((l) => l.length)));
  // Room on the right for the feedback labels drawn beside the edges.
  const width = PAD * 2 + cols * (W + GAP_X) - GAP_X + (feedback.size ? 300 : 0);
  const height = PAD * 2 + (depth + 1) * (H + GAP_Y) - GAP_Y;
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "group",
    "aria-label": `Reasoning tree with ${nodes.length} nodes` });
  const at = (id) => {
    const p = pos.get(id);
    return { x: PAD + p.x * (W + GAP_X), y: PAD + p.depth * (H + GAP_Y) };
  };
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const edges = el("g", { class: "edges" });
  for (const [pid, children] of kids) {
    const a = at(pid);
    for (const c of children) {
      const b = at(c.id);
      const x1 = a.x + W / 2, y1 = a.y + H, x2 = b.x + W / 2, y2 = b.y;
      const f = feedback.get(pid);
      // The feedback edge leads from the corrected node into the next round's branch.
      const isFb = f && (c.meta?.round ?? 0) > (f.round ?? 0);
      const onPath = isChosen(c, trace) && isChosen(byId.get(pid), trace);
      const my = (y1 + y2) / 2;
      edges.append(el("path", { class: `edge${isFb ? " feedback" : ""}${onPath ? " chosen" : ""}`,
        "data-from": pid, "data-to": c.id,
        d: `M${x1},${y1} C${x1},${my} ${x2},${my} ${x2},${y2}` }));
      if (isFb) {
        const label = f.kind === "verify"
          ? `IR corrected: ${clip(f.llm_answer, 18)} → ${clip(f.reader_answer, 18)}`
          : `IR completed: ${clip(f.reader_answer, 30)}`;
        const t = el("text", { class: "edge-label", x: Math.max(x1, x2) + 6, y: my + 3 }, label);
        t.append(el("title", {}, `${f.kind}: ${f.llm_answer ?? ""} → ${f.reader_answer} (confidence ${f.confidence})`));
        edges.append(t);
      }
    }
  }
  svg.append(edges);
  const group = el("g", { class: "nodes" });
  for (const n of nodes) {
    const { x, y } = at(n.id);
    const src = KNOWN.includes(n.source) ? n.source : "other";
    // Think&Cite marks the path it chose; it is drawn with a heavier outline.
    const chosen = isChosen(n, trace);
    const extra = lines.get(n.id);
    // Think&Cite's root and End steps search nothing: show the question / the action.
    const action = n.meta?.action;
    const query = n.query || (n.parent == null ? trace.question : "") ||
      (action === "end" ? "End" : action ? `(${action})` : "(no query)");
    // SearChain kept the LLM's answer but IR did not confirm it: drawn dashed, said in words.
    const unconfirmed = n.meta?.status === "unconfirmed";
    // A yes/no node checked by NLI carries the judge's figures in its check, not a span.
    const said = unconfirmed && !n.meta.nli && n.meta.reader?.answer ?
      `; the reader said "${n.meta.reader.answer}"` : "";
    const note = unconfirmed ? [`unconfirmed: ${n.meta.check ?? ""}${said}`] : [];
    const g = el("g", { class: `node src-${src}${chosen ? " chosen" : ""}${unconfirmed ? " unconfirmed" : ""}`,
      transform: `translate(${x},${y})`, tabindex: "0", role: "button", "data-id": n.id,
      "data-source": n.source,
      "aria-label": `${n.source} node ${n.id}${chosen ? " (chosen path)" : ""}: ${query} — ` +
        `${n.answer ?? "no answer"}; ${[...extra, ...note].join("; ")}` });
    g.append(el("rect", { width: W, height: H, rx: 6 }));
    g.append(el("text", { class: "q", x: 8, y: 16 }, clip(query, 32)));
    g.append(el("text", { class: "a", x: 8, y: 16 + LINE }, "→ " + clip(n.answer ?? "—", 30)));
    extra.forEach((line, i) =>
      g.append(el("text", { class: "m", x: 8, y: 16 + LINE * (2 + i) }, clip(line, 36))));
    g.append(el("title", {}, `${query}\n→ ${n.answer ?? "—"}\n${[...extra, ...note].join("\n")}`));
    const select = () => {
      group.querySelectorAll(".selected").forEach((s) => s.classList.remove("selected"));
      g.classList.add("selected");
      onSelect?.(n);
    };
    g.addEventListener("click", select);
    g.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(); }
    });
    group.append(g);
  }
  svg.append(group);
  container.append(svg);
  return svg;
}

export function legend(trace = {}) {
  const ul = document.createElement("ul");
  ul.className = "legend";
  const names = { llm: "LLM", "ir-corrected": "corrected by IR", "ir-completed": "completed by IR",
    retrieval: "retrieval", tool: "tool", question: "question" };
  for (const [k, v] of Object.entries(names)) {
    const li = document.createElement("li");
    const sw = document.createElement("span");
    sw.className = k;
    li.append(sw, v);
    ul.append(li);
  }
  if ((trace.nodes || []).some((n) => isChosen(n, trace))) {
    const li = document.createElement("li");
    const sw = document.createElement("span");
    sw.className = "chosen";
    li.append(sw, "chosen path");
    ul.append(li);
  }
  return ul;
}
