// The options page's secrets section (SECURITY I-69): the person adds, removes and locks secrets.
// The value goes to the worker once, when added, and is never shown or read back: the worker
// answers with names, kinds and origins only.
import { secretProblem, type SecretField, type SecretInfo } from "../secrets/store.js";
import { el } from "./api.js";
import { clearInvalid, clearOnEdit, markInvalid } from "./fielderror.js";

const nameIn = el<HTMLInputElement>("secret-name");
const kindIn = el<HTMLSelectElement>("secret-kind");
const valueIn = el<HTMLInputElement>("secret-value");
const originsIn = el<HTMLInputElement>("secret-origins");
const addBtn = el<HTMLButtonElement>("secret-add");
const lockBox = el<HTMLInputElement>("secrets-locked");
const body = el<HTMLTableSectionElement>("secrets");
const errorEl = el("secret-error");
const FIELD_INPUT: Record<SecretField, HTMLElement> = { name: nameIn, kind: kindIn, value: valueIn, origins: originsIn };
const fields = Object.values(FIELD_INPUT);

/** A refusal from the worker, with the field of a new secret at fault when there is one. */
class SecretPageError extends Error {
  constructor(
    message: string,
    readonly field?: SecretField,
  ) {
    super(message);
  }
}

async function call<T>(msg: Record<string, unknown>): Promise<T> {
  const r = (await chrome.runtime.sendMessage(msg)) as ({ ok: boolean; error?: string; field?: SecretField } & T) | undefined;
  if (!r) throw new SecretPageError("the extension's service worker did not answer");
  if (!r.ok) throw new SecretPageError(r.error ?? "failed", r.field && r.field in FIELD_INPUT ? r.field : undefined);
  return r;
}

/** Shows a refusal beside the form; the field it names is marked and keeps its text. */
function fail(message: string, field?: SecretField): void {
  clearInvalid(fields, errorEl);
  if (field) markInvalid(FIELD_INPUT[field], errorEl, message);
  else errorEl.textContent = message;
}

async function run(f: () => Promise<unknown>): Promise<void> {
  clearInvalid(fields, errorEl);
  try {
    await f();
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e), e instanceof SecretPageError ? e.field : undefined);
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
    fail(e instanceof Error ? e.message : String(e));
  }
}

clearOnEdit(fields, errorEl);
addBtn.addEventListener("click", () => {
  const msg = {
    type: "torii.secrets.add",
    name: nameIn.value.trim(),
    kind: kindIn.value,
    value: valueIn.value,
    origins: originsIn.value.split(/[\s,]+/).filter(Boolean),
  };
  // The worker makes the same checks; here they are shown before the value leaves the page.
  const problem = secretProblem(msg.name, msg.kind, msg.value, msg.origins);
  if (problem) return fail(problem.message, problem.field);
  void run(async () => {
    await call(msg);
    nameIn.value = "";
    valueIn.value = "";
    originsIn.value = "";
  });
});
lockBox.addEventListener("change", () => void run(() => call({ type: "torii.secrets.lock", locked: lockBox.checked })));
void load();
