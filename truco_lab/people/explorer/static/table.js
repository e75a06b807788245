// The browser table: the server holds the game (TableSession); the page shows its view and sends clicks.
import { h } from "./explorer.js";
const css = `
.tt { font: 15px system-ui, sans-serif; color: #222; max-width: 900px; }
.tt .felt { background: #2e6b3f; color: #fff; padding: 12px; border-radius: 10px; margin: 8px 0; }
.tt .card { display: inline-block; min-width: 38px; padding: 8px 6px; margin: 3px; border-radius: 6px;
            background: #fff; color: #222; text-align: center; font-weight: bold; box-shadow: 0 1px 3px #0006; }
.tt .card.red { color: #c00; }
.tt .card.down { background: #456; color: #fff; }
.tt button { margin: 3px; font-size: 14px; }
.tt .hint { background: #ffd; padding: 6px; margin: 6px 0; }
.tt .err { color: #b00; }
.tt .over { background: #eef; padding: 8px; margin: 6px 0; }
`;
// a card as the server names it ("7♥", "7 de oros"); red for hearts, diamonds, oros and copas
const card = (shown, down) => {
  if (shown === "??") return h("span", { class: "card down", "data-card": "??" }, "??");
  const red = /[♥♦]|de (oros|copas)/.test(shown);
  return h("span", { class: "card" + (red ? " red" : "") + (down ? " down" : ""), "data-card": shown },
           shown + (down ? " ↓" : ""));
};

export function mountTable(el, params) {
  const root = h("div", { class: "tt" });
  el.append(h("style", {}, css), root);
  let id = null, hints = params.get("hints") === "1", version = 0;

  async function call(path, q) {
    const r = await fetch(path + "?" + new URLSearchParams(q).toString());
    const body = await r.json();
    if (!r.ok) throw new Error(body.error || r.statusText);
    return body;
  }
  async function start() {
    const q = {};
    for (const k of ["bot", "partner", "seat", "seed", "hand", "score", "dealer"]) if (params.get(k)) q[k] = params.get(k);
    if (hints) q.hints = "1";
    try { const r = await call("/api/table/new", q); id = r.id; draw(r.view); }
    catch (e) { root.replaceChildren(h("div", { class: "err", "data-testid": "error" }, e.message)); root.setAttribute("data-ready", "1"); }
  }
  async function send(path, q) {
    try { draw((await call(path, Object.assign({ id }, q))).view); }
    catch (e) { root.append(h("div", { class: "err", "data-testid": "error" }, e.message)); }
  }
  function draw(v) {
    const rounds = [1, 2, 3].map((r) => v.table.filter((p) => p.round === r));
    const kids = [
      h("div", { "data-testid": "status" }, `${v.rules} · ${v.match ? "match" : "one hand"} against ${v.against} · hand ${v.hand} · `,
        h("b", { "data-testid": "score" }, `${v.sides.you} ${v.score_words.you} – ${v.sides.them} ${v.score_words.bot}`), ` · ${v.dealer} deal(s) · stake `,
        h("b", { "data-testid": "stake" }, v.stake), v.pending_raise ? ` (raise to ${v.pending_raise} pending)` : ""),
      h("div", { class: "felt" },
        v.vira ? h("div", {}, "vira ", card(v.vira_shown), ` → manilhas are the ${v.manilha}s`)
               : h("div", {}, v.deck === "spanish" ? "Spanish deck, no vira: 1 de espadas > 1 de bastos > 7 de espadas > 7 de oros > 3s > 2s > …" : "no vira"),
        rounds.map((ps, i) => ps.length ? h("div", { "data-testid": `round-${i + 1}` }, `round ${i + 1}: `,
          ps.map((p) => [p.who + " ", card(p.shown, p.down), " "])) : []),
        v.partner_cards ? h("div", { "data-testid": "partner-cards" }, "your partner's cards (a side on eleven sees them): ",
          v.partner_cards.map((c) => card(c, false))) : [],
        h("div", { "data-testid": "hand" }, "your cards (click one to play it face up): ", v.cards_shown.map((c) => {
          const e = card(c, false);
          const play = v.legal.find((a) => a.label === `play ${c}`);
          if (play) { e.style.cursor = "pointer"; e.addEventListener("click", () => send("/api/table/act", { action: play.code })); }
          return e;
        }))),
      v.events.length ? h("div", { "data-testid": "events" }, v.events.join(" · ")) : [],
      v.last_move && v.last_move.cost != null ? h("div", { "data-testid": "last-cost" },
        `your last move (${v.last_move.action}) cost ${(100 * v.last_move.cost).toFixed(2)} points of match-win probability` +
        (v.last_move.cost > 5e-4 ? `; the solution preferred ${v.last_move.best}` : "")) : [],
      v.hints ? h("div", { class: "hint", "data-testid": "hints" }, "solution: ",
        v.hints.map((x) => `${x.action} ${(100 * x.probability).toFixed(0)}% (worth ${x.value.toFixed(3)})`).join(" · ")) : [],
      h("div", { "data-testid": "actions" }, v.legal.map((a) =>
        h("button", { "data-code": a.code, onclick: () => send("/api/table/act", { action: a.code }) }, a.label))),
      h("label", {}, h("input", { type: "checkbox", "data-testid": "hints-toggle", checked: hints,
        onchange: (e) => { hints = e.target.checked; params.set("hints", hints ? "1" : "0"); location.hash = params.toString(); } }),
        " hints (starts a new table)"),
    ];
    if (v.hand_over) {
      kids.push(h("div", { class: "over", "data-testid": "hand-over" },
        `hand ${v.hand_over.hand} over: score ${v.sides.you} ${v.hand_over.score[0]} – ${v.sides.them} ${v.hand_over.score[1]}`,
        v.hand_over.bot_cards.length ? ["; the bot held ", v.hand_over.bot_cards.map((c) => card(c, false))] : [],
        v.game_over ? h("b", { "data-testid": "result" }, ` ${v.result}.`) :
          h("button", { "data-testid": "next-hand", onclick: () => send("/api/table/next", {}) }, "next hand")));
    }
    if (v.game_over && !v.hand_over) kids.push(h("b", { "data-testid": "result" }, v.result));
    kids.push(h("div", {}, h("button", { "data-testid": "new-table", onclick: start }, "new table")));
    root.replaceChildren(...kids);
    root.setAttribute("data-ready", "1");
    root.setAttribute("data-turn", v.your_turn ? "1" : "0");
    root.setAttribute("data-version", String(++version));  // tests wait for the next draw
  }
  start();
}
