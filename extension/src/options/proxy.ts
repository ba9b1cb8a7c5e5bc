// Options page, "Proxy profiles": the person's profiles (add, edit, remove, use), the active one and
// the switch that lets agents change it. Each profile is checked here as it is typed in, and again
// by the worker on save (policy/proxy.ts); the message names the field to fix.

import { BUILTIN_PROFILES, parseBypass, profileProblems, type ProfileProblem, type ProxyKind, type ProxyProfile, type ProxyScheme } from "../policy/proxy.js";
import { el } from "./api.js";
import { clearInvalid as clearMarks, clearOnEdit, markInvalid } from "./fielderror.js";
import { getProxy, onProxyChanged, saveProxy, switchProxy, type ProxyView } from "./proxyapi.js";

const body = el<HTMLTableSectionElement>("proxy-profiles");
const activeEl = el("proxy-active");
const form = el<HTMLFormElement>("proxy-form");
const nameIn = el<HTMLInputElement>("proxy-name");
const kindIn = el<HTMLSelectElement>("proxy-kind");
const schemeIn = el<HTMLSelectElement>("proxy-scheme");
const hostIn = el<HTMLInputElement>("proxy-host");
const portIn = el<HTMLInputElement>("proxy-port");
const bypassIn = el<HTMLTextAreaElement>("proxy-bypass");
const pacIn = el<HTMLInputElement>("proxy-pac");
const fixedFields = el("proxy-fixed-fields");
const pacField = el("proxy-pac-field");
const agentBox = el<HTMLInputElement>("proxy-agent-switch");
const errorEl = el("proxy-error");

const FIELD_INPUT: Record<ProfileProblem["field"], HTMLElement> = { name: nameIn, kind: kindIn, scheme: schemeIn, host: hostIn, port: portIn, bypass: bypassIn, pacUrl: pacIn };
const FIELD_LABEL: Record<ProfileProblem["field"], string> = { name: "Name", kind: "Kind", scheme: "Scheme", host: "Host", port: "Port", bypass: "Bypass", pacUrl: "PAC URL" };

let current: ProxyView | undefined;

function showKind(): void {
  fixedFields.hidden = kindIn.value !== "fixed";
  pacField.hidden = kindIn.value !== "pac";
}

function fromForm(): ProxyProfile {
  const kind = kindIn.value as ProxyKind;
  const p: ProxyProfile = { name: nameIn.value.trim(), kind };
  if (kind === "fixed") {
    p.scheme = schemeIn.value as ProxyScheme;
    p.host = hostIn.value.trim();
    p.port = portIn.value.trim() === "" ? Number.NaN : Number(portIn.value);
    p.bypass = parseBypass(bypassIn.value);
  }
  if (kind === "pac") p.pacUrl = pacIn.value.trim();
  return p;
}

const fields = Object.values(FIELD_INPUT);

function clearInvalid(): void {
  clearMarks(fields, errorEl);
}

/** A refusal, beside the form's fields; the field it names is marked and keeps its text. */
function fail(field: ProfileProblem["field"] | undefined, message: string): void {
  clearInvalid();
  if (field) markInvalid(FIELD_INPUT[field], errorEl, `${FIELD_LABEL[field]}: ${message}`);
  else errorEl.textContent = message;
  errorEl.dataset.field = field ?? "";
}

function edit(p: ProxyProfile): void {
  clearInvalid();
  nameIn.value = p.name;
  kindIn.value = p.kind;
  schemeIn.value = p.scheme ?? "http";
  hostIn.value = p.host ?? "";
  portIn.value = p.port !== undefined ? String(p.port) : "";
  bypassIn.value = (p.bypass ?? []).join(", ");
  pacIn.value = p.pacUrl ?? "";
  showKind();
  nameIn.focus();
}

async function run(f: () => Promise<ProxyView>): Promise<boolean> {
  try {
    current = await f();
    render();
    return true;
  } catch (e) {
    const err = e as Error & { field?: ProfileProblem["field"] };
    fail(err.field, err.message);
    return false;
  }
}

function button(text: string, cls: string, label: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement("button");
  b.type = "button";
  b.className = cls;
  b.textContent = text;
  b.setAttribute("aria-label", label);
  b.addEventListener("click", onClick);
  return b;
}

function render(): void {
  const v = current;
  if (!v) return;
  const s = v.settings;
  activeEl.textContent = v.control === "other_extension" || v.control === "policy" ? `${s.active} (but ${v.control === "policy" ? "a policy" : "another extension"} controls the proxy)` : s.active;
  agentBox.checked = s.agentMaySwitch;
  body.replaceChildren(
    ...s.profiles.map((p) => {
      const tr = document.createElement("tr");
      tr.dataset.profile = p.name;
      const name = document.createElement("td");
      name.className = "proxy-name";
      name.textContent = p.name + (p.name === s.active ? " (active)" : "");
      const what = document.createElement("td");
      const bad = v.invalid[p.name];
      what.textContent = bad ? `invalid: ${bad}` : (v.descriptions[p.name] ?? "");
      if (bad) what.className = "proxy-invalid";
      // The buttons sit in a box inside the cell: a cell that is itself a flex box leaves the row.
      const cell = document.createElement("td");
      cell.className = "proxy-actions";
      const acts = document.createElement("div");
      acts.className = "buttons";
      cell.append(acts);
      if (p.name !== s.active) acts.append(button("Use", "secondary use", `Use ${p.name}`, () => void run(() => switchProxy(p.name))));
      if (!BUILTIN_PROFILES.some((b) => b.name === p.name)) {
        acts.append(button("Edit", "quiet edit", `Edit ${p.name}`, () => edit(p)));
        if (p.name !== s.active) {
          acts.append(button("Remove", "danger remove", `Remove ${p.name}`, () => void run(() => saveProxy({ ...s, profiles: s.profiles.filter((x) => x.name !== p.name) }))));
        }
      }
      tr.append(name, what, cell);
      return tr;
    }),
  );
}

kindIn.addEventListener("change", showKind);
clearOnEdit(fields, errorEl);
form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  clearInvalid();
  if (!current) return;
  const p = fromForm();
  // The same checks the worker makes, shown before anything is sent.
  const problem = profileProblems(p)[0];
  if (problem) return fail(problem.field, problem.message);
  if (BUILTIN_PROFILES.some((b) => b.name === p.name.toLowerCase())) return fail("name", `"${p.name}" is a built-in profile; choose another name`);
  const s = current.settings;
  // Saving under an existing name replaces that profile.
  const profiles = [...s.profiles.filter((x) => x.name !== p.name), p];
  void run(() => saveProxy({ ...s, profiles })).then((ok) => {
    if (ok) form.reset();
    showKind();
  });
});
agentBox.addEventListener("change", () => {
  if (current) void run(() => saveProxy({ ...current!.settings, agentMaySwitch: agentBox.checked }));
});

onProxyChanged(() => void run(getProxy));
showKind();
void run(getProxy);
