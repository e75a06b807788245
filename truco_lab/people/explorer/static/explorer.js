// The explorer's one front end: the page (index.html) and the Jupyter widget (anywidget) both mount it.
// It talks to the data through `api(path, params) -> Promise<object>`: fetch() on the page, the
// widget's model messages in Jupyter. The whole view state lives in one object, mirrored in the URL hash.

const css = `
.tx { font: 13px system-ui, sans-serif; color: #222; }
.tx nav button { margin-right: 4px; }
.tx nav button.on { font-weight: bold; border-bottom: 2px solid #36c; }
.tx .badge { display: inline-block; padding: 1px 6px; border-radius: 8px; background: #eef; margin-left: 6px; }
.tx .badge.bad { background: #fdd; }
.tx table { border-collapse: collapse; margin-top: 6px; }
.tx td, .tx th { border: 1px solid #ddd; padding: 2px 5px; text-align: right; }
.tx th { background: #f4f4f4; }
.tx td.hand { text-align: left; white-space: nowrap; }
.tx tr.low td { color: #aaa; }
.tx tr.marked td { background: #fff3c4; }
.tx .crumb { cursor: pointer; color: #36c; margin-right: 2px; }
.tx .err { color: #b00; margin: 6px 0; }
.tx .heat td { width: 52px; cursor: pointer; text-align: center; }
.tx .heat td.none { background: #fafafa; cursor: default; }
.tx .next button { margin: 2px; }
`;

export function parseState(hash) {
  const s = { view: "match", cell: "", vira: "", history: "", hand: "", pick: "", cell2: "", vira2: "", history2: "", run2: "" };
  const q = new URLSearchParams((hash || "").replace(/^#/, ""));
  for (const k of Object.keys(s)) if (q.has(k)) s[k] = q.get(k);
  return s;
}

export function stateHash(s) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(s)) if (v !== "" && v != null) q.set(k, v);
  return "#" + q.toString();
}

// the one DOM helper of the front end (the table's module imports it too)
export function h(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of kids.flat(Infinity)) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

const pct = (x) => (x == null ? "–" : (100 * x).toFixed(1) + "%");
const num = (x, d = 3) => (x == null ? "–" : Number(x).toFixed(d));

function badge(expl, units) {
  const bad = expl != null && expl > 1e-2;
  return h("span", { class: "badge" + (bad ? " bad" : ""), "data-testid": "quality",
                     title: "exact exploitability of this strategy (best-response gap), " + units },
           "exploitability " + (expl == null ? "?" : expl.toExponential(2)));
}

export function mount(el, api, initial, onState) {
  let state = Object.assign(parseState(""), initial || {});
  const root = h("div", { class: "tx" });
  el.append(h("style", {}, css), root);

  function go(patch) {
    state = Object.assign({}, state, patch);
    if (onState) onState(state);
    draw();
  }

  async function draw() {
    const nav = h("nav", {},
      ["match", "decision", "range", "diff"].map((v) =>
        h("button", { class: state.view === v ? "on" : "", "data-testid": "nav-" + v, onclick: () => go({ view: v }) }, v)));
    const body = h("div", { "data-testid": "view-" + state.view }, "loading…");
    root.replaceChildren(nav, body);
    try {
      if (state.view === "match") await drawMatch(body);
      else if (state.view === "decision") await drawDecision(body);
      else if (state.view === "range") await drawRange(body);
      else await drawDiff(body);
    } catch (e) {
      body.replaceChildren(h("div", { class: "err", "data-testid": "error" }, String(e.message || e)));
    }
    root.setAttribute("data-ready", "1");
  }

  async function drawMatch(body) {
    const { cells, run, units } = await api("/api/cells", {});
    const kids = [h("div", {}, `${run}: ${cells.length} cells (${units}); click a solved cell to open its first decision`)];
    for (const d of [0, 1]) {
      const mine = cells.filter((c) => c.dealer === d);
      if (!mine.length) continue;
      const s0 = [...new Set(mine.map((c) => c.score0))].sort((a, b) => a - b);
      const s1 = [...new Set(mine.map((c) => c.score1))].sort((a, b) => a - b);
      const at = new Map(mine.map((c) => [c.score0 + "," + c.score1, c]));
      const rows = [h("tr", {}, h("th", {}, "score0 \\ score1"), s1.map((b) => h("th", {}, b)))];
      for (const a of s0) {
        rows.push(h("tr", {}, h("th", {}, a), s1.map((b) => {
          const c = at.get(a + "," + b);
          if (!c) return h("td", { class: "none" }, "");
          const target = c.solved || c.viras.length ? [c.score0, c.score1, c.dealer] : null;
          const hue = Math.round(120 * Math.max(0, Math.min(1, c.equity)));
          return h("td", {
            style: `background: hsl(${hue}, 60%, 80%)`, "data-testid": `cell-${a}-${b}-${d}`,
            title: `equity ${num(c.equity, 4)}, exploitability ${c.exploitability == null ? "?" : c.exploitability.toExponential(2)}` +
                   (c.mirror_of ? ` (played with ${c.mirror_of.join(",")}'s tables, seats swapped)` : ""),
            onclick: () => target && go({ view: "decision", cell: target.join(","), vira: "", history: "" }),
          }, num(c.equity, 3));
        })));
      }
      kids.push(h("h4", {}, `dealer ${d}`), h("table", { class: "heat" }, rows));
    }
    body.replaceChildren(...kids);
  }

  function decisionTable(d, filter) {
    // card plays go in one column (each hand holds different cards); calls get a column each
    const isPlay = (a) => a.startsWith("play_");
    const calls = d.actions.filter((a) => !isPlay(a));
    const byHand = new Map();
    for (const r of d.rows) {
      const k = r.hand + "|" + r.hidden;
      if (!byHand.has(k)) byHand.set(k, { hand: r.hand, cards: r.cards, hidden: r.hidden, reach: r.reach, low: r.low_reach, rows: [] });
      byHand.get(k).rows.push(r);
    }
    const cellOf = (r) => h("span", { "data-action": r.action, "data-probability": r.probability,
                                      title: `value ${num(r.action_value, 4)}, cost ${num(r.cost, 2)} ${d.cost_units}` },
                            `${pct(r.probability)} (−${num(r.cost, 2)})`);
    const head = h("tr", {}, h("th", {}, "hand"), h("th", {}, "reach"), calls.map((a) => h("th", {}, a)),
                   d.actions.some(isPlay) ? h("th", {}, "card plays: probability (cost)") : []);
    const rows = [head];
    for (const x of byHand.values()) {
      if (filter && !(x.hand.includes(filter) || x.cards.includes(filter))) continue;
      const plays = x.rows.filter((r) => isPlay(r.action));
      rows.push(h("tr", { class: x.low ? "low" : "", "data-hand": x.hand, "data-hidden": x.hidden },
        h("td", { class: "hand" }, `${x.cards} (${x.hand})${x.hidden ? " · own hidden " + x.hidden : ""}${x.low ? " · low reach" : ""} `,
          h("span", { class: "crumb", "data-testid": "to-range", title: "the opponent's range if you hold this hand",
                      onclick: () => go({ view: "range", pick: x.hand }) }, "range")),
        h("td", {}, x.reach.toExponential(2)),
        calls.map((a) => { const r = x.rows.find((y) => y.action === a); return h("td", {}, r ? cellOf(r) : ""); }),
        d.actions.some(isPlay) ? h("td", { class: "hand" }, plays.map((r) => [r.action.replace(/^play_face_(up|down) /, (m, k) => (k === "down" ? "↓" : "")) + " ", cellOf(r), "  "])) : []));
    }
    return h("table", { "data-testid": "decision-table" }, rows);
  }

  async function drawDecision(body) {
    if (!state.cell) {
      const { cells } = await api("/api/cells", {});
      const first = cells.find((c) => c.solved);
      if (!first) throw new Error("no solved cell in this run");
      state.cell = [first.score0, first.score1, first.dealer].join(",");
    }
    const d = await api("/api/decision", { cell: state.cell, vira: state.vira, history: state.history });
    const crumbs = [h("span", { class: "crumb", "data-testid": "crumb-0", onclick: () => go({ history: "" }) }, "start")];
    d.steps.forEach((s, i) => crumbs.push(" › ", h("span", { class: "crumb", "data-testid": `crumb-${i + 1}`,
      onclick: () => go({ history: d.steps.slice(0, i + 1).join(", ") }) }, s)));
    const next = h("div", { class: "next" }, "next: ", d.next.map((n) =>
      h("button", { disabled: !n.decision, "data-testid": "next", "data-history": n.history,
                    title: n.decision ? "" : "no decision follows (forced move or the hand ends)",
                    onclick: () => go({ history: n.history }) }, n.action)));
    const viras = h("select", { "data-testid": "vira", onchange: (e) => go({ vira: e.target.value, history: "" }) });
    const { cells, kind } = await api("/api/cells", {});
    // a match run plays against its solution with hints; a solve folder (one cell) has none: the heuristic
    const opp = kind === "match" ? { bot: "solved", hints: 1 } : { bot: "heuristic-high", hints: 0 };
    const me = cells.find((c) => [c.score0, c.score1, c.dealer].join(",") === d.cell.join(","));
    for (const v of (me ? me.viras : [])) viras.append(h("option", { value: v.vira, selected: v.vira === d.vira }, `vira ${v.vira} (class ${v.vira_class})`));
    const filter = h("input", { placeholder: "filter hands (e.g. Zap)", value: state.hand, "data-testid": "hand-filter",
                                onchange: (e) => go({ hand: e.target.value }) });
    body.replaceChildren(
      h("div", {}, `cell ${d.cell.join(",")} · player ${d.player} to act · ${d.units}`, badge(d.exploitability, d.units)),
      h("div", {}, viras, " ", filter, " ", h("a", { href: `/table#${new URLSearchParams({ hand: 1, score: d.cell.slice(0, 2).join(","), dealer: d.cell[2], ...opp })}`,
               target: "_blank", "data-testid": "play-here", title: "a hand at this cell's score (a new deal)" }, "play from here"), " ",
        h("button", { "data-testid": "to-diff",
        onclick: () => go({ view: "diff", cell2: state.cell2 || state.cell, vira2: state.vira2 || d.vira, history2: state.history2 || d.history }) }, "compare…")),
      h("div", { "data-testid": "breadcrumb" }, crumbs), next,
      h("div", {}, `cells: probability · cost in ${d.cost_units} against the hand's best action; grey rows: reach below ${d.low_reach_below} of the decision's most reached hand`),
      decisionTable(d, state.hand));
  }

  async function drawRange(body) {
    if (!state.cell) throw new Error("open a decision first (match view: click a cell)");
    const d = await api("/api/range", { cell: state.cell, vira: state.vira, history: state.history, hand: state.pick });
    const pick = h("input", { value: state.pick, placeholder: "your hand, e.g. Copas 4 4", "data-testid": "range-pick",
                              onchange: (e) => go({ pick: e.target.value }) });
    const rows = [h("tr", {}, ["opponent's hand", "share", ""].map((x) => h("th", {}, x)))];
    for (const r of d.rows) rows.push(h("tr", { "data-hand": r.hand, "data-share": r.share },
      h("td", { class: "hand" }, `${r.cards} (${r.hand})`), h("td", {}, pct(r.share)),
      h("td", { class: "hand" }, h("span", { style: `display:inline-block;height:9px;background:#69c;width:${Math.round(400 * r.share / d.rows[0].share)}px` }))));
    body.replaceChildren(
      h("div", {}, `cell ${d.cell.join(",")} · after ${d.history || "(the deal)"} · player ${d.player}'s range (${d.hands} hands)`,
        badge(d.exploitability, "")),
      h("div", {}, "card removal from: ", pick, " ", h("button", { onclick: () => go({ view: "decision" }) }, "back to the decision")),
      h("div", {}, d.hand ? `given your ${d.hand}` : "no hand picked: the deal's prior for your cards"),
      h("table", { "data-testid": "range-table" }, rows));
  }

  async function drawDiff(body) {
    const f = (k, ph) => h("input", { value: state[k], placeholder: ph, "data-testid": "diff-" + k, onchange: (e) => (state[k] = e.target.value) });
    const form = h("div", {}, "A: ", f("cell", "cell S0,S1,D"), f("vira", "vira"), f("history", "history"), h("br"),
      "B: ", f("cell2", "cell S0,S1,D"), f("vira2", "vira"), f("history2", "history (empty: A's)"), f("run2", "run (0 or 1)"),
      h("button", { "data-testid": "diff-go", onclick: () => go({}) }, "compare"));
    if (!state.cell) { body.replaceChildren(form); return; }
    const d = await api("/api/diff", { cell: state.cell, vira: state.vira, history: state.history, cell2: state.cell2,
                                       vira2: state.vira2, history2: state.history2, run2: state.run2 });
    const rows = [h("tr", {}, ["hand", "hidden", "action", "A", "B", "Δ"].map((x) => h("th", {}, x)))];
    for (const r of d.rows) {
      const delta = r.probability_a != null && r.probability_b != null ? r.probability_b - r.probability_a : null;
      rows.push(h("tr", { class: r.marked ? "marked" : "", "data-marked": r.marked ? "1" : "0" },
        h("td", { class: "hand" }, `${r.cards} (${r.hand})`), h("td", {}, r.hidden), h("td", {}, r.action),
        h("td", {}, pct(r.probability_a)), h("td", {}, pct(r.probability_b)), h("td", {}, delta == null ? "–" : (100 * delta).toFixed(1))));
    }
    body.replaceChildren(form,
      h("div", {}, `A: cell ${d.a.cell.join(",")} vira ${d.a.vira} (${d.a.run})`, badge(d.a.exploitability, d.a.units),
        ` · B: cell ${d.b.cell.join(",")} vira ${d.b.vira} (${d.b.run})`, badge(d.b.exploitability, d.b.units)),
      h("div", { "data-testid": "diff-count" }, `${d.marked} of ${d.rows.length} rows differ by ≥ ${100 * d.mark} points (marked)`),
      h("table", { "data-testid": "diff-table" }, rows));
  }

  draw();
  return { go, get state() { return state; } };
}

// anywidget entry: the same front end, its api carried by the widget's messages
function render({ model, el }) {
  let seq = 0;
  const waiting = new Map();
  model.on("msg:custom", (msg) => {
    const w = waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    msg.error ? w.reject(new Error(msg.error)) : w.resolve(msg.data);
  });
  const api = (path, params) => new Promise((resolve, reject) => {
    const id = ++seq;
    waiting.set(id, { resolve, reject });
    model.send({ id, path, params });
  });
  mount(el, api, parseState(model.get("state") || ""), (s) => { model.set("state", stateHash(s)); model.save_changes(); });
}
export default { render };
