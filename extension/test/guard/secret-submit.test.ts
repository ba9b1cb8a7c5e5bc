// @vitest-environment jsdom
// Where a submission or navigation of a document that holds a secret would go (SECURITY I-76): the
// form's request read past a page's clobbered form properties, judged against the origins every
// held secret is bound to. The key half of the password grant needs trusted events; it is covered
// in real Chromium (e2e secrets-submit), as is the guard's stopping them (e2e adversarial-secrets-origin).
import { describe, expect, it } from "vitest";
import { defaultButton, formOf, formRequest, grantCovers, type SubmitGrant } from "../../src/guard/secret-submit.js";
import { implicitLeaves, navigationLeaves, SecretHold, submitLeaves } from "../../src/guard/secret-hold.js";

function setup(html: string): { form: HTMLFormElement; pw: HTMLInputElement; hold: SecretHold } {
  document.body.innerHTML = html;
  const pw = document.getElementById("pw") as HTMLInputElement;
  const form = document.getElementById("f") as HTMLFormElement;
  const hold = new SecretHold();
  hold.add(["pw"], [["https://a.example"]]);
  return { form, pw, hold };
}

/** The guard judges the submit event while it is dispatched (its path is gone afterwards). */
function judged(h: SecretHold, form: HTMLFormElement, submitter?: HTMLElement): boolean {
  let out: boolean | undefined;
  const on = (e: Event) => (out = submitLeaves(h, e));
  window.addEventListener("submit", on, { capture: true, once: true });
  form.dispatchEvent(new SubmitEvent("submit", { bubbles: true, cancelable: true, submitter: submitter ?? null }));
  return out as boolean;
}

describe("the form a secret's field would be sent with", () => {
  it("reads the action past a field named action, and a submitter's formaction", () => {
    const { form } = setup(`<form id="f" method="post" action="https://b.example/collect"><input id="pw" type="password"><input name="action" value="/ok"><input name="method" value="dialog"><button id="go" formaction="https://c.example/x">go</button></form>`);
    expect(formRequest(form, null)).toEqual({ url: "https://b.example/collect", method: "post" });
    expect(formRequest(form, document.getElementById("go")).url).toBe("https://c.example/x");
    expect(defaultButton(form)?.id).toBe("go");
  });
  it("a form posting to the secret's own origin passes; another origin, or one the page cannot parse, does not", () => {
    const own = setup(`<form id="f" method="post" action="https://a.example/done"><input id="pw" type="password"><button>go</button></form>`);
    expect(judged(own.hold, own.form)).toBe(false);
    const other = setup(`<form id="f" method="post" action="https://b.example/collect"><input id="pw" type="password"><button>go</button></form>`);
    expect(judged(other.hold, other.form)).toBe(true);
    // A dialog form sends nothing.
    const dialog = setup(`<form id="f" method="dialog" action="https://b.example/collect"><input id="pw" type="password"></form>`);
    expect(judged(dialog.hold, dialog.form)).toBe(false);
  });
  it("any form of the document counts, not only the one that holds the field; a document that holds nothing is not judged", () => {
    const { hold, form } = setup(`<form id="f" action="https://a.example/x"><input id="pw" type="password"></form><form id="g" action="https://b.example/y"><input></form>`);
    const g = document.getElementById("g") as HTMLFormElement;
    expect(judged(hold, g)).toBe(true);
    expect(judged(hold, form)).toBe(false);
    expect(judged(new SecretHold(), g)).toBe(false);
  });
  it("the submitter's formaction and formmethod decide, and the implicit submission uses the default button", () => {
    const { hold, form } = setup(`<form id="f" method="post" action="https://a.example/ok"><input id="pw" type="password"><button id="go" formaction="https://b.example/x">go</button><button id="d" formmethod="dialog" formaction="https://b.example/x">close</button></form>`);
    expect(judged(hold, form, document.getElementById("go") as HTMLElement)).toBe(true);
    expect(judged(hold, form, document.getElementById("d") as HTMLElement)).toBe(false);
    expect(implicitLeaves(hold, form, defaultButton(form))).toBe(true);
    expect(implicitLeaves(hold, null, null)).toBe(false);
  });
  it("two secrets bound differently: only an origin both are bound to is let through", () => {
    const h = new SecretHold();
    h.add(["one"], [["https://a.example", "https://a2.example"]]);
    expect(h.allows("https://a2.example/x")).toBe(true);
    h.add(["two"], [["https://a.example"]]);
    expect(h.allows("https://a2.example/x")).toBe(false);
    expect(h.allows("https://a.example/x")).toBe(true);
    expect(h.allows("not a url")).toBe(false);
    expect(h.origins()).toEqual(["https://a.example"]);
  });
  it("a navigation to another document is judged by its destination URL; a same-document one is not", () => {
    const { hold } = setup(`<form id="f"><input id="pw" type="password"></form>`);
    const nav = (url: string, sameDocument = false) => Object.assign(new Event("navigate", { cancelable: true }), { destination: { url, sameDocument } });
    expect(navigationLeaves(hold, nav("https://b.example/collect?pw=x"))).toBe(true);
    expect(navigationLeaves(hold, nav("https://a.example/next"))).toBe(false);
    expect(navigationLeaves(hold, nav("https://b.example/#x", true))).toBe(false);
    expect(navigationLeaves(hold, nav("about:blank"))).toBe(true);
    expect(navigationLeaves(new SecretHold(), nav("https://b.example/"))).toBe(false);
  });
  it("a field joined to a form by its form attribute belongs to that form", () => {
    const { pw } = setup(`<form id="f" action="https://b.example/x"></form><input id="pw" type="password" form="f">`);
    expect(formOf(pw)?.id).toBe("f");
  });
  it("an untrusted key never counts as the submit key", () => {
    const { pw } = setup(`<form id="f"><input id="pw" type="password"></form>`);
    const grant: SubmitGrant = { token: "t", el: pw, origins: ["https://a.example"], spent: new Set() };
    expect(grantCovers(grant, "t", new KeyboardEvent("keydown", { key: "Enter" }), pw)).toBe(false);
  });
});
