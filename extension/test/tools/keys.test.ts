import { describe, expect, it } from "vitest";
import { comboEvents, KeyError, MOD_CTRL, MOD_META, MOD_SHIFT, parseCombo } from "../../src/tools/keys.js";

describe("parseCombo", () => {
  it("maps named keys with codes and virtual key codes", () => {
    expect(parseCombo("Enter", false).key).toMatchObject({ key: "Enter", code: "Enter", keyCode: 13, text: "\r" });
    expect(parseCombo("Tab", false).key).toMatchObject({ key: "Tab", code: "Tab", keyCode: 9 });
    expect(parseCombo("Escape", false).key.keyCode).toBe(27);
    expect(parseCombo("esc", false).key.key).toBe("Escape");
    expect(parseCombo("ArrowDown", false).key).toMatchObject({ code: "ArrowDown", keyCode: 40 });
    expect(parseCombo("backspace", false).key.keyCode).toBe(8);
    expect(parseCombo("F5", false).key.keyCode).toBe(116);
  });
  it("resolves Mod per platform", () => {
    expect(parseCombo("Mod+A", false)).toMatchObject({ modifiers: ["Control"], mask: MOD_CTRL });
    expect(parseCombo("Mod+A", true)).toMatchObject({ modifiers: ["Meta"], mask: MOD_META });
    const c = parseCombo("Mod+a", false);
    expect(c.key).toMatchObject({ key: "a", code: "KeyA", keyCode: 65 });
    expect(c.key.text).toBeUndefined();
  });
  it("Shift+letter is the capital; Shift+Tab keeps Tab", () => {
    expect(parseCombo("Shift+a", false).key).toMatchObject({ key: "A", text: "A" });
    expect(parseCombo("Shift+Tab", false)).toMatchObject({ mask: MOD_SHIFT, key: { key: "Tab" } });
  });
  it("handles the plus key and rejects nonsense", () => {
    expect(parseCombo("+", false).key.key).toBe("+");
    expect(parseCombo("Control++", false).key.key).toBe("+");
    expect(() => parseCombo("Ctrl+Nope", false)).toThrow(KeyError);
    expect(() => parseCombo("Hyper+A", false)).toThrow(KeyError);
    expect(() => parseCombo("", false)).toThrow(KeyError);
  });
});

describe("comboEvents", () => {
  it("presses modifiers, the key, then releases in reverse", () => {
    const ev = comboEvents(parseCombo("Control+Shift+ArrowLeft", false), false);
    expect(ev.map((e) => `${e.type}:${e.key}:${e.modifiers}`)).toEqual([
      "rawKeyDown:Control:2",
      "rawKeyDown:Shift:10",
      "rawKeyDown:ArrowLeft:10",
      "keyUp:ArrowLeft:10",
      "keyUp:Shift:2",
      "keyUp:Control:0",
    ]);
  });
  it("a text key is keyDown with text; mac editing shortcuts carry commands", () => {
    const [down] = comboEvents(parseCombo("x", false), false);
    expect(down).toMatchObject({ type: "keyDown", text: "x", windowsVirtualKeyCode: 88 });
    const mac = comboEvents(parseCombo("Mod+A", true), true);
    expect(mac.find((e) => e.key === "a" && e.type === "rawKeyDown")?.commands).toEqual(["selectAll"]);
  });
});
