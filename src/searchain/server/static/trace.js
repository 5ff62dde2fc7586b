// A trace as a page section: the answer with clickable [n] marks, the cited passages, the
// reasoning tree and the details of the selected node. Model text is only ever set with
// textContent (never parsed as HTML).
import { clip, legend, metaSummary, nodeLines, renderTree } from "./tree.js";

function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

// "Paris is big [1]." -> text, <button class=cite>, text
// The reply named no short answer ("So the answer is"): how the one shown was had
// (methods/short_answer_reading.py; the same words as `ask`'s).
function shortAnswerNote(read) {
  if (!read) return "";
  return read.used ? " (the reply named no short answer; it was read out of the reply)"
    : " (the reply named no short answer; its sentence is shown as the answer)";
}

function answerWithMarks(text, trace, onCite) {
  const p = h("p", { class: "answer", id: "answer" });
  const origin = new Map((trace.citations || []).map((c) => [c.mark, c.origin]));
  const refs = trace.references || [];
  let last = 0;
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    p.append(text.slice(last, m.index));
    const n = Number(m[1]);
    if (n >= 1 && n <= refs.length && refs[n - 1].id) {
      const post = origin.get(n) === "post-hoc";
      const b = h("button", { type: "button", class: post ? "cite post-hoc" : "cite",
        "data-ref": String(n), "aria-label": `Show passage ${n}${post ? " (attributed post hoc)" : ""}` },
        `[${n}]`);
      b.addEventListener("click", () => onCite(n));
      p.append(b);
    } else {
      p.append(h("span", { class: "cite-bad", title: "points to no passage" }, m[0]));
    }
    last = m.index + m[0].length;
  }
  p.append(text.slice(last));
  return p;
}

// A meta value as text, a list or a nested table (never as HTML). A list of [question,
// answer] pairs (REBEL's facts) reads "question → answer"; a tool's output keeps its lines.
function metaValue(v, key = "", depth = 0) {
  if (v == null) return "—";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(+v.toFixed(4));
  if (typeof v !== "object") {
    return key === "output" || String(v).length > 160 ? h("pre", {}, String(v)) : String(v);
  }
  if (depth >= 3) return JSON.stringify(v);
  if (Array.isArray(v)) {
    if (!v.length) return "none";
    if (v.every((x) => typeof x === "number")) return v.join(", ");
    const pairs = v.every((x) => Array.isArray(x) && x.length === 2 && x.every((y) => typeof y === "string"));
    const ol = h("ol", pairs ? { class: "pairs" } : {});
    for (const x of v) ol.append(h("li", {}, pairs ? `${x[0]} → ${x[1]}` : metaValue(x, "", depth + 1)));
    return ol;
  }
  const entries = Object.entries(v);
  if (!entries.length) return "—";
  const dl = h("dl");
  for (const [k, x] of entries) dl.append(h("dt", {}, k), h("dd", {}, metaValue(x, k, depth + 1)));
  return dl;
}

function nodeDetail(box, n) {
  box.replaceChildren(h("h3", {}, `Node ${n.id}`));
  const dl = h("dl");
  const row = (k, v) => dl.append(h("dt", {}, k), h("dd", { "data-key": k }, v));
  row("query", n.query);
  row("answer", n.answer ?? "—");
  row("source", n.source);
  if (n.parent) row("parent", n.parent);
  for (const [k, v] of Object.entries(n.meta || {})) row(k, metaValue(v, k));
  for (const [i, p] of (n.passages || []).entries()) {
    row(`passage ${i + 1}`, `${p.title ? p.title + ": " : ""}${p.text}`);
  }
  box.append(dl);
}

// One line on the whole tree: Think&Cite's search, REBEL's recursion and budgets.
function treeNote(trace) {
  const m = trace.meta || {};
  const out = [];
  if (Array.isArray(m.chosen_path)) {
    out.push(`MCTS: ${m.iterations ?? "?"} iteration(s), chosen path ${m.chosen_path.join(" → ")}` +
      `${m.partial ? " (partial: ended before End)" : ""}`);
  }
  // read from the trace's shape, not the method's name: any recursion over tools reports it
  if (Array.isArray(m.facts) && "tool_calls" in m) {
    out.push(`${m.tool_calls ?? 0} tool call(s), ${(m.facts || []).length} fact(s), ` +
      `depth ${m.depth ?? 0}, ${m.llm_calls ?? "?"} LLM call(s)`);
  }
  // SearChain reading first: the route it took and why, as the trace words it
  if (m.route && typeof m.route.words === "string") out.push(m.route.words);
  for (const w of [...(m.limits || []), ...(m.warnings || [])]) out.push(`note: ${w}`);
  return out.map((t) => h("p", { class: t.startsWith("note: ") ? "warn" : "meta-line" }, t));
}

// What the model wrote, call by call (meta.llm_calls): the raw outputs before any parsing,
// so a chain that did not parse can be read as the model wrote it. Text only, never HTML.
function modelCalls(trace) {
  const calls = trace.meta?.llm_calls || [];
  if (!calls.length) return null;
  const box = h("details", { class: "calls" },
    h("summary", {}, `Model calls (${calls.length}, ${trace.meta?.prompt_form || "?"} form): what the model wrote`));
  for (const c of calls) {
    const head = `#${c.n} ${c.kind}${c.cached ? " · cached" : ""} · ${c.prompt_tokens} in / ` +
      `${c.completion_tokens} out · finish ${c.finish_reason ?? "?"} · request ${c.request}`;
    box.append(h("p", { class: "meta-line" }, head), h("pre", { class: "raw" }, c.output || "(empty)"));
  }
  return h("section", { class: "card", "aria-label": "Model calls" }, box);
}

// Where a passage of a user's document lies: "guide.pdf p. 12 · Installation".
function locator(p) {
  const s = p.source;
  if (!s || !s.path) return null;
  let where = s.path;
  if (s.page) where += ` p. ${s.page}`;
  if (s.row) where += ` row ${s.row}`;
  if (s.heading && s.heading.length) where += ` · ${s.heading.join(" › ")}`;
  return where;
}

// The passage between its neighbours in the document (loaded on request).
function inDocument(body, p, loadContext) {
  const button = h("button", { type: "button", class: "in-doc" }, "show in document");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const ctx = await loadContext(p.id);
      const doc = h("div", { class: "doc-context", "aria-label": `${locator(p)} in its document` });
      for (const q of ctx.before) doc.append(h("p", { class: "ctx-dim" }, q.text));
      doc.append(h("p", { class: "ctx-here" }, h("mark", {}, ctx.passage.text)));
      for (const q of ctx.after) doc.append(h("p", { class: "ctx-dim" }, q.text));
      body.replaceWith(doc);
      button.remove();
    } catch (e) {
      button.textContent = `no context: ${e.message}`;
    }
  });
  return button;
}

// How far to trust the answer: a calibrated probability keeps its number (a low one marked);
// a score that is not a probability shows none — what holds and what fails lead, then why it
// is not a probability (as `ask` says it); a withheld answer says so, with the guess.
export function confidenceLine(trace) {
  const c = trace.confidence;
  if (!c) return null;
  const low = c.value < 0.5;
  const parts = [h("strong", {}, "Confidence: ")];
  if (c.calibrated) {
    parts.push(h("span", { class: low ? "conf-low" : "conf-ok" }, c.value.toFixed(2)),
      ` (probability that it is right${low ? ", low" : ""})`);
    if (c.lowered_by?.length) parts.push(h("span", { class: "pid" }, ` · lowered by: ${c.lowered_by.join("; ")}`));
    if (c.raised_by?.length) parts.push(h("span", { class: "pid" }, ` · raised by: ${c.raised_by.join("; ")}`));
  } else {
    const holds = c.raised_by?.length ? c.raised_by.join("; ") : "nothing the checks could confirm";
    const fails = c.lowered_by?.length ? c.lowered_by.join("; ") : "no check failed";
    parts.push("not a probability (uncalibrated). ",  // no number: what holds and fails lead
      h("span", { class: "conf-ok" }, `What holds: ${holds}. `),
      h("span", { class: "conf-low" }, `What fails: ${fails}.`));
    if (c.note) parts.push(h("span", { class: "pid conf-note" }, ` · ${c.note}`));
  }
  const line = h("p", { class: "confidence", "data-calibrated": String(c.calibrated) }, ...parts);
  if (!c.abstained) return line;
  // A null threshold: --max-risk certified none for this answer; its terms say why.
  const why = c.threshold == null ? `, and ${c.terms || "no threshold is certified"}`
    : ` is below ${Number(c.threshold).toFixed(2)}`;
  return h("div", {}, h("p", { class: "warn abstained" },
    `Not answered: confidence ${c.value.toFixed(2)}${why}. ` +
    `Best unverified guess: ${trace.answer || "(none)"}`), line);
}

// A link to the passage's page on the service (citation_pages.py), its href filled in when
// the signed address is ready; none where the viewer shows a recorded run.
function pageLink(p, pageUrl) {
  if (!pageUrl) return null;
  const a = h("a", { class: "page-link", target: "_blank", rel: "noopener" }, "open as a page");
  pageUrl(p.id).then((url) => a.setAttribute("href", url)).catch(() => a.remove());
  return h("span", { class: "pid" }, " · ", a);
}

export function renderTrace(container, trace, loadContext = null, pageUrl = null) {
  container.replaceChildren();
  const refsList = h("ol", { class: "refs", id: "refs" });
  const highlight = (n) => {
    refsList.querySelectorAll(".highlight").forEach((li) => li.classList.remove("highlight"));
    const li = refsList.querySelector(`[data-ref="${n}"]`);
    if (!li) return;
    li.classList.add("highlight");
    li.scrollIntoView({ block: "center", behavior: "smooth" });
    li.focus({ preventScroll: true });
  };
  const text = trace.final_content || trace.answer || "(no answer)";
  const card = h("section", { class: "card", "aria-label": "Answer" },
    h("h2", {}, trace.question),
    answerWithMarks(text, trace, highlight),
    trace.answer && trace.answer !== text ? h("p", { class: "short" }, `Short answer: ${trace.answer}` +
      shortAnswerNote(trace.meta?.short_answer_read)) : null,
    h("p", { class: "meta-line" }, `${trace.method} · ${trace.rounds} round(s) · ` +
      `${trace.usage?.llm_calls ?? 0} LLM call(s)` +
      `${trace.usage?.cached_calls ? ` (+${trace.usage.cached_calls} cached)` : ""} · ` +
      `${(trace.wall_seconds ?? 0).toFixed(1)} s`));
  const conf = confidenceLine(trace);
  if (conf) card.append(conf);
  for (const e of trace.errors || []) card.append(h("p", { class: "warn" }, `warning: ${e}`));
  container.append(card);

  const refs = trace.references || [];
  const cited = new Set((trace.citations || []).filter((c) => c.passage_id).map((c) => c.mark));
  // Why SearChain's evidence step read each passage: the question's own words, or a node.
  const readAs = new Map(((trace.meta || {}).evidence?.passages || []).map((e) => [e.id, e.roles || []]));
  // SearChain's mark k is step k's passage; two steps may have found the same passage. It is
  // shown once, under its first mark; a later mark's entry points back to it.
  const firstOf = new Map();
  const groupCited = new Set();
  const firsts = refs.map((p, i) => {
    const key = `${p.id}\u0000${p.text}`;
    const first = p.id && firstOf.has(key) ? firstOf.get(key) : i + 1;
    if (first === i + 1) firstOf.set(key, first);
    if (cited.has(i + 1)) groupCited.add(first);
    return first;
  });
  refs.forEach((p, i) => {
    const mark = i + 1;
    if (firsts[i] !== mark) {
      refsList.append(h("li", { "data-ref": String(mark), tabindex: "-1", id: `ref-${mark}`, class: "same-as" },
        h("span", { class: "pid" }, `the same passage as [${firsts[i]}]`)));
      return;
    }
    const isCited = groupCited.has(mark);
    const where = locator(p);
    const body = h("div", {}, p.text);
    const li = h("li", { "data-ref": String(mark), tabindex: "-1", id: `ref-${mark}` },
      h("strong", {}, where || p.title || "(untitled)"), " ",
      h("span", { class: "pid" }, where ? (isCited ? "" : "not cited") : `${p.id}${isCited ? "" : " · not cited"}`),
      readAs.get(p.id)?.length ? h("span", { class: "pid read-as" }, ` · read as: ${readAs.get(p.id).join(", ")}`) : null,
      pageLink(p, pageUrl), body, where && loadContext ? inDocument(body, p, loadContext) : null);
    refsList.append(li);
  });
  container.append(h("section", { class: "card", "aria-label": "References" },
    h("h2", {}, "References"), refs.length ? refsList : h("p", {}, "No passages.")));

  const detail = h("div", { class: "node-detail", "aria-live": "polite" },
    h("p", { class: "meta-line" }, "Select a node (click, or Tab then Enter) to see its details."));
  const wrap = h("div", { class: "tree-wrap", id: "tree" });
  const n = (trace.nodes || []).length;
  container.append(h("section", { class: "card", "aria-label": "Reasoning" },
    h("h2", {}, `Reasoning (${n} node${n === 1 ? "" : "s"})`), ...treeNote(trace), legend(trace),
    wrap, detail));
  renderTree(wrap, trace, (node) => nodeDetail(detail, node));
  const calls = modelCalls(trace);
  if (calls) container.append(calls);
  container.dataset.nodes = String(n);
  return { highlight };
}

export { clip, metaSummary, nodeLines };
