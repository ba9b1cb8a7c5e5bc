// Options page, "Sites": one card per allowlist rule, the origin pattern as its heading and its
// switches as labelled chips in three groups (what agents may do, run, read), then the per-site
// approvals. A card reads whole at any width: no column squeezes a word.

import { APPROVAL_KINDS, APPROVAL_LABELS, withoutRule, withRule, type Choice, type OriginRule, type Policy } from "../policy/policy.js";

type Switch = keyof Omit<OriginRule, "pattern" | "approvals">;

/** Each switch's label (the name tool errors quote) and what it lets agents do. */
const SWITCH_GROUPS: { title: string; switches: [Switch, string, string][] }[] = [
  {
    title: "Act",
    switches: [
      ["act", "Act", "write tools: click, type, navigate…"],
      ["allowPassword", "Passwords", "fill, type and press_key may target a password field"],
    ],
  },
  {
    title: "Run code",
    switches: [
      ["evalExpression", "Eval expression", "evaluate with one expression"],
      ["evalProgram", "Eval program", "evaluate with a program: statements and side effects"],
      ["fetch", "fetch_in_page", "requests sent with the page's cookies"],
      ["invoke", "Invoke", "call functions the page defines"],
    ],
  },
  {
    title: "Read",
    // SECURITY I-68: the browser's stores, each its own switch; HttpOnly values only beside Cookies.
    switches: [
      ["cookies", "Cookies", "cookies the site's pages are sent (HttpOnly values withheld)"],
      ["cookiesHttpOnly", "HttpOnly values", "with Cookies: values of HttpOnly cookies too"],
      ["storage", "Storage", "localStorage, sessionStorage, IndexedDB names"],
      ["observe", "Console & network", "console_tail and network_tail: console errors and fetch/XHR responses, text bodies included"],
      ["captureSensitive", "Capture headers/bodies", "capture_start with sensitive: request headers (cookies) and bodies"],
    ],
  },
];

export type Save = (p: Policy, pattern?: string) => void;

export function choiceSelect(value: Choice | undefined, withDefault: boolean, onChange: (c: Choice | undefined) => void): HTMLSelectElement {
  const s = document.createElement("select");
  for (const v of [...(withDefault ? ["default"] : []), "allow", "ask", "deny"]) {
    const o = document.createElement("option");
    o.value = v;
    o.textContent = v;
    s.append(o);
  }
  s.value = value ?? "default";
  s.addEventListener("change", () => onChange(s.value === "default" ? undefined : (s.value as Choice)));
  return s;
}

function make<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function card(p: Policy, rule: OriginRule, save: Save): HTMLLIElement {
  const li = make("li", "rule");
  li.dataset.pattern = rule.pattern;
  const head = make("div", "rule-head");
  const title = make("h3", "rule-pattern", rule.pattern);
  const rm = make("button", "danger remove", "Remove");
  rm.type = "button";
  rm.setAttribute("aria-label", `Remove ${rule.pattern}`);
  rm.addEventListener("click", () => save(withoutRule(p, rule.pattern), rule.pattern));
  head.append(title, rm);

  const groups = make("div", "rule-groups");
  for (const g of SWITCH_GROUPS) {
    const fs = make("fieldset", "rule-group");
    fs.append(make("legend", undefined, g.title));
    const chips = make("div", "chips");
    for (const [field, label, what] of g.switches) {
      const chip = make("label", "chip");
      chip.title = what;
      const box = make("input");
      box.type = "checkbox";
      box.dataset.field = field;
      box.setAttribute("aria-label", `${label} on ${rule.pattern}`);
      box.checked = rule[field] === true;
      box.addEventListener("change", () => save(withRule(p, { ...rule, [field]: box.checked }), rule.pattern));
      chip.append(box, make("span", undefined, label));
      chips.append(chip);
    }
    fs.append(chips);
    groups.append(fs);
  }

  const det = make("details", "rule-approvals");
  const set = APPROVAL_KINDS.filter((k) => rule.approvals?.[k]).length;
  det.append(make("summary", undefined, set ? `Approvals here (${set} set)` : "Approvals here (the defaults)"));
  const rows = make("div", "approval-grid");
  for (const k of APPROVAL_KINDS) {
    const row = make("label", "approval-row");
    row.append(make("span", undefined, APPROVAL_LABELS[k]));
    const sel = choiceSelect(rule.approvals?.[k], true, (c) => {
      const approvals = { ...(rule.approvals ?? {}) };
      if (c) approvals[k] = c;
      else delete approvals[k];
      save(withRule(p, { ...rule, approvals }), rule.pattern);
    });
    sel.dataset.approval = k;
    row.append(sel);
    rows.append(row);
  }
  det.append(rows);

  const err = make("p", "error rule-error");
  err.setAttribute("role", "alert");
  li.append(head, groups, det, err);
  return li;
}

/** Renders the rules into the list; open approval panels stay open across renders. */
export function renderRules(list: HTMLElement, p: Policy, save: Save): void {
  const open = new Set(Array.from(list.querySelectorAll<HTMLElement>("li.rule")).filter((li) => li.querySelector("details")?.open).map((li) => li.dataset.pattern));
  list.replaceChildren();
  if (p.rules.length === 0) {
    list.append(make("li", "empty", p.permissive ? "No entries; permissive mode allows every site." : "No entries: agents can use no site at all."));
  }
  for (const rule of p.rules) {
    const li = card(p, rule, save);
    if (open.has(rule.pattern)) li.querySelector("details")!.open = true;
    list.append(li);
  }
}

/** Shows a refused change on the rule's own card (or says nothing when the card is gone). */
export function showRuleError(list: HTMLElement, pattern: string, message: string): boolean {
  const li = Array.from(list.querySelectorAll<HTMLElement>("li.rule")).find((x) => x.dataset.pattern === pattern);
  const err = li?.querySelector(".rule-error");
  if (!err) return false;
  err.textContent = message;
  return true;
}
