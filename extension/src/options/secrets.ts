// The options page's secrets section (SECURITY I-69): the person adds, removes and locks secrets.
// The value goes to the worker once, when added, and is never shown or read back: the worker
// answers with names, kinds and origins only.
import type { SecretInfo } from "../secrets/store.js";
import { el } from "./api.js";

const nameIn = el<HTMLInputElement>("secret-name");
const kindIn = el<HTMLSelectElement>("secret-kind");
const valueIn = el<HTMLInputElement>("secret-value");
const originsIn = el<HTMLInputElement>("secret-origins");
const addBtn = el<HTMLButtonElement>("secret-add");
const lockBox = el<HTMLInputElement>("secrets-locked");
const body = el<HTMLTableSectionElement>("secrets");
const errorEl = el("error");

async function call<T>(msg: Record<string, unknown>): Promise<T> {
  const r = (await chrome.runtime.sendMessage(msg)) as ({ ok: boolean; error?: string } & T) | undefined;
  if (!r) throw new Error("the extension's service worker did not answer");
  if (!r.ok) throw new Error(r.error ?? "failed");
  return r;
}

async function run(f: () => Promise<unknown>): Promise<void> {
  errorEl.textContent = "";
  try {
    await f();
  } catch (e) {
    errorEl.textContent = e instanceof Error ? e.message : String(e);
  }
  await load();
}

function render(list: SecretInfo[], locked: boolean): void {
  lockBox.checked = locked;
  body.replaceChildren();
  if (list.length === 0) {
    const tr = document.createElement("tr");
    const td = document.createElement("td");
    td.colSpan = 4;
    td.className = "empty";
    td.textContent = "No secrets.";
    tr.append(td);
    body.append(tr);
  }
  for (const s of list) {
    const tr = document.createElement("tr");
    tr.dataset.secret = s.name;
    for (const [label, text] of [["Name", s.name], ["Kind", s.kind], ["Origins", s.origins.join(", ")]] as const) {
      const td = document.createElement("td");
      td.dataset.label = label;
      td.textContent = text;
      tr.append(td);
    }
    const td = document.createElement("td");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "danger remove";
    b.textContent = "Remove";
    b.setAttribute("aria-label", `Remove secret ${s.name}`);
    b.addEventListener("click", () => void run(() => call({ type: "torii.secrets.remove", name: s.name })));
    td.append(b);
    tr.append(td);
    body.append(tr);
  }
}

async function load(): Promise<void> {
  try {
    const r = await call<{ secrets: SecretInfo[]; locked: boolean }>({ type: "torii.secrets.list" });
    render(r.secrets, r.locked);
  } catch (e) {
    errorEl.textContent = e instanceof Error ? e.message : String(e);
  }
}

addBtn.addEventListener("click", () => {
  const msg = {
    type: "torii.secrets.add",
    name: nameIn.value.trim(),
    kind: kindIn.value,
    value: valueIn.value,
    origins: originsIn.value.split(/[\s,]+/).filter(Boolean),
  };
  void run(async () => {
    await call(msg);
    nameIn.value = "";
    valueIn.value = "";
    originsIn.value = "";
  });
});
lockBox.addEventListener("change", () => void run(() => call({ type: "torii.secrets.lock", locked: lockBox.checked })));
void load();
