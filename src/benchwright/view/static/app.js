/* benchwright view: the viewer's page code (no build step, no network, no CDN).
 *
 * Data arrives as data/<key>.js files, `BW.receive(key, data)`, loaded by <script> tags: the
 * same files a server answers and a bundle holds (fetch() does not work from file://).
 * Everything a run holds is put into the page as text (textContent, text nodes), never as
 * markup; links are built only from the viewer's own routes. */
"use strict";

const BW = (window.BW = window.BW || {});
const UI = {};          // per-table and per-page state that survives a re-render
const MIN_CLUSTERS = 6; // intervals over fewer problems or tasks are marked (the reports' rule)
const POLL_MS = 3000;
let pollTimer = null;
let renderSeq = 0;

/* ---------- data loading ---------- */
const waiting = new Map();

BW.receive = function (key, data) {
  const entry = waiting.get(key);
  if (entry) { waiting.delete(key); entry.resolve(data); }
};

function load(key, fresh) {
  if (waiting.has(key) && !fresh) return waiting.get(key).promise;
  let resolve, reject;
  const promise = new Promise((ok, no) => { resolve = ok; reject = no; });
  waiting.set(key, { promise, resolve, reject });
  const tag = document.createElement("script");
  tag.src = "data/" + key.split("/").map(encodeURIComponent).join("/") + ".js" +
    (fresh ? "?t=" + Date.now() : "");
  tag.onload = () => { tag.remove(); const e = waiting.get(key); if (e && e.promise === promise) { waiting.delete(key); reject(new Error("no data")); } };
  tag.onerror = () => { tag.remove(); waiting.delete(key); reject(new Error("not found")); };
  document.head.appendChild(tag);
  return promise;
}

/* ---------- DOM ---------- */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.className = value;
    else if (name === "href") {
      if (typeof value !== "string" || !value.startsWith("#")) throw new Error("internal links only");
      el.setAttribute("href", value);
    } else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "style") Object.assign(el.style, value);
    else if (name === "open" || name === "checked" || name === "disabled" || name === "hidden") el[name] = true;
    else el.setAttribute(name, String(value));
  }
  add(el, children);
  return el;
}

function add(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) add(el, child);
    else el.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function route(...parts) { return "#/" + parts.map((p) => encodeURIComponent(String(p))).join("/"); }
function link(text, ...parts) { return h("a", { href: route(...parts) }, text); }

/* ---------- formatting ---------- */
const isNum = (v) => typeof v === "number" && isFinite(v);
function pct(v, digits = 1) { return isNum(v) ? (100 * v).toFixed(digits) + "%" : "–"; }
function num(v, digits = 3) {
  if (!isNum(v)) return "–";
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  return Math.abs(v) >= 1000 ? v.toLocaleString("en-US", { maximumFractionDigits: 0 }) : String(Number(v.toPrecision(digits)));
}
/* a cost: "unknown" when it is not known (never $0), "$x + unknown" when some parts are not */
function money(v, someUnknown) {
  if (!isNum(v) || (someUnknown && v === 0)) return "unknown";
  const text = "$" + (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v.toFixed(4));
  return someUnknown ? text + " + unknown" : text;
}
function moneySum(items, pick, unknownOf) {
  const known = items.map(pick).filter(isNum);
  return money(known.reduce((s, v) => s + v, 0), items.some((x) => !isNum(pick(x)) || (unknownOf && unknownOf(x))));
}
function tokens(v) {
  if (!isNum(v)) return "–";
  if (v >= 1e6) return (v / 1e6).toFixed(2) + "M";
  if (v >= 1e4) return (v / 1e3).toFixed(1) + "k";
  return v.toLocaleString("en-US");
}
function secs(v) {
  if (!isNum(v)) return "–";
  if (v < 60) return v.toFixed(v < 10 ? 2 : 1) + " s";
  const m = Math.floor(v / 60), s = Math.round(v % 60);
  if (m < 60) return m + "m " + String(s).padStart(2, "0") + "s";
  return Math.floor(m / 60) + "h " + String(m % 60).padStart(2, "0") + "m";
}
function when(iso) { return iso ? String(iso).replace("T", " ").replace(/:\d\d(\+00:00|Z)$/, "") : "–"; }
function few(est) { return est && est.n_clusters > 0 && est.n_clusters < MIN_CLUSTERS; }
function ciText(est, asPct = true) {
  if (!est || !isNum(est.value)) return "–";
  const f = asPct ? (v) => pct(v) : (v) => num(v);
  const lo = asPct ? (isNum(est.low) ? (100 * est.low).toFixed(1) : "–") : num(est.low);
  const hi = asPct ? (isNum(est.high) ? (100 * est.high).toFixed(1) : "–") : num(est.high);
  return f(est.value) + " [" + lo + ", " + hi + "]" + (few(est) ? " †" : "");
}
function badge(text, kind) { return h("span", { class: "badge b-" + String(kind || text).replace(/[^a-z-]/gi, "-").toLowerCase() }, text); }
function rateBar(v) { return h("span", { class: "ratebar" }, h("i", { style: { width: (isNum(v) ? 100 * v : 0) + "%" } })); }
function progressBar(p) {
  if (!p || !p.planned) return null;
  return h("span", { class: "progress", title: p.done + " / " + p.planned + " " + p.unit },
    h("i", { style: { width: Math.min(100, (100 * p.done) / p.planned) + "%" } }));
}
function status(row) {
  return h("span", {}, badge(row.status, row.status === "not finished" ? "not-finished" : row.status),
    row.running ? progressBar(row.progress) : null,
    row.running && row.progress ? h("span", { class: "small muted" }, " " + row.progress.done + "/" + row.progress.planned) : null);
}
function kv(pairs) {
  return h("dl", { class: "kv" }, pairs.filter((p) => p).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v === null || v === undefined || v === "" ? "–" : v)]));
}
function card(label, value, sub) { return h("div", { class: "card" }, h("div", { class: "k" }, label), h("div", { class: "v" }, value), sub ? h("div", { class: "ci" }, sub) : null); }
function pre(text, cls) { return h("pre", { class: cls || "" }, text === null || text === undefined ? "" : String(text)); }
function textFile(file, empty) {
  if (!file) return h("p", { class: "muted" }, empty || "(none)");
  return [pre(file.text), file.truncated ? h("p", { class: "small muted" }, "(cut: the file is longer)") : null];
}
function json(value) { try { return JSON.stringify(value, null, 2); } catch (e) { return String(value); } }

/* ---------- tables: sortable, filterable, paged ---------- */
function table(id, columns, rows, opts = {}) {
  const st = (UI[id] = UI[id] || { sort: opts.sort || null, dir: opts.dir || 1, q: "", page: 0 });
  const pageSize = opts.pageSize || 50;
  const box = h("div", {});
  const draw = () => {
    const q = st.q.trim().toLowerCase();
    let shown = q ? rows.filter((r) => columns.some((c) => String(c.text ? c.text(r) : value(c, r) ?? "").toLowerCase().includes(q))) : rows.slice();
    if (opts.where) shown = shown.filter(opts.where);
    if (st.sort !== null) {
      const col = columns.find((c) => c.key === st.sort);
      if (col) shown.sort((a, b) => compare(value(col, a), value(col, b)) * st.dir);
    }
    const pages = Math.max(1, Math.ceil(shown.length / pageSize));
    st.page = Math.min(st.page, pages - 1);
    const slice = shown.slice(st.page * pageSize, (st.page + 1) * pageSize);
    const head = h("tr", {}, columns.map((c) => h("th", {
      class: (c.num ? "num " : "") + (c.nosort ? "" : "sortable"),
      title: c.title || null,
      onclick: c.nosort ? null : () => { st.dir = st.sort === c.key ? -st.dir : (c.num ? -1 : 1); st.sort = c.key; draw(); },
    }, c.label, st.sort === c.key ? h("span", { class: "dir" }, st.dir > 0 ? "▲" : "▼") : null)));
    const body = slice.map((r) => h("tr", { class: opts.rowClass ? opts.rowClass(r) : null, "data-key": opts.rowKey ? opts.rowKey(r) : null, onclick: opts.onRow ? () => opts.onRow(r) : null },
      columns.map((c) => h("td", { class: c.num ? "num" : null }, c.render ? c.render(r) : fmtCell(c, r)))));
    box.replaceChildren(...[
      opts.filter === false ? null : h("div", { class: "row", style: { margin: "6px 0" } },
        h("input", { type: "search", placeholder: opts.placeholder || "Filter…", value: st.q, "aria-label": "filter " + id,
          oninput: (e) => { st.q = e.target.value; st.page = 0; const pos = e.target.selectionStart; draw(); const input = box.querySelector("input[type=search]"); input.focus(); input.setSelectionRange(pos, pos); } }),
        h("span", { class: "muted small" }, shown.length === rows.length ? rows.length + " rows" : shown.length + " of " + rows.length + " rows"),
        opts.tools || null),
      h("div", { class: "tablewrap" }, h("table", { id: id }, h("thead", {}, head), h("tbody", {}, body))),
      pages > 1 ? h("div", { class: "pager" },
        h("button", { disabled: st.page === 0, onclick: () => { st.page--; draw(); } }, "‹ prev"),
        "page " + (st.page + 1) + " of " + pages,
        h("button", { disabled: st.page >= pages - 1, onclick: () => { st.page++; draw(); } }, "next ›")) : null].filter(Boolean));
    if (opts.after) opts.after(slice, shown);
  };
  draw();
  return box;
}
function value(col, row) { return col.get ? col.get(row) : row[col.key]; }
function compare(a, b) {
  const na = a === null || a === undefined || (typeof a === "number" && !isFinite(a));
  const nb = b === null || b === undefined || (typeof b === "number" && !isFinite(b));
  if (na || nb) return na && nb ? 0 : na ? 1 : -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), "en", { numeric: true });
}
function fmtCell(col, row) { const v = value(col, row); return col.fmt ? col.fmt(v, row) : v === null || v === undefined ? "–" : String(v); }

/* ---------- charts (plotly, loaded once, after the page's text is on screen) ---------- */
let plotlyReady = null;
let chartsPending = 0;
function plotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!plotlyReady) {
    // after the page's text is painted: parsing plotly takes the main thread for a while
    plotlyReady = new Promise((ok, no) => requestAnimationFrame(() => setTimeout(() => {
      const tag = document.createElement("script");
      tag.src = "static/plotly.min.js";
      tag.onload = () => ok(window.Plotly);
      tag.onerror = () => no(new Error("plotly.min.js is missing"));
      document.head.appendChild(tag);
    }, 0)));
  }
  return plotlyReady;
}
function chartDone() { if (--chartsPending === 0) performance.mark("bw:charts"); }
/* plotly reads a few tags in its text (<b>, <br>, <a>); entities keep untrusted text literal */
function pt(s) { return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
const BASE_LAYOUT = { margin: { l: 60, r: 20, t: 36, b: 50 }, font: { family: "system-ui, sans-serif", size: 12 },
  paper_bgcolor: "#fff", plot_bgcolor: "#fff", hoverlabel: { align: "left" } };
function chart(title, traces, layout = {}, opts = {}) {
  const el = h("div", { class: "chart", style: { height: (opts.height || 320) + "px" } }, h("div", { class: "placeholder" }, "Drawing chart…"));
  const seq = renderSeq;
  chartsPending++;
  plotly().then((P) => {
    if (seq !== renderSeq || !el.isConnected) return;
    el.replaceChildren();
    const full = Object.assign({}, BASE_LAYOUT, { title: { text: pt(title), font: { size: 14 }, x: 0.01 } }, layout);
    P.newPlot(el, traces, full, { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"] });
    if (opts.onClick) el.on("plotly_click", (ev) => { const p = ev.points && ev.points[0]; if (p) opts.onClick(p); });
  }).catch((e) => { el.replaceChildren(h("div", { class: "placeholder" }, "Charts unavailable: " + e.message)); }).finally(chartDone);
  return el;
}
const STATUS_COLORS = { solved: "#2ea866", passed: "#f0b429", failed: "#d64545", infra: "#8e5cc9", "-": "#e4e7eb" };

/* ---------- layout ---------- */
function crumbs(...items) {
  const nav = document.getElementById("crumbs");
  nav.replaceChildren(...items.flatMap((it, i) => [i ? h("span", { class: "sep" }, "›") : null, typeof it === "string" ? h("span", {}, it) : it]).filter(Boolean));
}
function setLive(on) { document.getElementById("live").hidden = !on; }
function main(...children) { document.getElementById("main").replaceChildren(...children.flat(Infinity).filter(Boolean)); }
function section(title, ...children) { return [h("h2", { id: "s-" + title.toLowerCase().replace(/[^a-z0-9]+/g, "-") }, title), ...children]; }
function notFound(what) { return h("div", { class: "error" }, what + " is not available here (", h("a", { href: "#/" }, "back to the runs"), ")."); }

/* ---------- router ---------- */
const ROUTES = [
  [/^$/, pageRuns],
  [/^run\/([^/]+)$/, pageRun],
  [/^run\/([^/]+)\/p\/([^/]+)$/, pageProblem],
  [/^run\/([^/]+)\/cp\/([^/]+)\/(\d+)\/([^/]+)$/, pageCheckpoint],
  [/^run\/([^/]+)\/t\/(\d+)\/(\d+)$/, pageTrial],
  [/^cmp\/([^/]+)\/([^/]+)$/, pageCompare],
];

async function render(refresh) {
  const seq = ++renderSeq;
  clearTimeout(pollTimer);
  const path = decodeURIComponent(location.hash.replace(/^#\/?/, "")).split("?")[0];
  const found = ROUTES.map(([re, fn]) => [path.match(re), fn]).find(([m]) => m);
  if (!found) { crumbs(); main(notFound("This page")); return; }
  const [m, fn] = found;
  const y = window.scrollY;
  try {
    const live = await fn(...m.slice(1).map(decodeURIComponent), refresh);
    if (seq !== renderSeq) return;
    document.body.dataset.rendered = location.hash || "#/"; // tests wait for this
    if (!refresh) performance.mark("bw:rendered"); // the bench reads these marks
    setLive(!!live);
    if (refresh) window.scrollTo(0, y);
    if (live) pollTimer = setTimeout(() => render(true), POLL_MS);
  } catch (e) {
    if (seq !== renderSeq) return;
    setLive(false);
    main(notFound("This page"), h("p", { class: "muted small" }, String(e && e.message)));
    document.body.dataset.rendered = location.hash || "#/";
  }
}
window.addEventListener("hashchange", () => { render(false); window.scrollTo(0, 0); });
window.addEventListener("DOMContentLoaded", () => render(false));

/* ================================================================ pages ================================================================ */

/* ---------- the run list and overview ---------- */
async function pageRuns(refresh) {
  const data = await load("runs", refresh);
  crumbs("runs");
  const rows = data.runs;
  const st = (UI.runsPage = UI.runsPage || { track: "all", selected: new Set() });
  const coding = rows.filter((r) => r.track === "coding"), web = rows.filter((r) => r.track === "web");
  const pick = () => rows.filter((r) => st.selected.has(r.rid));
  const picked = pick();
  const focus = (picked.length ? picked : rows.filter((r) => st.track === "all" || r.track === st.track));
  const cols = runColumns(st, () => render(true));
  const tools = [
    h("select", { "aria-label": "track", onchange: (e) => { st.track = e.target.value; render(true); } },
      ["all", "coding", "web"].map((t) => h("option", { value: t, selected: st.track === t ? "selected" : null }, t === "all" ? "both tracks" : t + " runs"))),
    compareButton(picked),
    picked.length ? h("button", { onclick: () => { st.selected.clear(); render(true); } }, "clear selection (" + picked.length + ")") : null,
  ];
  main(
    h("h1", {}, "Runs"),
    h("p", { class: "ident" }, rows.length + " runs under ", data.folders.join(", "), ": ", coding.length + " coding, " + web.length + " web. ",
      "Select two runs of one track to compare them; select some to focus the overview."),
    h("div", { class: "cards" },
      card("runs", String(rows.length), coding.length + " coding · " + web.length + " web"),
      card("running now", String(rows.filter((r) => r.running).length)),
      card("model cost", moneySum(rows, (r) => r.cost, (r) => r.cost_unknown > 0), "over every run"),
      card("agent time", secs(rows.reduce((s, r) => s + (r.agent_s || 0), 0)))),
    data.unreadable.length ? h("div", { class: "notice" }, data.unreadable.length + " folder(s) could not be read as runs: ",
      data.unreadable.slice(0, 5).map((u) => h("div", { class: "small mono" }, u.path + ": " + u.error))) : null,
    table("runs", cols, rows, { sort: "created", dir: -1, tools, placeholder: "Filter runs (name, agent, model, suite, status)…",
      where: (r) => st.track === "all" || r.track === st.track, rowClass: (r) => (st.selected.has(r.rid) ? "sel" : null),
      after: (slice) => fillCis(slice) }),
    overview(focus.filter((r) => r.track === "coding"), focus.filter((r) => r.track === "web"), picked.length > 0, data.frontier));
  return data.live;
}

function runColumns(st, redraw) {
  return [
    { key: "sel", label: "", nosort: true, render: (r) => h("input", { type: "checkbox", "aria-label": "select " + r.name, checked: st.selected.has(r.rid),
      onclick: (e) => { e.stopPropagation(); e.target.checked ? st.selected.add(r.rid) : st.selected.delete(r.rid); redraw(); } }) },
    { key: "name", label: "run", render: (r) => h("div", {}, link(r.name, "run", r.rid), h("div", { class: "small muted mono" }, r.path)) , text: (r) => r.name + " " + r.path },
    { key: "track", label: "track", render: (r) => badge(r.track) },
    { key: "suite", label: "suite", text: (r) => r.suite + (r.start_from ? " start from " + r.start_from : ""),
      render: (r) => h("span", { title: r.suite_path || r.suite }, r.suite, r.start_from ? h("div", { class: "small muted", title: START_TITLE[r.start_from] }, "start from " + r.start_from) : null) },
    { key: "agent", label: "agent / model", get: (r) => r.agent + " " + (r.model || ""), render: (r) => [r.agent, r.model ? h("div", { class: "small muted" }, r.model) : null] },
    { key: "created", label: "started", fmt: when },
    { key: "status", label: "status", render: status },
    { key: "size", label: "size", get: (r) => r.problems.length * r.trials, title: "problems (or tasks) × trials",
      render: (r) => r.problems.length + (r.track === "coding" ? " problems" : " tasks") + " × " + r.trials },
    { key: "rate", label: "solve / pass rate", num: true, title: "coding: checkpoints solved; web: trials passed (95% CI, † fewer than 6 problems or tasks)",
      render: (r) => h("span", {}, rateBar(r.rate), pct(r.rate), h("div", { class: "small muted ci-cell", "data-rid": r.rid }, r.rate_ci ? ciText(r.rate_ci) : "")) },
    { key: "cost", label: "cost", num: true, render: (r) => money(r.cost, r.cost_unknown > 0), text: (r) => money(r.cost, r.cost_unknown > 0) },
    { key: "tokens", label: "tokens", num: true, fmt: tokens },
    { key: "agent_s", label: "agent time", num: true, fmt: secs },
  ];
}

/* the overview's CIs: computed by the server per run, for the rows on screen only */
function fillCis(slice) {
  for (const row of slice) {
    if (row.track !== "coding" || row.rate === null) continue;
    load("run/" + row.rid + "/ci").then((d) => {
      const m = d.metrics.find((x) => x.name === "checkpoints solved");
      document.querySelectorAll('.ci-cell[data-rid="' + row.rid + '"]').forEach((el) => { el.textContent = m ? ciText(m.estimate) : ""; });
    }).catch(() => {});
  }
}

function compareButton(picked) {
  const ok = picked.length === 2 && picked[0].track === picked[1].track;
  return h("button", { class: ok ? "primary" : "", disabled: !ok, title: "select two runs of one track",
    onclick: () => { location.hash = route("cmp", picked[0].rid, picked[1].rid); } }, "compare the two selected");
}

function overview(coding, web, focused, frontier) {
  const out = [];
  if (coding.length) {
    out.push(section("Coding overview", h("p", { class: "muted" }, (focused ? "The selected" : "All listed") + " coding runs (" + coding.length + "). Solve rates with 95% CIs for each run are in the table above and on its page.")));
    out.push(heatmap(coding));
    out.push(frontierCharts(coding, frontier));
    out.push(h("div", { class: "grid2" }, scatters(coding)));
    out.push(qualityDistributions(coding));
  }
  if (web.length) {
    out.push(section("Web overview", h("p", { class: "muted" }, web.length + " web runs: pass rate with its 95% CI (tasks resampled), and the template macro average.")));
    out.push(webBars(web));
  }
  return out;
}

const HEAT_ROWS = 200;
function heatmap(runs) {
  const problems = [...new Set(runs.flatMap((r) => Object.keys(r.heat || {})))].sort();
  const shown = runs.slice(0, HEAT_ROWS);
  const z = shown.map((r) => problems.map((p) => (r.heat && r.heat[p] && r.heat[p][1] ? r.heat[p][0] / r.heat[p][1] : null)));
  const text = shown.map((r) => problems.map((p) => (r.heat && r.heat[p] ? pt(r.name + " · " + p + ": " + r.heat[p][0] + "/" + r.heat[p][1] + " checkpoints solved") : "")));
  const y = shown.map((r, i) => pt(r.name) + "\u2009#" + (i + 1));
  const height = Math.max(260, 120 + 18 * shown.length);
  return [
    chart("Checkpoint solve rate, runs × problems", [{ type: "heatmap", z, x: problems.map(pt), y, customdata: text, hovertemplate: "%{customdata}<extra></extra>",
      text: shown.map((r) => problems.map((p) => (r.heat && r.heat[p] ? r.heat[p][0] + "/" + r.heat[p][1] : ""))), texttemplate: "%{text}", textfont: { size: 11, color: "#1d2433" },
      colorscale: [[0, "#d64545"], [0.5, "#f0b429"], [1, "#2ea866"]], zmin: 0, zmax: 1, xgap: 2, ygap: 2, colorbar: { title: { text: "solved" }, tickformat: ".0%" } }],
    { yaxis: { autorange: "reversed", automargin: true }, xaxis: { automargin: true, side: "top" }, margin: { l: 10, r: 10, t: 60, b: 10 } },
    { height, onClick: (p) => { const run = shown[p.pointIndex[0]]; if (run) location.hash = route("run", run.rid, "p", problems[p.pointIndex[1]]); } }),
    runs.length > HEAT_ROWS ? h("p", { class: "small muted" }, "Showing the first " + HEAT_ROWS + " of " + runs.length + " runs: filter or select to see others.") : null,
  ];
}

function scatters(runs) {
  // erosion, verbosity, cognitive erosion: SCBench's (scb-check's); runs without them get no point
  const axes = [["erosion", "erosion (mean per checkpoint)"], ["verbosity", "verbosity (mean per checkpoint)"],
    ["cog_erosion", "cognitive erosion (mean per checkpoint)"], ["cost_per_cp", "cost per checkpoint (USD)"], ["time_per_cp", "agent time per checkpoint (s)"]];
  return axes.map(([key, label]) => {
    const pts = runs.filter((r) => isNum(r[key]) && isNum(r.rate));
    return chart("Solve rate vs " + label, [{ type: "scatter", mode: "markers+text", x: pts.map((r) => r[key]), y: pts.map((r) => r.rate),
      text: pointLabels(pts, key), textposition: "top center", textfont: { size: 10, color: "#475467" }, cliponaxis: false,
      customdata: pts.map((r) => pt(r.name + " · " + r.agent + (r.model ? " · " + r.model : ""))), hovertemplate: "%{customdata}<br>" + pt(label) + ": %{x}<br>solved: %{y:.1%}<extra></extra>",
      marker: { size: 9, color: "#2f5fd0", opacity: 0.75 } }],
    { xaxis: { title: { text: pt(label) }, zeroline: false }, yaxis: { title: { text: "checkpoints solved" }, tickformat: ".0%", range: [-0.05, 1.15] } },
    { onClick: (p) => { const run = pts[p.pointIndex]; if (run) location.hash = route("run", run.rid); } });
  });
}

const QD_METRICS = [["loc", "LOC"], ["lint", "ruff findings"], ["astgrep", "ast-grep findings"], ["cc_high", "high-complexity callables"], ["churn_ratio", "churn ratio"]];
const QD_MAX_RUNS = 60;
function qualityDistributions(runs) {
  const box = h("div", {}, section("Quality change per checkpoint",
    h("p", { class: "muted" }, "Distribution over every scored checkpoint of the runs shown, by checkpoint position: how much each figure changed since the previous checkpoint.")));
  const holder = h("div", { class: "grid2" }, h("p", { class: "muted" }, "Loading…"));
  box.appendChild(holder);
  const some = runs.slice(0, QD_MAX_RUNS);
  Promise.all(some.map((r) => load("run/" + r.rid + "/qd").catch(() => null))).then((all) => {
    const byIndex = {};
    for (const d of all.filter(Boolean)) for (const [idx, metrics] of Object.entries(d.by_index)) {
      for (const [m, vals] of Object.entries(metrics)) ((byIndex[m] = byIndex[m] || {})[idx] = (byIndex[m][idx] || []).concat(vals));
    }
    holder.replaceChildren(...QD_METRICS.map(([m, label]) => {
      const idx = Object.keys(byIndex[m] || {}).sort((a, b) => a - b);
      if (!idx.length) return null;
      return chart("Δ " + label, idx.map((i) => ({ type: "box", name: "checkpoint " + i, y: byIndex[m][i], boxpoints: "outliers", marker: { color: "#2f5fd0" } })),
        { showlegend: false, yaxis: { zeroline: true, title: { text: "change" } } }, { height: 280 });
    }).filter(Boolean));
    if (!holder.children.length) holder.replaceChildren(h("p", { class: "muted" }, "No quality metrics in these runs (runs made with --no-metrics)."));
    if (runs.length > QD_MAX_RUNS) holder.appendChild(h("p", { class: "small muted" }, "From the first " + QD_MAX_RUNS + " runs shown; select runs to focus."));
  });
  return box;
}

function webBars(runs) {
  const shown = runs.filter((r) => r.rate_ci);
  if (!shown.length) return h("p", { class: "muted" }, "No scored web run yet.");
  const err = (key) => ({ type: "data", symmetric: false, array: shown.map((r) => r[key].high - r[key].value), arrayminus: shown.map((r) => r[key].value - r[key].low) });
  const names = shown.map((r, i) => pt(r.name) + "\u2009#" + (i + 1));
  return chart("Pass rate and template macro average (95% CI)", [
    { type: "bar", name: "pass rate", x: names, y: shown.map((r) => r.rate_ci.value), error_y: err("rate_ci"), marker: { color: "#17737a" } },
    { type: "bar", name: "macro average", x: names, y: shown.map((r) => (r.macro ? r.macro.value : null)), error_y: shown.every((r) => r.macro) ? err("macro") : undefined, marker: { color: "#7fc4c8" } },
  ], { barmode: "group", yaxis: { tickformat: ".0%", range: [0, 1.05] } }, { onClick: (p) => { const r = shown[p.pointIndex]; if (r) location.hash = route("run", r.rid); } });
}

/* ---------- one run ---------- */
async function pageRun(rid, refresh) {
  const d = await load("run/" + rid, refresh);
  crumbs(h("a", { href: "#/" }, "runs"), d.name);
  if (d.track === "web") return webRunPage(d);
  return codingRunPage(d);
}

const START_TITLE = { chain: "checkpoints 2+ continue the agent's own code", reference: "checkpoints 2+ start from the reference solution of the checkpoint before (a counterfactual start)" };
function identity(d) {
  return h("div", {},
    h("h1", {}, d.name, " ", badge(d.track), " ", status(d)),
    h("p", { class: "ident" }, "agent ", h("b", {}, d.agent), d.model ? [" · model ", h("b", {}, d.model)] : null,
      " · suite ", h("b", {}, d.suite), d.prompt ? [" · prompt ", h("b", {}, d.prompt)] : null, d.policy ? [" · pass policy ", h("b", {}, d.policy)] : null,
      d.start_from ? [" · start from ", h("b", { title: START_TITLE[d.start_from] }, d.start_from)] : null,
      " · trials ", h("b", {}, String(d.trials)), " · started ", when(d.created), " · benchwright ", d.version),
    h("p", { class: "ident small mono" }, d.path),
    d.running ? h("div", { class: "notice" }, "This run is in progress: " + d.progress.done + " of " + d.progress.planned + " " + d.progress.unit + " finished. The page refreshes as they finish.") : null);
}

function metricTable(id, metrics, asPct) {
  return table(id, [
    { key: "name", label: "metric" },
    { key: "value", label: "value", num: true, get: (m) => m.estimate.value, render: (m) => asPct ? pct(m.estimate.value) : num(m.estimate.value) },
    { key: "ci", label: "95% CI", nosort: true, render: (m) => isNum(m.estimate.low) ? "[" + (asPct ? pct(m.estimate.low) : num(m.estimate.low)) + ", " + (asPct ? pct(m.estimate.high) : num(m.estimate.high)) + "]" + (few(m.estimate) ? " †" : "") : "–" },
    { key: "n", label: "clusters", num: true, get: (m) => m.estimate.n_clusters },
  ], metrics, { filter: false, pageSize: 100 });
}

function codingRunPage(d) {
  const r = d.report, t = r.totals;
  const solved = r.solve_rates.find((m) => m.name === "checkpoints solved");
  const probs = r.solve_rates.find((m) => m.name === "problems solved");
  main(
    identity(d),
    h("div", { class: "cards" },
      card("checkpoints solved", solved ? pct(solved.estimate.value) : "–", solved ? "95% CI " + ciText(solved.estimate).replace(/^[^[]*/, "") : null),
      card("problems solved", probs ? pct(probs.estimate.value) : "–", probs ? "95% CI " + ciText(probs.estimate).replace(/^[^[]*/, "") : null),
      card("model cost", money(t.cost_usd, t.cost_unknown > 0), tokens(t.input_tokens) + " in · " + tokens(t.output_tokens) + " out"),
      card("agent time", secs(t.agent_time_s), t.steps + " steps"),
      card("grading time", secs(t.grading_time_s))),
    tabsNav(["Attempts", "Solve rates", "By checkpoint", "Failures", "Causes", r.grading_noise ? "Grading noise" : null, r.judge ? "LLM judge" : null, "Compare"].filter(Boolean)),
    section("Attempts", h("div", { class: "legend" }, legend()), gridTable(d)),
    section("Solve rates", metricTable("solve", r.solve_rates, true), h("h3", {}, "Tests passed by group"), metricTable("groups", r.group_pass_rates, true),
      r.quality.length ? [h("h3", {}, "Code quality (mean per checkpoint)"), metricTable("quality", r.quality, false)] : null,
      h("p", { class: "small muted" }, "95% percentile bootstrap CIs resampling problems, the same figures as report.md. † fewer than " + MIN_CLUSTERS + " problems: not to be trusted."),
      r.trials ? trialsTable(r.trials) : null),
    section("By checkpoint", h("div", { class: "grid2" }, perCheckpointCharts(r.per_checkpoint))),
    section("Failures", failures(d)),
    section("Causes", causesTable(r.failure_causes)),
    r.grading_noise ? section("Grading noise", gradingNoise(r.grading_noise, r.trials ? r.trials.between_trial_std : null, "checkpoint")) : null,
    d.result && (d.result.errors.length || d.result.agent_errors.length) ? section("Errors", d.result.errors.map((e) => pre(e)), d.result.agent_errors.map((e) => pre(e))) : null,
    r.judge ? section("LLM judge", judgeRun(r.judge, d.judge_criteria)) : null,
    section("Compare", compareWith(d)));
  return d.live;
}

function tabsNav(names) { return h("div", { class: "tabs" }, names.map((n) => h("a", { href: "#" + location.hash.slice(1), onclick: (e) => { e.preventDefault(); const el = document.getElementById("s-" + n.toLowerCase().replace(/[^a-z0-9]+/g, "-")); if (el) el.scrollIntoView(); } }, n))); }

function legend() {
  return [["solved", "✔", "every test passed"], ["passed", "◐", "passed the pass policy"], ["failed", "✘", "failed (the attempt ends)"], ["infra", "⚠", "provider error: not graded"], ["none", "·", "not reached"]]
    .map(([c, s, t]) => h("span", {}, h("span", { class: "cell c-" + c }, s), t));
}
const CELL = { solved: ["solved", "✔"], passed: ["passed", "◐"], failed: ["failed", "✘"], infra: ["infra", "⚠"], "-": ["none", "·"] };

function gridTable(d) {
  const rows = d.report.problems;
  const width = Math.max(0, ...rows.map((r) => r.cells.length));
  const tally = Object.fromEntries(d.tallies.map((t) => [t.problem, t]));
  return table("grid", [
    { key: "problem", label: "problem", render: (r) => link(r.problem, "run", d.rid, "p", r.problem) },
    { key: "trial", label: "trial", num: true },
    { key: "cells", label: "checkpoints", nosort: true, text: (r) => r.cells.join(" "), render: (r) => h("span", {}, r.cells.map((c, i) => {
      const [cls, sym] = CELL[c] || CELL["-"];
      const name = (d.checkpoints[r.problem] || [])[i] || "checkpoint " + (i + 1);
      const title = r.problem + " · trial " + r.trial + " · " + name + ": " + (cls === "none" ? "not reached" : cls);
      return c === "-" || c === "infra" ? h("span", { class: "cell c-" + cls, title, style: { marginRight: "3px" } }, sym)
        : h("a", { class: "cell c-" + cls, title, href: route("run", d.rid, "cp", r.problem, r.trial, name), style: { marginRight: "3px" } }, sym);
    })) },
    { key: "solved", label: "solved", num: true, get: (r) => r.cells.filter((c) => c === "solved").length, render: (r) => r.cells.filter((c) => c === "solved").length + "/" + width },
    { key: "rate", label: "problem rate", num: true, title: "checkpoints solved over the problem's scored attempts", get: (r) => (tally[r.problem] && tally[r.problem].checkpoints * tally[r.problem].attempts ? tally[r.problem].solved / (tally[r.problem].checkpoints * tally[r.problem].attempts) : null), fmt: (v) => pct(v) },
  ], rows, { pageSize: 100, placeholder: "Filter attempts (problem, outcome)…" });
}

function trialsTable(trials) {
  return [h("h3", {}, "Trials: pass@k and pass^k (" + trials.success + ")"),
    table("passk", [
      { key: "k", label: "k", num: true },
      { key: "at", label: "pass@k [95% CI]", get: (r) => r.pass_at_k.value, render: (r) => ciText(r.pass_at_k) },
      { key: "hat", label: "pass^k [95% CI]", get: (r) => r.pass_hat_k.value, render: (r) => ciText(r.pass_hat_k) },
    ], trials.overall, { filter: false })];
}

function perCheckpointCharts(rows) {
  if (!rows.length) return [h("p", { class: "muted" }, "No checkpoint graded yet.")];
  const names = [...new Set(rows.flatMap((r) => r.metrics.map((m) => m.name)))];
  return names.map((name) => {
    const pts = rows.map((r) => [r.index, r.metrics.find((m) => m.name === name)]).filter(([, m]) => m && isNum(m.estimate.value));
    const rate = name.includes("rate");
    return chart(name + " by checkpoint (95% CI)", [{ type: "scatter", mode: "lines+markers", x: pts.map(([i]) => i), y: pts.map(([, m]) => m.estimate.value),
      error_y: { type: "data", symmetric: false, array: pts.map(([, m]) => (m.estimate.high ?? m.estimate.value) - m.estimate.value), arrayminus: pts.map(([, m]) => m.estimate.value - (m.estimate.low ?? m.estimate.value)) },
      marker: { color: "#2f5fd0" }, hovertemplate: "checkpoint %{x}: %{y}<extra></extra>" }],
    { xaxis: { title: { text: "checkpoint" }, dtick: 1 }, yaxis: rate ? { tickformat: ".0%", range: [-0.05, 1.05] } : { zeroline: false } }, { height: 260 });
  });
}

function failures(d) {
  const list = d.report.failures;
  if (!list.length) return h("p", { class: "muted" }, "No attempt ended early.");
  return list.map((f) => h("div", { class: "panel" },
    h("div", { class: "row" }, h("b", {}, f.problem + " · trial " + f.trial + " · " + f.checkpoint), badge(f.reason, f.reason === "tests" ? "failed" : "infra"),
      f.reason === "infrastructure error" || f.reason === "not finished" ? null : link("open the checkpoint →", "run", d.rid, "cp", f.problem, f.trial, f.checkpoint)),
    f.detail ? pre(f.detail) : null,
    f.tests.listed.length ? h("div", {}, h("div", { class: "small muted" }, f.tests.n_failing + " failing test(s)" + (f.tests.n_failing > f.tests.listed.length ? ", the first " + f.tests.listed.length + ":" : ":")),
      f.tests.listed.map((t) => h("div", { class: "small" }, badge(t.group, "none"), " ", h("span", { class: "mono" }, t.name), t.message ? h("span", { class: "msg mono muted" }, " — " + t.message) : null))) : null));
}

// Failures by cause (issue 41): every cause of the closed set, its count, the baseline's when
// the report has one, a few examples; crashes with their exception types.
function causesTable(t) {
  if (!t) return h("p", { class: "muted" }, "Causes appear once the run is scored.");
  if (!t.n_failed) return h("p", { class: "muted" }, "Nothing failed.");
  const moved = t.n_baseline_failed !== null && t.n_baseline_failed !== undefined;
  const exc = (r) => Object.entries(r.exceptions).map(([k, v]) => k + " x" + v).join(", ");
  return h("div", { id: "causes-box" }, h("p", { class: "small muted" }, t.n_failed + " failed, each given one cause by the rules of docs/failure-causes.md."),
    table("causes", [
      { key: "cause", label: "cause", render: (r) => h("span", {}, r.cause, r.count && Object.keys(r.exceptions).length ? h("span", { class: "muted" }, " (" + exc(r) + ")") : null) },
      { key: "count", label: "failed", num: true },
      ...(moved ? [{ key: "baseline", label: "baseline", num: true }, { key: "change", label: "change", num: true, get: (r) => r.count - (r.baseline || 0), fmt: (v) => (v > 0 ? "+" : "") + v }] : []),
      { key: "examples", label: "examples", nosort: true, text: (r) => r.examples.map((u) => u.unit).join(" "), render: (r) => h("div", {}, r.examples.map((u) => h("div", { class: "small" }, h("span", { class: "mono" }, u.unit), u.detail ? h("span", { class: "msg mono muted" }, " — " + u.detail) : null))) },
    ], t.rows, { filter: false, pageSize: 100 }));
}

// `eval --repeat N` (grading_noise.json): the grader's own noise beside the agent's spread,
// every flaky test and every verdict that changed between gradings.
function gradingNoise(n, agentStd, unit) {
  const pts = (v) => isNum(v) ? (100 * v).toFixed(1) + " points" : "unknown";
  const marks = (o) => o.map((x) => x ? "pass" : "fail").join(" ");
  return h("div", { id: "noise-box" },
    h("div", { class: "cards" }, card("harness noise", pts(n.rate_std), "std of the pass rate over " + (n.repeats + 1) + " gradings"),
      card("agent spread", pts(agentStd), "std of the pass rate across trials"),
      card("flaky tests", String(n.flaky_tests.length), n.changed.length + " of " + n.n_units + " " + unit + "s changed verdict")),
    n.flaky_tests.length ? table("flaky", [
      { key: "test", label: "flaky test", render: (t) => h("span", { class: "mono" }, t.test) },
      { key: "unit", label: unit },
      { key: "outcomes", label: "outcome at each grading", nosort: true, text: (t) => marks(t.outcomes), render: (t) => marks(t.outcomes) },
    ], n.flaky_tests, { filter: false, pageSize: 100 }) : h("p", { class: "muted" }, "No test changed its outcome."),
    n.changed.length ? table("changed", [
      { key: "unit", label: unit + " whose verdict changed" },
      { key: "verdicts", label: "verdict at each grading", nosort: true, text: (c) => marks(c.verdicts), render: (c) => marks(c.verdicts) },
    ], n.changed, { filter: false }) : null);
}

function compareWith(d) {
  const holder = h("div", {}, h("p", { class: "muted" }, "Loading the other runs…"));
  load("runs").then((data) => {
    const others = data.runs.filter((r) => r.track === d.track && r.rid !== d.rid);
    if (!others.length) { holder.replaceChildren(h("p", { class: "muted" }, "No other " + d.track + " run here to compare with.")); return; }
    const select = h("select", { "aria-label": "baseline run" }, others.map((r) => h("option", { value: r.rid }, r.name + " · " + r.agent + (r.model ? " · " + r.model : ""))));
    holder.replaceChildren(h("div", { class: "row" }, "Compare this run with ", select, h("button", { class: "primary", onclick: () => { location.hash = route("cmp", d.rid, select.value); } }, "head to head")));
  }).catch(() => holder.replaceChildren());
  return holder;
}

/* ---------- one problem across checkpoints ---------- */
const PROBLEM_METRICS = [["quality/loc", "LOC"], ["quality/cc_high", "high-complexity callables"], ["mass/complexity", "complexity mass"], ["quality/lint", "ruff findings"],
  ["quality/astgrep", "ast-grep findings"], ["quality/erosion", "erosion"], ["agent/cost_usd", "cost (USD)"], ["agent/duration_s", "agent time (s)"]];

async function pageProblem(rid, problem, refresh) {
  const d = await load("run/" + rid + "/p/" + problem, refresh);
  crumbs(h("a", { href: "#/" }, "runs"), link(d.name, "run", rid), problem);
  const groups = [...new Set(d.trials.flatMap((t) => t.checkpoints.flatMap((c) => Object.keys(c.groups))))];
  const rows = d.trials.flatMap((t) => t.checkpoints.map((c) => ({ trial: t.trial, ...c })));
  const metric = (c, key) => c.metrics[key];
  main(
    h("h1", {}, problem), h("p", { class: "ident" }, "in run ", link(d.name, "run", rid), " · ", d.checkpoint_names.length + " checkpoints · " + d.trials.length + " trial(s)"),
    h("div", { class: "grid2" },
      chart("Tests passed per group", groups.map((g) => ({ type: "scatter", mode: "lines+markers", name: g + (d.trials.length > 1 ? " (all trials)" : ""),
        x: d.checkpoint_names.map(pt), y: d.checkpoint_names.map((n) => { const cs = rows.filter((r) => r.checkpoint === n && r.groups[g]); const p = cs.reduce((s, r) => s + r.groups[g][0], 0), tt = cs.reduce((s, r) => s + r.groups[g][1], 0); return tt ? p / tt : null; }) })),
      { yaxis: { tickformat: ".0%", range: [-0.05, 1.05] } }, { height: 280 }),
      PROBLEM_METRICS.map(([key, label]) => chart(label, d.trials.map((t) => ({ type: "scatter", mode: "lines+markers", name: "trial " + t.trial,
        x: t.checkpoints.map((c) => pt(c.checkpoint)), y: t.checkpoints.map((c) => { const v = metric(c, key); return isNum(v) ? v : null; }) })),
      { showlegend: d.trials.length > 1, xaxis: { type: "category", categoryarray: d.checkpoint_names.map(pt) } }, { height: 240 }))),
    section("Every checkpoint", table("problem-" + problem, [
      { key: "trial", label: "trial", num: true },
      { key: "checkpoint", label: "checkpoint", render: (r) => link(r.checkpoint, "run", rid, "cp", problem, r.trial, r.checkpoint) },
      { key: "outcome", label: "outcome", get: (r) => (r.solved ? "solved" : r.passed ? "passed" : "failed"), render: (r) => badge(r.solved ? "solved" : r.passed ? "passed" : "failed") },
      ...groups.map((g) => ({ key: "g-" + g, label: g, num: true, get: (r) => (r.groups[g] ? r.groups[g][0] / Math.max(1, r.groups[g][1]) : null), render: (r) => (r.groups[g] ? r.groups[g][0] + "/" + r.groups[g][1] : "–") })),
      ...PROBLEM_METRICS.map(([key, label]) => ({ key, label, num: true, get: (r) => metric(r, key), fmt: (v) => num(v) })),
    ], rows, { filter: false, pageSize: 200 })));
  return d.live;
}

/* ---------- one checkpoint ---------- */
async function pageCheckpoint(rid, problem, trial, checkpoint, refresh) {
  const d = await load("run/" + rid + "/cp/" + problem + "/" + trial + "/" + checkpoint, refresh);
  const rec = d.record;
  crumbs(h("a", { href: "#/" }, "runs"), link(d.name, "run", rid), link(problem, "run", rid, "p", problem), "trial " + trial, checkpoint);
  const at = d.reached.indexOf(checkpoint);
  const failing = d.tests.filter(isFailing);
  const leftOut = d.tests.filter((t) => t.counted === false);
  const outcome = rec.solved ? "solved" : rec.passed ? "passed" : "failed";
  main(
    h("div", { class: "row" }, h("h1", { class: "grow" }, problem + " · trial " + trial + " · " + checkpoint, " ", badge(outcome)),
      at > 0 ? link("‹ " + d.reached[at - 1], "run", rid, "cp", problem, trial, d.reached[at - 1]) : null,
      at >= 0 && at < d.reached.length - 1 ? link(d.reached[at + 1] + " ›", "run", rid, "cp", problem, trial, d.reached[at + 1]) : null),
    h("p", { class: "ident" }, "run ", link(d.name, "run", rid), " · agent ", h("b", {}, d.agent), d.model ? [" · model ", h("b", {}, d.model)] : null,
      " · checkpoint " + rec.index + " of " + d.checkpoint_names.length,
      d.reference_start ? [" · started from ", h("b", { title: START_TITLE.reference }, "the reference solution of " + (d.checkpoint_names[rec.index - 2] || "the checkpoint before"))] : null,
      " · graded ", when(rec.finished_at)),
    h("div", { class: "cards" },
      Object.entries(rec.groups).map(([g, [p, t]]) => card(g + " tests", p + "/" + t, pct(t ? p / t : null))),
      card("agent", rec.agent.status, money(rec.agent.usage.cost_usd) + " · " + tokens(rec.agent.usage.input_tokens + rec.agent.usage.output_tokens) + " tokens · " + secs(rec.agent.duration_s)),
      card("grading", rec.grade_status, secs(rec.grade_duration_s)),
      d.judge ? card("LLM judge", d.judge.verdict.status === "judged" ? d.judge.n_flags + " flag(s)" : "error", money(d.judge.verdict.cost_usd, d.judge.verdict.cost_source === "unknown") + " · " + d.judge.verdict.model) : null),
    d.grading && (d.grading.tampering_reason || d.grading.infrastructure_reason || d.grading.memory_exceeded || (d.grading.rules_fired || []).length) ? h("div", { class: "error" },
      d.grading.tampering_reason ? "Tampering: " + d.grading.tampering_reason : null, d.grading.infrastructure_reason ? " Infrastructure: " + d.grading.infrastructure_reason : null,
      d.grading.memory_exceeded ? " The memory limit was reached." : null, rulesFired(d.grading.rules_fired || [])) : null,
    rec.agent.error ? h("div", { class: "error" }, "Agent error: ", rec.agent.error) : null,
    tabsNav(["Tests", "Changes", "Prompt", "Metrics", d.judge ? "LLM judge" : null, "Agent", "pytest output"].filter(Boolean)),
    section("Tests", testsSummary(d.tests.length - leftOut.length, failing.length, leftOut.length),
      h("div", { id: "tests" }, failingTests(d.tests),
        d.tests.length > failing.length + leftOut.length ? h("details", { class: "passing", open: d.tests.length - failing.length - leftOut.length <= 5 },
          h("summary", { class: "muted" }, (d.tests.length - failing.length - leftOut.length) + " passed test(s)"),
          d.tests.map((t, i) => (t.passed && t.counted !== false ? testItem(t, i) : null))) : null,
        leftOut.length ? h("details", { class: "left-out" },
          h("summary", { class: "muted" }, leftOut.length + " test(s) left out of the counts (skipped or xfailed: the problem set's grading counts them neither passed nor failed)"),
          d.tests.map((t, i) => (t.counted === false ? testItem(t, i) : null))) : null)),
    section("Changes", changes(d)),
    section("Prompt", textFile(d.prompt, "No prompt.txt.")),
    section("Metrics", metricsTable(d), symbols(d.symbols)),
    d.judge ? section("LLM judge", judgeCheckpoint(d.judge)) : null,
    section("Agent", agentSection(d.agent_files)),
    section("pytest output", h("details", {}, h("summary", {}, "show pytest's whole output"), textFile(d.pytest_output, "No pytest output."))));
  return d.live;
}

// A test the counts take as a failure: not passed, and not left out by the problem set's grading.
function isFailing(t) {
  return !t.passed && t.counted !== false;
}

function testsSummary(counted, failing, leftOut) {
  const head = failing ? failing + " of " + counted + " tests did not pass (failing first)." : counted + " tests, all passed.";
  return h("p", { class: "muted tests-summary" }, head, leftOut ? " " + leftOut + " more left out of the counts." : null);
}

// The grader's guards that fired (grading.json's rules_fired): one line each, beside tampering.
function rulesFired(rules) {
  return rules.map((r) => h("div", { class: "rule-fired" }, "Rule " + r.rule + ": " + r.detail,
    r.items && r.items.length ? " (" + r.items.slice(0, 5).join(", ") + (r.items.length > 5 ? ", …" : "") + ")" : null));
}

function testItem(t, i) {
  const o = t.output || {};
  const body = [t.message ? h("div", { class: "msg" }, t.message) : null,
    o.longrepr ? [h("div", { class: "small muted" }, "failure report"), pre(o.longrepr, "test-output")] : null,
    o.stdout ? [h("div", { class: "small muted" }, "captured stdout"), pre(o.stdout, "test-output")] : null,
    o.stderr ? [h("div", { class: "small muted" }, "captured stderr"), pre(o.stderr, "test-output")] : null];
  const kind = t.passed ? "pass" : t.outcome === "skipped" || t.outcome === "xfailed" ? "none" : "fail";
  return h("details", { class: "test", id: "test-" + i, open: !t.passed && i < 3 },
    h("summary", {}, badge(t.outcome, kind), badge(t.group, "none"), h("span", { class: "mono" }, t.id), h("span", { class: "small muted grow" }, t.file), h("span", { class: "small muted" }, secs(t.duration_s))),
    h("div", {}, body.some((b) => b) ? body : h("p", { class: "small muted" }, t.passed ? "Passed." : "No output recorded.")));
}

function changes(d) {
  if (!d.changes.length) return h("p", { class: "muted" }, d.previous ? "No file changed since " + d.previous + "." : "No files.");
  const head = h("p", { class: "muted" }, d.reference_start ? "Against the reference solution it started from (" : d.previous ? "Against " + d.previous + " (" : "The first checkpoint: every file is new (", d.changes.length + " file(s) changed).");
  return [head, d.changes.map((f) => [
    h("div", { class: "filehead" }, badge(f.change, f.change === "removed" ? "failed" : f.change === "added" ? "solved" : "passed"), h("span", { class: "grow" }, f.path),
      h("span", { class: "plus" }, "+" + f.added), h("span", { class: "minus" }, "−" + f.removed)),
    f.rows.length ? diffTable(f.rows) : h("p", { class: "small muted panel" }, "No text to show (binary, empty, too large, or a link).")])];
}

function tokensEl(tokens) { return tokens ? tokens.map(([cls, text]) => (cls ? h("span", { class: cls }, text) : document.createTextNode(text))) : []; }
function diffTable(rows) {
  return h("table", { class: "diff" }, h("colgroup", {}, h("col", { style: { width: "48px" } }), h("col", {}), h("col", { style: { width: "48px" } }), h("col", {})),
    h("tbody", {}, rows.map(([kind, on, ot, nn, nt]) => kind === "gap"
      ? h("tr", { class: "gap" }, h("td", { colspan: "4" }, "⋯ " + on + " unchanged line(s) ⋯"))
      : h("tr", { class: kind }, h("td", { class: "ln" }, on ?? ""), h("td", { class: "o" }, tokensEl(ot)), h("td", { class: "ln" }, nn ?? ""), h("td", { class: "n" }, tokensEl(nt))))));
}

/* a change coloured by its metric's direction: "higher" / "lower" is better, "none": neither */
function changeClass(change, better) {
  if (better === "higher") return change > 0 ? "better" : "worse";
  if (better === "lower") return change > 0 ? "worse" : "better";
  return "muted";
}

function metricsTable(d) {
  if (!d.metrics.length) return h("p", { class: "muted" }, "No metrics.");
  return table("metrics", [
    { key: "group", label: "group" }, { key: "name", label: "metric", render: (m) => h("span", { class: "mono" }, m.name) },
    { key: "value", label: "value", num: true, fmt: (v) => num(v, 4) },
    { key: "previous", label: d.previous ? "at " + d.previous : "previous", num: true, fmt: (v) => num(v, 4) },
    { key: "change", label: "change", num: true, title: "green: better, red: worse, by each metric's direction (grey: a size, or no direction)",
      render: (m) => (isNum(m.change) && m.change !== 0 ? h("span", { class: changeClass(m.change, m.better), title: m.better === "none" ? "no better direction" : m.better + " is better" }, (m.change > 0 ? "+" : "") + num(m.change, 4)) : isNum(m.change) ? "0" : "–") },
  ], d.metrics, { pageSize: 200, placeholder: "Filter metrics…" });
}

function symbols(s) {
  if (!s || !s.added || !(s.added.length + s.removed.length + s.modified.length)) return null; // none measured: --no-metrics
  return h("div", { class: "small" }, [["added", s.added], ["removed", s.removed], ["modified", s.modified]].filter(([, l]) => l.length)
    .map(([k, l]) => h("div", {}, h("b", {}, k + ": "), h("span", { class: "mono" }, l.join(", ")))));
}

function agentSection(a) {
  const out = [];
  const tr = a.transcript;
  if (a.result) out.push(kv([["status", a.result.status], ["cost", money(a.result.usage.cost_usd)], ["tokens", tokens(a.result.usage.input_tokens) + " in · " + tokens(a.result.usage.output_tokens) + " out (" + tokens(a.result.usage.cached_input_tokens) + " cached)"],
    ["steps", String(a.result.usage.steps) + " (model calls)"], ["time", secs(a.result.duration_s)], ["exit code", a.result.exit_code === null ? "–" : String(a.result.exit_code)], ["error", a.result.error]]));
  if (a.trajectory_note) out.push(h("div", { class: "notice trajectory-note" }, "Transcript not shown: " + a.trajectory_note));
  if (tr) out.push(h("h3", {}, "Transcript: " + tr.turns + " step" + (tr.turns === 1 ? "" : "s") + " (" + tr.agent + (tr.model ? ", " + tr.model : "") + ")"), transcriptView(tr));
  if (a.logs.length) out.push(h("h3", {}, "Logs"), a.logs.map((f) => h("details", { open: a.logs.length <= 2 }, h("summary", { class: "mono" }, f.name), textFile(f))));
  return out.length ? out : h("p", { class: "muted" }, "The agent left nothing here.");
}

/* ---------- the LLM judge (docs/judge.md): nothing of it on a run nobody judged ---------- */
function criteriaTable(id, rows, perCheckpoint) {
  if (!rows.length) return h("p", { class: "muted" }, "The judge raised no flag.");
  return table(id, [
    { key: "criterion", label: "rubric item", render: (c) => h("span", { class: "mono" }, c.criterion) },
    { key: "category", label: "category" },
    { key: "type", label: "type", render: (c) => badge(c.type, "none") },
    { key: "flags", label: "flags", num: true },
    { key: "new", label: "new", num: true },
    { key: "carried", label: "carried over", num: true },
    perCheckpoint ? { key: "per_checkpoint", label: "per judged checkpoint", num: true, fmt: (v) => num(v) } : null,
    { key: "confidence", label: "mean confidence (1–5)", num: true, fmt: (v) => num(v, 2) },
  ].filter(Boolean), rows, { filter: rows.length > 10, pageSize: 100, sort: "flags", dir: -1 });
}

function agreementTable(rows) {
  return [h("h3", {}, "Agreement of the samples, per rubric item"),
    h("p", { class: "small muted" }, "Krippendorff's alpha over lines (1: every sample agreed; about 0: no better than chance) and the mean share of samples raising each flag. Items with low agreement are noise."),
    table("judge-agreement", [
      { key: "criterion", label: "rubric item", render: (a) => h("span", { class: "mono" }, a.criterion) },
      { key: "samples", label: "samples", num: true }, { key: "lines", label: "lines", num: true },
      { key: "lines_flagged", label: "lines flagged", num: true }, { key: "flags", label: "flags raised", num: true },
      { key: "flags_kept", label: "kept (majority)", num: true },
      { key: "alpha", label: "alpha", num: true, fmt: (v) => num(v, 3) }, { key: "stability", label: "stability", num: true, fmt: (v) => num(v, 3) },
    ], rows, { filter: rows.length > 10, pageSize: 100 })];
}

function judgeRun(j, criteria) {
  return [
    h("div", { class: "cards" },
      card("checkpoints judged", j.n_judged + " of " + j.n_checkpoints, j.models.join(", ")),
      card("judge cost", money(j.cost_usd, j.cost_unknown), j.samples + " sample(s) per request"),
      card("judge errors", String(j.errors.length), j.errors.length ? "not scored as zero flags" : null)),
    j.errors.length ? h("div", { class: "error" }, j.errors.length + " checkpoint(s) could not be judged (`benchwright metrics judge RUN_DIR` tries them again):",
      j.errors.map((e) => h("div", { class: "small mono" }, e))) : null,
    h("h3", {}, "Flags per rubric item" + (criteria ? " over " + criteria.n_judged + " judged checkpoint(s)" : "")),
    criteria ? criteriaTable("judge-criteria", criteria.criteria, true) : null,
    h("p", { class: "small muted" }, "Items not listed raised no flag. The rubric metrics with their 95% CIs are under Solve rates (code quality), by checkpoint under By checkpoint."),
    j.agreement.length ? agreementTable(j.agreement) : null];
}

function judgeCheckpoint(j) {
  const v = j.verdict, m = v.metrics, u = v.usage, dropped = v.dropped;
  const nDropped = dropped.unknown_criterion + dropped.unknown_file + dropped.outside_lines;
  return [
    kv([["verdict", badge(v.status, v.status === "judged" ? "solved" : "failed")],
      ["model", v.model + " (" + v.protocol + (v.endpoint ? ", " + v.endpoint : "") + ")"],
      ["rubric", v.rubric.source + " (" + v.rubric.items + " items)"], ["samples", String(v.samples)],
      ["cost", money(v.cost_usd, v.cost_source === "unknown") + " (" + v.cost_source + (v.cost_usd_paid_now !== v.cost_usd ? "; paid by the last judging " + money(v.cost_usd_paid_now, v.cost_source === "unknown") : "") + ")"],
      ["tokens", tokens(u.input_tokens) + " in · " + tokens(u.output_tokens) + " out (" + tokens(u.cached_input_tokens) + " cached)"],
      ["requests", v.requests + " (" + v.requests_made + " sent, " + v.requests_cached + " from the cache" + (v.invalid_retries ? ", " + v.invalid_retries + " invalid replies asked again" : "") + ")"],
      ["files judged", String(v.files.length)],
      ["flags dropped", nDropped ? nDropped + " (unknown item " + dropped.unknown_criterion + ", unknown file " + dropped.unknown_file + ", lines outside the file " + dropped.outside_lines + ")" : "0"],
      ["judged", when(v.judged_at) + " · " + secs(v.duration_s)]]),
    v.errors.length ? h("div", { class: "error" }, "Not judged (not scored as zero flags): ", v.errors.map((e) => h("div", { class: "small mono" }, e))) : null,
    m ? h("div", { class: "cards" },
      card("rubric flags", String(m.total_flags), m.carried_over + " carried over"),
      card("verbosity flags", String(m.verbosity_flags)), card("erosion flags", String(m.erosion_flags)),
      card("flags per LOC", num(m.per_loc, 3), "new: " + num(m.new_violations_per_loc, 3))) : null,
    m && Object.keys(m.by_category).length ? h("p", { class: "small" }, h("span", { class: "muted" }, "by category: "), Object.entries(m.by_category).map(([k, n]) => k + " " + n).join(" · ")) : null,
    v.status === "judged" ? [h("h3", {}, "Flags per rubric item"), criteriaTable("cp-judge-criteria", j.criteria, false)] : null,
    j.flags.length ? [h("h3", {}, "Every flag" + (j.n_flags > j.flags.length ? " (the first " + j.flags.length + " of " + j.n_flags + ")" : "")),
      table("judge-flags", [
        { key: "criteria", label: "rubric item", render: (f) => h("span", { class: "mono" }, f.criteria) },
        { key: "file_name", label: "file", render: (f) => h("span", { class: "mono small" }, f.file_name) },
        { key: "start", label: "lines", num: true, render: (f) => f.start === f.end ? String(f.start) : f.start + "–" + f.end },
        { key: "confidence", label: "confidence", num: true },
        { key: "carried_over", label: "carried from", render: (f) => f.carried_over || "" },
        { key: "explanation", label: "why", render: (f) => h("span", { class: "small" }, f.explanation || "") },
      ], j.flags, { pageSize: 100, placeholder: "Filter flags (item, file, why)…" })] : null];
}

/* ---------- web: one run ---------- */
function webRunPage(d) {
  const r = d.report;
  main(
    identity(d),
    r ? h("div", { class: "cards" },
      card("pass rate", pct(r.overall.value), "95% CI " + ciText(r.overall).replace(/^[^[]*/, "")),
      card("template macro average", pct(r.macro.value), "95% CI " + ciText(r.macro).replace(/^[^[]*/, "") + " · " + r.macro.n_clusters + " templates"),
      card("tasks", String(r.n_tasks), r.n_attempts + " attempts"),
      card("model cost", money(r.totals.cost_usd, r.totals.cost_unknown > 0), tokens(r.totals.input_tokens) + " in · " + tokens(r.totals.output_tokens) + " out"),
      card("agent time", secs(r.totals.agent_time_s), r.totals.steps + " steps")) : h("div", { class: "notice" }, "Not scored yet: the figures appear once the run's trials are scored."),
    tabsNav(["Trials", "Sites", "Failure modes", "Causes", r && r.grading_noise ? "Grading noise" : null, "Unpassable", "Compare"].filter(Boolean)),
    section("Trials", webTrials(d)),
    r ? [
      section("Sites", webSites(r)),
      section("Failure modes", h("div", { class: "grid2" }, causeChart(r.failure_modes.cause), [["agent_status", "Agent status"], ["evaluator_status", "Evaluator verdict"], ["error_origin", "Error origin"]].map(([k, t]) => {
        const counts = r.failure_modes[k];
        return Object.keys(counts).length ? chart(t, [{ type: "bar", x: Object.keys(counts).map(pt), y: Object.values(counts), marker: { color: "#7a3fb8" } }], {}, { height: 260 }) : null;
      }).filter(Boolean)), webFailing(d)),
      section("Causes", causesTable(r.failure_causes)),
      r.grading_noise ? section("Grading noise", gradingNoise(r.grading_noise, r.trials.between_trial_std, "attempt")) : null,
      section("Unpassable", unpassable(r)),
      r.pass_k ? trialsTable(r.pass_k) : null,
    ] : null,
    section("Compare", compareWith(d)));
  return d.live;
}

function webTrials(d) {
  return table("trials", [
    { key: "task_id", label: "task", num: true, render: (t) => link(String(t.task_id), "run", d.rid, "t", t.task_id, t.trial) },
    { key: "trial", label: "trial", num: true },
    { key: "sites", label: "sites", get: (t) => t.sites.join(", ") },
    { key: "intent", label: "intent", render: (t) => h("span", { class: "small" }, t.intent || "–") },
    { key: "verdict", label: "verdict", get: (t) => (t.verdict ? t.verdict.status : "not scored"), render: (t) => (t.verdict ? badge(t.verdict.status) : badge("not scored", "none")) },
    { key: "cause", label: "outcome", title: "passed, wrong answer, step limit, agent error, evaluator error or infrastructure", get: (t) => (t.verdict ? t.verdict.cause : "not scored"), render: (t) => causeBadge(t.verdict ? t.verdict.cause : null) },
    { key: "agent", label: "agent said", get: (t) => (t.verdict ? t.verdict.agent_status : t.response) },
    { key: "status", label: "trial ended", get: (t) => t.status },
    { key: "steps", label: "steps", num: true },
    { key: "duration_s", label: "time", num: true, fmt: secs },
  ], d.trial_rows, { pageSize: 100, placeholder: "Filter trials (task, site, verdict, intent)…" });
}

function webSites(r) {
  const s = r.per_site;
  return [chart("Pass rate per site (95% CI, tasks resampled)", [{ type: "bar", x: s.map((x) => pt(x.site)), y: s.map((x) => x.pass_rate.value),
    error_y: { type: "data", symmetric: false, array: s.map((x) => x.pass_rate.high - x.pass_rate.value), arrayminus: s.map((x) => x.pass_rate.value - x.pass_rate.low) }, marker: { color: "#17737a" } }],
  { yaxis: { tickformat: ".0%", range: [0, 1.05] } }, { height: 280 }),
  table("sites", [
    { key: "site", label: "site" }, { key: "n_tasks", label: "tasks", num: true }, { key: "n_attempts", label: "attempts", num: true },
    { key: "rate", label: "pass rate [95% CI]", get: (x) => x.pass_rate.value, render: (x) => ciText(x.pass_rate) },
    { key: "avg_steps", label: "mean steps", num: true, fmt: (v) => num(v) }, { key: "avg_tokens", label: "mean tokens", num: true, fmt: tokens },
    { key: "avg_cost_usd", label: "mean cost", num: true, fmt: (v) => money(v) }, { key: "avg_duration_s", label: "mean time", num: true, fmt: secs },
  ], s, { filter: false })];
}

function webFailing(d) {
  const list = d.report.failing;
  if (!list.length) return h("p", { class: "muted" }, "Every attempt passed.");
  return [h("h3", {}, list.length + " attempt(s) did not pass"), list.map((f) => h("div", { class: "panel" },
    h("div", { class: "row" }, link("task " + f.task_id + " · trial " + f.trial, "run", d.rid, "t", f.task_id, f.trial), causeBadge(f.cause), badge(f.status), h("span", { class: "small muted" }, "agent said " + f.agent_status)),
    f.error_msg ? pre(f.error_msg) : null, f.agent_error ? pre("agent error: " + f.agent_error) : null,
    f.mismatches.map((m) => mismatch(m))))];
}

function mismatch(m) {
  return h("div", { class: "small" }, m.passed !== undefined ? badge(m.passed ? "pass" : "fail") : null, " ", h("b", {}, m.evaluator + (m.field ? " · " + m.field : "")),
    h("div", { class: "cmpcols" }, h("div", {}, h("div", { class: "muted" }, "expected"), pre(m.expected)), h("div", {}, h("div", { class: "muted" }, "got"), pre(m.got))),
    m.message ? h("div", { class: "muted" }, m.message) : null);
}

function unpassable(r) {
  const u = r.unpassable;
  return [kv([["pass rate, every task", ciText(u.pass_rate_all)], ["pass rate, passable tasks only", ciText(u.pass_rate_excluding)],
    ["macro average, every task", ciText(u.macro_all)], ["macro average, passable tasks only", ciText(u.macro_excluding)]]),
  u.flagged.length ? table("unpassable", [{ key: "task_id", label: "task", num: true }, { key: "flag", label: "flag" }, { key: "score", label: "mean score", num: true, fmt: (v) => num(v) }], u.flagged, { filter: false })
    : h("p", { class: "muted" }, "No task of this run is flagged as unpassable.")];
}

/* ---------- the cost-accuracy frontier (report/frontier.py computes it; this draws it) ---------- */
const FRONTIER_CI_RUNS = 60;
function frontierCharts(runs, frontier) {
  const shown = new Set(runs.map((r) => r.path));
  const pts = ((frontier && frontier.points) || []).filter((p) => shown.has(p.run_dir));
  if (!pts.length) return null;
  const rid = Object.fromEntries(runs.map((r) => [r.path, r.rid]));
  const box = h("div", { class: "grid2" }, h("div", { class: "chart" }, h("div", { class: "placeholder" }, "Loading the runs' intervals…")));
  Promise.all(pts.slice(0, FRONTIER_CI_RUNS).map((p) => load("run/" + rid[p.run_dir] + "/ci").then((d) => {
    const m = d.metrics.find((x) => x.name === "checkpoints solved");
    return [p.run_dir, m ? m.estimate : null];
  }).catch(() => [p.run_dir, null]))).then((found) => {
    const ci = Object.fromEntries(found);
    box.replaceChildren(frontierChart(pts, frontier.cost, ci, rid, "cost_per_problem", "cost per problem (USD)"),
      frontierChart(pts, frontier.time, ci, rid, "time_per_problem", "agent time per problem (s)"));
  });
  const off = frontier.cost_left_off.filter((l) => pts.some((p) => p.label === l));
  const named = (labels) => labels.filter((l) => pts.some((p) => p.label === l)).join(" → ") || "none";
  return [h("h3", {}, "Cost-accuracy frontier"),
    h("p", { class: "muted" }, "Each run (agent × model) at its checkpoint solve rate (95% CI) against what an attempt (problem × trial) cost, and took. On the Pareto frontier: no other run solves as much for less."),
    box,
    h("p", { class: "small frontier-names" }, h("b", {}, "Cost frontier: "), named(frontier.cost), h("br"), h("b", {}, "Time frontier: "), named(frontier.time)),
    off.length ? h("p", { class: "small muted" }, "Left off the cost chart (cost unknown: the model has no price): " + off.join(", ") + ".") : null];
}

function frontierChart(pts, onFrontier, ci, rid, key, label) {
  const drawn = pts.filter((p) => isNum(p[key]));
  const line = drawn.filter((p) => onFrontier.includes(p.label)).sort((a, b) => a[key] - b[key]);
  const xs = drawn.map((p) => p[key]), hi = Math.max(...xs, 0), lo = Math.min(...xs, 0), pad = (hi - lo || 1) * 0.12;
  // labels lean inwards, and alternate above and below so close runs stay readable
  const order = drawn.map((p, i) => i).sort((a, b) => xs[a] - xs[b]);
  const place = drawn.map(() => "top center");
  order.forEach((i, rank) => { place[i] = (rank % 2 ? "bottom " : "top ") + (xs[i] > (lo + hi) / 2 ? "left" : "right"); });
  const err = (p, side) => { const e = ci[p.run_dir]; return e && isNum(e.low) ? (side > 0 ? e.high - p.solve_rate : p.solve_rate - e.low) : 0; };
  return chart("Solve rate vs " + label, [
    { type: "scatter", mode: "lines", name: "Pareto frontier", x: line.map((p) => p[key]), y: line.map((p) => p.solve_rate), line: { color: "#2ea866", width: 2, dash: "dot" }, hoverinfo: "skip" },
    { type: "scatter", mode: "markers+text", name: "runs", x: drawn.map((p) => p[key]), y: drawn.map((p) => p.solve_rate), text: drawn.map((p) => pt(p.label)), textposition: place,
      error_y: { type: "data", symmetric: false, array: drawn.map((p) => err(p, 1)), arrayminus: drawn.map((p) => err(p, -1)), thickness: 1, color: "#9aa5b1" },
      marker: { size: 10, color: drawn.map((p) => (onFrontier.includes(p.label) ? "#2ea866" : "#2f5fd0")) },
      hovertemplate: "%{text}<br>" + pt(label) + ": %{x}<br>solved: %{y:.1%}<extra></extra>" }],
  { xaxis: { title: { text: pt(label) }, zeroline: false, range: [lo - pad, hi + pad] }, yaxis: { title: { text: "checkpoints solved" }, tickformat: ".0%", range: [-0.12, 1.12] },
    legend: { orientation: "h", y: -0.25 }, margin: { l: 60, r: 30, t: 36, b: 80 } },
  { height: 380, onClick: (c) => { const p = drawn[c.pointIndex]; if (c.curveNumber === 1 && p) location.hash = route("run", rid[p.run_dir]); } });
}

/* ---------- web: outcomes by cause (the closed set of web/evaluation/outcomes.py) ---------- */
const CAUSE_KIND = { passed: "pass", "wrong answer": "fail", "step limit": "passed", "agent error": "fail", "evaluator error": "infra", infrastructure: "infra" };
function causeBadge(cause) { return cause ? badge(cause, CAUSE_KIND[cause] || "none") : badge("not scored", "none"); }
function causeChart(counts) {
  if (!counts || !Object.keys(counts).length) return null;
  const colours = { passed: "#2ea866", "wrong answer": "#d64545", "step limit": "#f0b429", "agent error": "#b5489a", "evaluator error": "#7a7f8a", infrastructure: "#5d6bd6" };
  return chart("Outcome by cause (every attempt)", [{ type: "bar", x: Object.keys(counts), y: Object.values(counts), text: Object.values(counts).map(String), textposition: "auto",
    marker: { color: Object.keys(counts).map((k) => colours[k] || "#7a3fb8") }, hovertemplate: "%{x}: %{y} attempt(s)<extra></extra>" }],
  { yaxis: { title: { text: "attempts" }, rangemode: "tozero" }, xaxis: { automargin: true, tickangle: -30 }, margin: { l: 60, r: 40, t: 36, b: 90 } }, { height: 300 });
}

/* ---------- web: one trial ---------- */
async function pageTrial(rid, taskId, trial, refresh) {
  const d = await load("run/" + rid + "/t/" + taskId + "/" + trial, refresh);
  crumbs(h("a", { href: "#/" }, "runs"), link(d.name, "run", rid), "task " + taskId, "trial " + trial);
  const f = d.files, v = f.verdict;
  main(
    h("div", { class: "row" }, h("h1", { class: "grow" }, "Task " + taskId + " · trial " + trial, " ", v ? badge(v.status) : badge("not scored", "none"))),
    h("p", { class: "ident" }, "run ", link(d.name, "run", rid), " · agent ", h("b", {}, d.agent), d.model ? [" · model ", h("b", {}, d.model)] : null, " · sites ", (d.task.sites || []).join(", ")),
    h("div", { class: "panel" }, h("div", { class: "small muted" }, "intent"), h("div", { style: { fontSize: "15px" } }, d.task.intent || "(the intent is in the official dataset, which the viewer does not load)"),
      d.task.type ? h("div", { class: "small muted" }, "type " + d.task.type + " · template " + d.task.template + " · expected status " + d.task.expected_status + (d.task.unpassable ? " · flagged unpassable: " + d.task.unpassable : "")) : null),
    tabsNav(["Verdict", "Answer", "Steps", "Network"]),
    section("Verdict", verdict(f)),
    section("Answer", h("h3", {}, "Final answer"), pre(f.final_answer === null ? "(none)" : f.final_answer), h("h3", {}, "agent_response.json"), pre(f.response_text === null ? "(missing)" : f.response_text),
      f.metrics ? [h("h3", {}, "Trial"), kv([["ended", f.metrics.trial_status], ["response status", f.metrics.response_status], ["answer read by", f.metrics.response_source + " (" + f.metrics.answer_parse + (f.metrics.answer_ambiguous ? ", ambiguous" : "") + ")"],
        ["steps", String(f.metrics.steps)], ["tokens", tokens(f.metrics.tokens)], ["cost", money(f.metrics.cost_usd)], ["time", secs(f.metrics.duration_s)], ["agent error", f.metrics.agent_error],
        ["errors", f.metrics.errors.length ? f.metrics.errors.join("\n") : null]])] : null),
    section("Steps", trialSteps(f)),
    section("Network", har(d)));
  return d.live;
}

function verdict(f) {
  const v = f.verdict;
  if (!v) return h("p", { class: "muted" }, "Not scored yet.");
  return [kv([["verdict", badge(v.status)], ["outcome", causeBadge(f.cause)], ["score", String(v.score)], ["agent status", v.agent_status], ["error", v.error_msg ? v.error_msg + (v.error_origin ? " (" + v.error_origin + ")" : "") : null],
    ["evaluator", "webarena-verified " + v.webarena_verified_version]]),
  f.mismatches.length ? [h("h3", {}, "What each evaluator expected and got"), f.mismatches.map(mismatch)] : null,
  h("h3", {}, "Every evaluator"), v.evaluators_results.map((e) => h("details", { class: "test", open: e.status !== "success" },
    h("summary", {}, badge(String(e.status), e.status === "success" ? "pass" : "fail"), h("b", {}, String(e.evaluator_name || "evaluator")), h("span", { class: "small muted" }, "score " + e.score)),
    h("div", {}, h("div", { class: "cmpcols" }, h("div", {}, h("div", { class: "small muted" }, "expected"), pre(json(e.expected))),
      h("div", {}, h("div", { class: "small muted" }, "got (normalised)"), pre(json(e.actual_normalized !== undefined ? e.actual_normalized : e.actual)))),
    e.error_msg ? pre(String(e.error_msg)) : null)))];
}

/* a trial's steps: from history.json, or an ATIF trajectory (whatever wrote it); a bad one is a warning */
function trialSteps(f) {
  const t = f.trajectory_totals;
  const from = f.steps_source && f.steps_source !== "history.json" ? h("p", { class: "small muted atif-source" }, "Steps read from the ATIF trajectory " + f.steps_source,
    t ? " · tokens " + tokens((t.prompt_tokens || 0) + (t.completion_tokens || 0)) + " · cost " + money(t.cost_usd === undefined ? null : t.cost_usd) : "", ".") : null;
  const note = f.steps_note ? h("div", { class: "notice steps-note" }, "Steps not shown: " + f.steps_note) : null;
  if (!f.steps.length) return [note || h("p", { class: "muted" }, "No history.json.")];
  return [from, note, f.steps.map(stepItem)];
}

function stepItem(s) {
  const calls = s.calls && s.calls.length ? s.calls.map(webAction) : s.actions.map((a) => h("div", {}, h("span", { class: "badge b-none" }, "action"), " ", h("span", { class: "mono small" }, a)));
  return h("div", { class: "step turn" + (s.errors.length ? " err" : ""), id: "step-" + s.number },
    h("div", { class: "meta" }, h("b", {}, "step " + s.number), s.duration_s !== null ? " · " + secs(s.duration_s) : "", s.title ? " · page “" + s.title + "”" : "", s.url ? [" · ", h("span", { class: "mono" }, s.url)] : null),
    Object.entries(s.thoughts).map(([k, t]) => h("div", { class: "thought" }, h("div", { class: "small muted" }, k.replace(/_/g, " ")), markdown(t))),
    calls,
    s.results.map((r) => h("div", { class: "small muted" }, "→ " + r)),
    s.errors.map((e) => h("div", { class: "small msg", style: { color: "var(--bad)" } }, "✘ " + e)));
}

/* one browser action: its name, what it acted on (element or URL), what it typed or answered */
function webAction(a) {
  return h("div", { class: "call webaction" }, h("span", { class: "badge b-none" }, a.name.replace(/_/g, " ")),
    a.target ? [" ", h("span", { class: "mono small target" }, a.target)] : null,
    a.detail ? h("div", {}, pre(a.detail, "out")) : null);
}

function har(d) {
  const f = d.files;
  if (f.har_note) return h("p", { class: "muted" }, f.har_note + ".");
  const st = (UI["har-" + d.rid + d.task_id + d.trial] = UI["har-" + d.rid + d.task_id + d.trial] || { on: null, method: "all" });
  const detail = h("div", { class: "panel", id: "har-detail" }, h("p", { class: "muted" }, "Click a request to see its headers and body."));
  const show = (e) => {
    st.on = e.index;
    document.querySelectorAll(".har tr.on").forEach((tr) => tr.classList.remove("on"));
    const tr = document.querySelector('.har tr[data-key="' + e.index + '"]'); if (tr) tr.classList.add("on");
    detail.replaceChildren(h("h3", {}, e.method + " ", h("span", { class: "mono" }, e.url)), kv([["status", String(e.status)], ["type", e.mime], ["size", num(e.size)], ["time", num(e.time_ms) + " ms"], ["started", e.started]]),
      h("h3", {}, "Request headers"), headers(e.request_headers),
      ...(e.post_body ? [h("h3", {}, "Request body"), pre(e.post_body, "har-body")] : []),
      h("h3", {}, "Response headers"), headers(e.response_headers),
      h("details", {}, h("summary", {}, "Response body"), pre(e.response_body || "(none, or not text)")));
  };
  const methods = ["all", ...new Set(d.har.map((e) => e.method))];
  const t = table("har", [
    { key: "index", label: "#", num: true },
    { key: "method", label: "method" },
    { key: "status", label: "status", num: true, render: (e) => h("span", { class: e.status >= 400 || e.status === 0 ? "minus" : "" }, String(e.status)) },
    { key: "url", label: "URL", render: (e) => h("span", { class: "mono small", style: { wordBreak: "break-all" } }, e.url) },
    { key: "mime", label: "type", render: (e) => h("span", { class: "small" }, e.mime) },
    { key: "size", label: "size", num: true, fmt: (v) => num(v) },
    { key: "time_ms", label: "ms", num: true, fmt: (v) => num(v) },
  ], d.har, { pageSize: 100, placeholder: "Filter requests (URL, method, status, type)…", onRow: show, where: (e) => st.method === "all" || e.method === st.method,
    rowKey: (e) => e.index, rowClass: (e) => (e.index === st.on ? "on" : null),
    tools: h("select", { "aria-label": "method", onchange: (e) => { st.method = e.target.value; render(true); } }, methods.map((m) => h("option", { value: m, selected: st.method === m ? "selected" : null }, m))) });
  t.classList.add("har");
  if (st.on !== null) { const e = d.har.find((x) => x.index === st.on); if (e) setTimeout(() => show(e), 0); }
  return [h("p", { class: "muted" }, d.har.length + " requests recorded in network.har."), h("div", { class: "split" }, t, detail)];
}

function headers(list) {
  if (!list.length) return h("p", { class: "small muted" }, "(none)");
  return h("table", { class: "small" }, h("tbody", {}, list.map(([k, v]) => h("tr", {}, h("td", { class: "mono", style: { whiteSpace: "nowrap" } }, k), h("td", { class: "mono", style: { wordBreak: "break-all" } }, v)))));
}

/* ---------- head to head ---------- */
async function pageCompare(a, b, refresh) {
  const d = await load("cmp/" + a + "/" + b, refresh);
  crumbs(h("a", { href: "#/" }, "runs"), link(d.a.name, "run", a), "vs", link(d.b.name, "run", b));
  const head = [h("h1", {}, d.a.name + " vs " + d.b.name, " ", badge(d.a.track)),
    h("div", { class: "cmpcols" }, [["A", d.a, a], ["B", d.b, b]].map(([k, x, rid]) => h("div", { class: "panel" }, h("b", {}, k + ": "), link(x.name, "run", rid),
      h("div", { class: "small muted" }, x.agent + (x.model ? " · " + x.model : "") + " · " + x.suite + (x.start_from ? " · start from " + x.start_from : "") + " · started " + when(x.created)))))];
  main(head, d.a.track === "web" ? webCompare(d) : codingCompare(d));
  return d.live;
}

/* as the reports word it (stats.verdict_text) */
function verdictText(v, n, unit) { return v === "too few clusters" ? "too few " + unit + " to tell (n=" + n + ")" : v; }

function overlapChart(o, unit) {
  const labels = ["solved by both", "A only", "B only", "neither"].map((s) => s.replace("solved", unit));
  return chart("Overlap (" + (o.both + o.a_only + o.b_only + o.neither) + " paired)", [{ type: "bar", x: labels, y: [o.both, o.a_only, o.b_only, o.neither],
    marker: { color: ["#2ea866", "#2f5fd0", "#f0b429", "#d64545"] } }], {}, { height: 280 });
}

/* chain against reference starts: compare_starts' figures, as `report --counterfactual` */
function counterfactual(d) {
  const cf = d.counterfactual.report, chain = d.counterfactual.chain;
  const who = (k) => (k === "a" ? "A (" + d.a.name + ")" : "B (" + d.b.name + ")");
  const ref = chain === "a" ? "b" : "a";
  const rows = [...cf.per_checkpoint, cf.overall].filter(Boolean);
  const signed = (e) => (e && isNum(e.value) ? (e.value > 0 ? "+" : "") + ciText(e) : "–");
  const kind = (v) => (v === "inherited code hurts" ? "failed" : v === "inherited code helps" ? "solved" : "none");
  const perPos = cf.per_checkpoint;
  const err = (key) => ({ type: "data", symmetric: false, array: perPos.map((r) => r[key].high - r[key].value), arrayminus: perPos.map((r) => r[key].value - r[key].low) });
  const x = perPos.map((r) => "checkpoint " + r.checkpoints);
  return section("Chain against reference starts",
    h("p", { class: "muted" }, who(chain) + " continued the agent's own code at checkpoints 2+ (chain); " + who(ref) +
      " started each from the reference solution of the checkpoint before. Over the same problem, trial and checkpoint pairs: each start's solve rate, their paired difference (reference − chain, problems resampled together, 95% CI), and the share of the chain's failures the reference start solved: the failures attributable to inherited code. The same figures as `benchwright report CHAIN --counterfactual REFERENCE`."),
    cf.differences.length ? h("div", { class: "notice" }, "Besides the start, these settings differ, and are mixed into every figure below: ", cf.differences.map((t) => h("div", { class: "small mono" }, t))) : null,
    cf.n_paired ? null : h("div", { class: "notice" }, "The runs have no problem in common: nothing to pair."),
    cf.only_chain.length || cf.only_reference.length ? h("div", { class: "notice" }, cf.only_chain.length ? "Only in the chain run (left out): " + cf.only_chain.join(", ") + ". " : "", cf.only_reference.length ? "Only in the reference-start run (left out): " + cf.only_reference.join(", ") + "." : "") : null,
    rows.length ? table("counterfactual", [
      { key: "checkpoints", label: "checkpoint", render: (r) => (r.checkpoints === "2+" ? h("b", {}, "2+ (overall)") : r.checkpoints) },
      { key: "n_problems", label: "problems", num: true },
      { key: "pairs", label: "pairs", num: true, get: (r) => r.counts.pairs },
      { key: "chain", label: "chain solved [95% CI]", get: (r) => r.chain.value, render: (r) => ciText(r.chain) },
      { key: "reference", label: "reference start solved [95% CI]", get: (r) => r.reference.value, render: (r) => ciText(r.reference) },
      { key: "difference", label: "reference − chain [95% CI]", get: (r) => r.difference.value, render: (r) => signed(r.difference) },
      { key: "verdict", label: "verdict", render: (r) => badge(verdictText(r.verdict, r.n_problems, "problems"), kind(r.verdict)) },
      { key: "attributable", label: "failures from inherited code [95% CI]", get: (r) => (r.attributable ? r.attributable.value : null),
        render: (r) => (r.attributable ? ciText(r.attributable) : h("span", { class: "small muted" }, r.checkpoints === "1" ? "same start" : "no chain failure")) },
      { key: "outcomes", label: "both · chain only · reference only · neither", nosort: true, render: (r) => [r.counts.both_solved, r.counts.chain_only, r.counts.reference_only, r.counts.neither].join(" · ") },
    ], rows, { filter: false }) : null,
    perPos.length ? h("div", { class: "grid2" },
      chart("Solve rate by checkpoint and start (95% CI)", [
        { type: "bar", name: "chain", x, y: perPos.map((r) => r.chain.value), error_y: err("chain"), marker: { color: "#d64545" } },
        { type: "bar", name: "reference start", x, y: perPos.map((r) => r.reference.value), error_y: err("reference"), marker: { color: "#2ea866" } }],
      { barmode: "group", yaxis: { tickformat: ".0%", range: [0, 1.05] } }, { height: 300 }),
      chart("Pairs by outcome", [["both_solved", "solved both ways", "#2ea866"], ["chain_only", "chain only", "#2f5fd0"], ["reference_only", "reference start only (inherited code)", "#f0b429"], ["neither", "neither", "#d64545"]]
        .map(([k, name, color]) => ({ type: "bar", name, x, y: perPos.map((r) => r.counts[k]), marker: { color } })),
      { barmode: "stack", yaxis: { title: { text: "pairs" } } }, { height: 300 })) : null,
    cf.left_out.length ? h("details", {}, h("summary", { class: "small muted" }, cf.left_out.length + " pair(s) left out, and why"), cf.left_out.map((t) => h("div", { class: "small mono" }, t))) : null,
    cf.not_reached && cf.not_reached.length ? h("details", {}, h("summary", { class: "small muted" }, cf.not_reached.length + " checkpoint(s) one run never reached: not counted"), cf.not_reached.map((t) => h("div", { class: "small mono" }, t))) : null,
    h("p", { class: "small muted" }, "† fewer than " + cf.min_clusters + " problems: the interval is not to be trusted, and the difference gets no verdict."));
}

function codingCompare(d) {
  const r = d.report;
  const pairs = d.pairs.filter((p) => p.a && p.b);
  const scatter = (key, label) => {
    const pts = pairs.filter((p) => isNum(p.a[key]) && isNum(p.b[key]));
    const hi = Math.max(0, ...pts.map((p) => Math.max(p.a[key], p.b[key])));
    return chart(label + ": A vs B per checkpoint", [
      { type: "scatter", mode: "markers", x: pts.map((p) => p.a[key]), y: pts.map((p) => p.b[key]), text: pts.map((p) => pt(p.problem + " · trial " + p.trial + " · " + p.a.checkpoint)),
        hovertemplate: "%{text}<br>A: %{x}<br>B: %{y}<extra></extra>", marker: { size: 8, color: "#2f5fd0", opacity: 0.7 } },
      { type: "scatter", mode: "lines", x: [0, hi], y: [0, hi], line: { dash: "dot", color: "#98a2b3" }, hoverinfo: "skip" }],
    { showlegend: false, xaxis: { title: { text: "A" } }, yaxis: { title: { text: "B" } } }, { height: 300 });
  };
  const ta = Object.fromEntries(d.tallies.a.map((t) => [t.problem, t])), tb = Object.fromEntries(d.tallies.b.map((t) => [t.problem, t]));
  const rate = (t) => (t && t.checkpoints * t.attempts ? t.solved / (t.checkpoints * t.attempts) : null);
  const problems = [...new Set([...Object.keys(ta), ...Object.keys(tb)])].sort();
  return [
    d.counterfactual ? counterfactual(d) : null,
    section("Paired differences", h("p", { class: "muted" }, "A minus B on the " + r.n_paired + " problems both runs scored, with paired 95% CIs (problems resampled together; the same figures as `benchwright report A --baseline B`). A verdict needs at least " + r.min_clusters + " paired problems."),
      table("cmp", [
        { key: "name", label: "figure" },
        { key: "diff", label: "A − B", num: true, get: (c) => c.difference.value, render: (c) => (c.name.includes("cost") ? num(c.difference.value) : pct(c.difference.value)) },
        { key: "ci", label: "95% CI", nosort: true, render: (c) => (isNum(c.difference.low) ? "[" + (c.name.includes("cost") ? num(c.difference.low) + ", " + num(c.difference.high) : pct(c.difference.low) + ", " + pct(c.difference.high)) + "]" : "–") },
        { key: "better", label: "better when" },
        { key: "verdict", label: "verdict", render: (c) => badge(verdictText(c.verdict, c.difference.n_clusters, "problems"), c.verdict === "improvement" ? "solved" : c.verdict === "regression" ? "failed" : "none") },
      ], r.comparisons, { filter: false }),
      r.only_run.length || r.only_baseline.length ? h("div", { class: "notice" }, r.only_run.length ? "Only in A (left out): " + r.only_run.join(", ") + ". " : "", r.only_baseline.length ? "Only in B (left out): " + r.only_baseline.join(", ") + "." : "")
        : h("p", { class: "small muted" }, "Both runs scored the same problems.")),
    section("Causes", h("p", { class: "small muted" }, "A's failed checkpoints by cause; the baseline column is B's."), causesTable(r.failure_causes)),
    section("Checkpoints", h("div", { class: "grid2" }, overlapChart(d.overlap, "solved"), scatter("cost", "Cost (USD)"), scatter("tokens", "Tokens"), scatter("loc", "LOC"))),
    section("Problems", table("cmp-problems", [
      { key: "problem", label: "problem", get: (p) => p },
      { key: "a", label: "A checkpoints solved", num: true, get: (p) => rate(ta[p]), render: (p) => sideLink(ta[p], pct(rate(ta[p])), "run", d.a.rid, "p", p) },
      { key: "b", label: "B checkpoints solved", num: true, get: (p) => rate(tb[p]), render: (p) => sideLink(tb[p], pct(rate(tb[p])), "run", d.b.rid, "p", p) },
      { key: "d", label: "A − B", num: true, get: (p) => (isNum(rate(ta[p])) && isNum(rate(tb[p])) ? rate(ta[p]) - rate(tb[p]) : null), fmt: (v) => (isNum(v) ? (v > 0 ? "+" : "") + pct(v) : "–") },
    ], problems, { filter: true })),
  ];
}

function webCompare(d) {
  const c = d.report && d.report.comparison;
  return [
    section("Paired difference", c ? [kv([["pass rate A", pct(c.current_pass_rate)], ["pass rate B", pct(c.baseline_pass_rate)],
      ["A − B [95% CI]", (c.difference.value > 0 ? "+" : "") + ciText(c.difference)], ["verdict", badge(verdictText(c.verdict, c.n_paired, "tasks"), c.verdict === "improvement" ? "solved" : c.verdict === "regression" ? "failed" : "none")], ["paired tasks", String(c.n_paired)]]),
    c.only_current.length || c.only_baseline.length ? h("div", { class: "notice" }, c.only_current.length ? "Only in A (left out): " + c.only_current.join(", ") + ". " : "", c.only_baseline.length ? "Only in B (left out): " + c.only_baseline.join(", ") + "." : "") : null]
      : h("p", { class: "muted" }, "One of the runs is not scored yet.")),
    d.report ? section("Causes", h("p", { class: "small muted" }, "A's failed attempts by cause; the baseline column is B's."), causesTable(d.report.failure_causes)) : null,
    section("Tasks", h("div", { class: "grid2" }, overlapChart(d.overlap, "passed")),
      table("cmp-tasks", [
        { key: "task_id", label: "task", num: true },
        { key: "sites", label: "sites", get: (t) => t.sites.join(", ") },
        { key: "a", label: "A mean score", num: true, render: (t) => sideLink(isNum(t.a), num(t.a), "run", d.a.rid, "t", t.task_id, 1) },
        { key: "b", label: "B mean score", num: true, render: (t) => sideLink(isNum(t.b), num(t.b), "run", d.b.rid, "t", t.task_id, 1) },
        { key: "d", label: "A − B", num: true, get: (t) => (isNum(t.a) && isNum(t.b) ? t.a - t.b : null), render: (t) => { const v = isNum(t.a) && isNum(t.b) ? t.a - t.b : null; return v === null ? "–" : h("span", { class: v > 0 ? "down" : v < 0 ? "up" : "" }, (v > 0 ? "+" : "") + num(v)); } },
      ], d.tasks, { placeholder: "Filter tasks…" })),
  ];
}

/* ================================================================ transcripts ================================================================
 * An agent's steps as people read them (view/transcript.py): one step per model turn, tool calls by
 * kind (a shell command highlighted, a file written with its path, an edit as a diff), long results
 * folded, the model's text as Markdown built from DOM nodes (never markup). */

function transcriptView(tr) {
  const intro = tr.preamble.map((m) => h("details", { class: "step preamble" }, h("summary", { class: "meta" }, m.role === "system" ? "system prompt" : m.role === "user" ? "task (" + m.role + ")" : m.role), markdown(m.text)));
  const note = tr.model_calls && tr.model_calls !== tr.turns ? h("p", { class: "small muted" }, "The agent counted " + tr.model_calls + " model calls; its log holds " + tr.turns + " turns.") : null;
  return [intro, note, tr.steps.map(stepView)];
}

function stepView(s) {
  const failed = s.calls.some((c) => c.result && c.result.is_error) || s.results.some((r) => r.is_error);
  const usage = isNum(s.input_tokens) ? tokens(s.input_tokens) + " in · " + tokens(s.output_tokens) + " out" + (s.cache_read_tokens ? " (" + tokens(s.cache_read_tokens) + " cached)" : "") : null;
  return h("div", { class: "step turn" + (failed ? " err" : ""), id: "step-" + s.number },
    h("div", { class: "meta" }, h("b", {}, "step " + s.number), usage ? " · " + usage : "", isNum(s.duration_s) ? " · " + secs(s.duration_s) : "", s.timestamp ? " · " + when(s.timestamp) : ""),
    s.thinking ? h("details", {}, h("summary", { class: "small muted" }, "thinking"), markdown(s.thinking)) : null,
    s.text ? markdown(s.text) : null,
    s.calls.map(callView),
    s.results.map((r) => resultView(r)),
    s.notes.map((n) => h("div", { class: "note" }, h("span", { class: "badge b-none" }, n.role), markdown(n.text))));
}

function codeLines(lines, cls) {
  return h("pre", { class: "code " + (cls || "") }, lines.map((toks, i) => [i ? "\n" : null, tokensEl(toks)]));
}

function callView(c) {
  const tag = h("span", { class: "badge b-none" }, c.name);
  let body;
  if (c.kind === "shell") {
    body = [h("div", { class: "callhead" }, tag, h("span", { class: "small muted" }, "shell command")), codeLines(c.lines, "shell"),
      c.writes.map((w) => [h("div", { class: "filehead" }, badge("writes", "solved"), h("span", { class: "mono grow" }, w.path), h("span", { class: "small muted" }, w.lines.length + " lines")), codeLines(w.lines)])];
  } else if (c.kind === "write") {
    body = [h("div", { class: "filehead" }, tag, badge("writes", "solved"), h("span", { class: "mono grow" }, c.path), h("span", { class: "small muted" }, c.lines.length + " lines")), codeLines(c.lines)];
  } else if (c.kind === "edit") {
    body = [h("div", { class: "filehead" }, tag, badge("edits", "passed"), h("span", { class: "mono grow" }, c.path)), diffTable(c.rows)];
  } else if (c.kind === "patch") {
    body = [h("div", { class: "callhead" }, tag, h("span", { class: "small muted" }, "patch")), codeLines(c.lines)];
  } else {
    body = [h("div", { class: "callhead" }, tag, h("span", { class: "small muted" }, "tool call")), pre(c.text)];
  }
  return h("div", { class: "call call-" + c.kind }, body, c.result ? resultView(c.result) : null);
}

function resultView(r) {
  const label = h("span", { class: "badge " + (r.is_error ? "b-failed" : "b-none") }, (r.is_error ? "failed" : "output") + (r.name ? " · " + r.name : ""));
  if (!r.output) return h("div", { class: "result" }, label, h("span", { class: "small muted" }, " (no output)"));
  if (!r.fold) return h("div", { class: "result" }, label, pre(r.output, "out"));
  const head = r.output.split("\n").slice(0, 6).join("\n");
  return h("details", { class: "result" }, h("summary", {}, label, h("span", { class: "small muted" }, " " + r.lines + " lines, " + r.output.length.toLocaleString("en-US") + " characters: click to show all"),
    pre(head + "\n…", "out head")), pre(r.output, "out"));
}

/* Markdown, the common part (headings, lists, quotes, fenced code, `code`, **bold**, *em*, links as
 * text with their address): built as elements and text nodes, so no HTML in it is ever markup. */
function markdown(text) {
  const box = h("div", { class: "md" });
  const lines = String(text).split("\n");
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    const fence = line.match(/^\s*(```|~~~)\s*([\w+.-]*)/);
    if (fence) {
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) body.push(lines[i]);
      i++;
      box.appendChild(h("pre", { class: "code", "data-lang": fence[2] || null }, body.join("\n")));
    } else if (/^#{1,6}\s/.test(line)) {
      box.appendChild(h("div", { class: "mdh" }, inline(line.replace(/^#+\s*/, "")))); i++;
    } else if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line), items = [];
      for (; i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i]); i++) items.push(h("li", {}, inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""))));
      box.appendChild(h(ordered ? "ol" : "ul", {}, items));
    } else if (/^\s*>/.test(line)) {
      const quote = [];
      for (; i < lines.length && /^\s*>/.test(lines[i]); i++) quote.push(lines[i].replace(/^\s*>\s?/, ""));
      box.appendChild(h("blockquote", {}, inline(quote.join(" "))));
    } else if (!line.trim()) { i++; } else {
      const para = [];
      for (; i < lines.length && lines[i].trim() && !/^\s*(```|~~~|#{1,6}\s|[-*+]\s|\d+[.)]\s|>)/.test(lines[i]); i++) para.push(lines[i]);
      if (!para.length) { para.push(line); i++; }
      box.appendChild(h("p", {}, inline(para.join("\n"))));
    }
  }
  return box;
}

const INLINE = /(`+)([\s\S]*?)\1|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
function inline(text) {
  const out = [];
  let last = 0;
  for (const m of String(text).matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1]) out.push(h("code", {}, m[2]));
    else if (m[3] || m[4]) out.push(h("b", {}, m[3] || m[4]));
    else if (m[5]) out.push(h("i", {}, m[5]));
    else out.push(h("span", {}, m[6], h("span", { class: "small muted mono" }, " <" + m[7] + ">")));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/* ---------- failing tests, identical failures grouped (same error line: `same_as`) ---------- */
function failingTests(tests) {
  const groups = new Map();
  tests.forEach((t, i) => { if (isFailing(t)) { const k = t.outcome + "\u0000" + t.same_as; if (!groups.has(k)) groups.set(k, []); groups.get(k).push([t, i]); } });
  return [...groups.values()].map((members) => {
    const [[t, i]] = members;
    if (members.length === 1) return testItem(t, i);
    return h("div", { class: "samefail panel" },
      h("div", { class: "row" }, badge(members.length + " × " + t.outcome, "fail"), sameGroups(members), h("span", { class: "small muted" }, members.length + " tests failed the same way; the first one's output:")),
      h("div", { class: "msg mono small" }, t.same_as),
      testItem(t, i),
      h("details", {}, h("summary", { class: "small muted" }, "the other " + (members.length - 1) + " test(s)"),
        members.slice(1).map(([o, j]) => testItem(o, j))));
  });
}

/* a scatter point's label: the run's name (with agent and model when names repeat); runs on the
 * same spot share one label, "a, b", so no two labels print over each other */
function pointLabels(runs, key) {
  const seen = {}, spot = {};
  runs.forEach((r) => { seen[r.name] = (seen[r.name] || 0) + 1; });
  const names = runs.map((r) => (seen[r.name] > 1 ? r.name + " (" + r.agent + (r.model ? ", " + r.model : "") + ")" : r.name));
  runs.forEach((r, i) => { const k = Number(r[key]).toPrecision(3) + "|" + Number(r.rate).toPrecision(3); (spot[k] = spot[k] || []).push(i); });
  const out = runs.map(() => "");
  for (const at of Object.values(spot)) out[at[0]] = pt(at.map((i) => names[i]).join(", "));
  return out;
}

/* a head-to-head cell: its figure as a link to that side's page (problem, or trial 1 of a task) */
function sideLink(present, text, ...parts) { return present ? link(text, ...parts) : h("span", { class: "muted" }, text); }

/* the groups of identical failures, in order: "Core 3", "Functionality 7" */
function sameGroups(members) {
  const n = {};
  members.forEach(([t]) => { n[t.group] = (n[t.group] || 0) + 1; });
  return Object.entries(n).map(([g, k]) => badge(g + " " + k, "none"));
}
