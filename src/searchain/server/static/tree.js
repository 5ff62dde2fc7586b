// The reasoning of a trace as an SVG tree: any method's Trace.nodes with parent links.
// SearChain: rounds are branches hanging off the node that got feedback (the feedback is drawn
// on that edge); nodes are coloured by knowledge source. Think&Cite / REBEL: their node meta
// (visits, value, facts, tool calls...) is summarised on the node and shown in full on select.

const SVG = "http://www.w3.org/2000/svg";
const W = 236, H = 58, GAP_X = 24, GAP_Y = 46, PAD = 16;
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

// Short "visits 3 · value 0.42" line from whatever meta a node has.
export function metaSummary(meta) {
  const parts = [];
  for (const k of META_KEYS) {
    if (!(k in (meta || {}))) continue;
    let v = meta[k];
    if (Array.isArray(v)) v = `${v.length}`;
    else if (typeof v === "number" && !Number.isInteger(v)) v = v.toFixed(2);
    else if (typeof v === "object" && v !== null) continue;
    parts.push(`${k} ${v}`);
  }
  return parts.join(" · ");
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
  // Room on the right for the feedback labels drawn beside the edges.
  const width = PAD * 2 + cols * (W + GAP_X) - GAP_X + (feedback.size ? 300 : 0);
  const height = PAD * 2 + (depth + 1) * (H + GAP_Y) - GAP_Y;
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "group",
    "aria-label": `Reasoning tree with ${nodes.length} nodes` });
  const at = (id) => {
    const p = pos.get(id);
    return { x: PAD + p.x * (W + GAP_X), y: PAD + p.depth * (H + GAP_Y) };
  };
  const edges = el("g", { class: "edges" });
  for (const [pid, children] of kids) {
    const a = at(pid);
    for (const c of children) {
      const b = at(c.id);
      const x1 = a.x + W / 2, y1 = a.y + H, x2 = b.x + W / 2, y2 = b.y;
      const f = feedback.get(pid);
      // The feedback edge leads from the corrected node into the next round's branch.
      const isFb = f && (c.meta?.round ?? 0) > (f.round ?? 0);
      const my = (y1 + y2) / 2;
      edges.append(el("path", { class: isFb ? "edge feedback" : "edge",
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
    const chosen = n.meta?.chosen ? " chosen" : "";
    const g = el("g", { class: `node src-${src}${chosen}`, transform: `translate(${x},${y})`,
      tabindex: "0", role: "button", "data-id": n.id, "data-source": n.source,
      "aria-label": `${n.source} node ${n.id}: ${n.query} — ${n.answer ?? "no answer"}` });
    g.append(el("rect", { width: W, height: H, rx: 6 }));
    g.append(el("text", { class: "q", x: 8, y: 16 }, clip(n.query, 32)));
    g.append(el("text", { x: 8, y: 32 }, "→ " + clip(n.answer ?? "—", 30)));
    g.append(el("text", { x: 8, y: 48 }, clip(`${n.source} · ${metaSummary(n.meta) || n.id}`, 34)));
    g.append(el("title", {}, `${n.query}\n→ ${n.answer ?? "—"}\n${n.source} ${metaSummary(n.meta)}`));
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

export function legend() {
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
  return ul;
}
