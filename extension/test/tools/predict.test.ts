// Approvals judged by effect (SECURITY I-19, I-37): what an input call will cause, from its
// arguments and the page's facts, whichever tool sends it.
import { describe, expect, it } from "vitest";
import { keysOf, predictInput, type ElementFacts } from "../../src/tools/predict.js";
import type { Effect } from "../../src/tools/traits.js";

const NONE = { submit: false, destructive: false };
const field: ElementFacts = { label: 'textbox "Query"', click: NONE, enter: { submit: true, destructive: false }, space: NONE };
const submitBtn: ElementFacts = { label: 'button "Place order"', click: { submit: true, destructive: false }, enter: { submit: true, destructive: false }, space: { submit: true, destructive: false } };
const danger: ElementFacts = { label: 'button "Delete"', click: { submit: false, destructive: true }, enter: { submit: false, destructive: true }, space: { submit: false, destructive: true } };
const link: ElementFacts = { label: 'link "Elsewhere"', click: { ...NONE, href: "https://other.example/x" }, enter: { ...NONE, href: "https://other.example/x" }, space: NONE };
const textarea: ElementFacts = { label: "textarea", click: NONE, enter: NONE, space: NONE };
const CLICK: Effect[] = ["click"];
const KEYS: Effect[] = ["click", "keys"];
const kinds = (effects: Effect[], args: Record<string, unknown>, f: { target?: ElementFacts; focus?: ElementFacts }) =>
  predictInput(effects, args, { origin: "https://good.example", ...f }, false).map((p) => p.kind).sort();

describe("keysOf", () => {
  it("key combos, repeats, text (newline = Enter, tab = Tab), submit", () => {
    expect(keysOf({ key: "Enter" })).toEqual(["Enter"]);
    expect(keysOf({ key: "Shift+Enter", repeat: 2 })).toEqual(["Enter", "Enter"]);
    expect(keysOf({ key: "Space" })).toEqual([" "]);
    expect(keysOf({ text: "a\nb\t " })).toEqual(["a", "Enter", "b", "Tab", " "]);
    expect(keysOf({ text: "x", submit: true })).toEqual(["x", "Enter"]);
    expect(keysOf({ key: "Hyper+Nope" })).toEqual([""]);
  });
});

describe("predictInput", () => {
  it("a click on a submit button, a destructive button, a link to another origin", () => {
    expect(kinds(CLICK, { ref: "e1" }, { target: submitBtn })).toEqual(["submit"]);
    expect(kinds(CLICK, { ref: "e1" }, { target: danger })).toEqual(["destructive_click"]);
    expect(kinds(CLICK, { ref: "e1" }, { target: link })).toEqual(["new_origin"]);
    expect(predictInput(CLICK, { ref: "e1" }, { origin: "https://good.example", target: link }, false)[0]?.target).toBe("https://other.example");
    expect(kinds(CLICK, { ref: "e1" }, { target: { ...link, click: { ...NONE, href: "https://good.example/next" } } })).toEqual([]);
  });
  it("press_key Enter in a form field (aimed at it or focused), in a textarea", () => {
    expect(kinds(KEYS, { ref: "e1", key: "Enter" }, { target: field })).toEqual(["submit"]);
    expect(kinds(KEYS, { key: "Enter" }, { focus: field })).toEqual(["submit"]);
    expect(kinds(KEYS, { key: "Enter" }, { focus: textarea })).toEqual([]);
    expect(kinds(KEYS, { key: "a" }, { focus: field })).toEqual([]);
  });
  it("text with a newline into a form field; submit: true whatever the focus", () => {
    expect(kinds(KEYS, { ref: "e1", text: "hello\n" }, { target: field })).toEqual(["submit"]);
    expect(kinds(KEYS, { text: "hello" }, { focus: field })).toEqual([]);
    expect(kinds(KEYS, { text: "hello", submit: true }, {})).toEqual(["submit"]);
  });
  it("Space on a focused submit or destructive button (Tab then Space); Space in a field does nothing", () => {
    expect(kinds(KEYS, { key: "Space" }, { focus: submitBtn })).toEqual(["submit"]);
    expect(kinds(KEYS, { key: "Space" }, { focus: danger })).toEqual(["destructive_click"]);
    expect(kinds(KEYS, { text: "a b" }, { focus: field })).toEqual([]);
  });
  it("the focusing click of press_key / type aimed at a destructive button counts", () => {
    expect(kinds(KEYS, { ref: "e1", key: "x" }, { target: danger })).toEqual(["destructive_click"]);
    expect(kinds(KEYS, { ref: "e1", text: "x" }, { target: danger })).toEqual(["destructive_click"]);
  });
  it("after a Tab the focus is unknown: keys after it are left to the guard", () => {
    expect(kinds(KEYS, { text: "\t\n" }, { focus: field })).toEqual([]);
  });
  it("a tool that only sets values predicts nothing; a masked text for the person when passwords may be typed", () => {
    expect(kinds(["input"], { ref: "e1", value: "x" }, { target: danger })).toEqual([]);
    const p = predictInput(KEYS, { text: "hunter2", submit: true }, { origin: "https://good.example" }, true);
    expect(p[0]?.text).not.toContain("hunter2");
  });
  it("a secret reference is shown to the person by its name, marked hidden", () => {
    const p = predictInput(KEYS, { text: "Bearer {{secret:api}}", submit: true }, { origin: "https://good.example" }, false);
    expect(p[0]?.text).toBe("Bearer [secret api, hidden]");
  });
});
