// The composer: a textarea that grows with its text, one button that is Send, or Stop while agents
// work and nothing is typed (same place, same size: the composer never jumps), and the `@`
// autocomplete (an ARIA combobox over the room's agent names; src/room/mentions.ts decides what
// the `@word` at the caret is and what completes it).

import { mentionAt, mentionChoices } from "../room/mentions.js";

export interface ComposerDeps {
  /** Agent names the autocomplete offers. */
  names(): string[];
  busy(): boolean;
  send(text: string): void;
  stop(): void;
}

const MAX_ROWS_PX = 168;

export class Composer {
  private choices: string[] = [];
  private active = 0;
  private at: { start: number; query: string } | null = null;

  constructor(
    private readonly form: HTMLFormElement,
    readonly input: HTMLTextAreaElement,
    private readonly button: HTMLButtonElement,
    private readonly menu: HTMLUListElement,
    private readonly deps: ComposerDeps,
  ) {
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (this.mode() === "stop") {
        deps.stop();
        return;
      }
      const text = input.value.trim();
      if (!text) return;
      input.value = "";
      this.changed();
      deps.send(text);
    });
    input.addEventListener("input", () => this.changed());
    input.addEventListener("click", () => this.suggest());
    input.addEventListener("blur", () => this.close());
    input.addEventListener("keydown", (ev) => this.onKey(ev));
    // mousedown, not click: the textarea keeps focus (and the caret) while a name is chosen.
    menu.addEventListener("mousedown", (ev) => {
      const li = (ev.target as HTMLElement).closest<HTMLLIElement>("li[data-name]");
      if (!li) return;
      ev.preventDefault();
      this.accept(li.dataset.name ?? "");
    });
    this.changed();
  }

  private mode(): "send" | "stop" {
    return this.deps.busy() && this.input.value.trim() === "" ? "stop" : "send";
  }

  /** Redraws the one button (call when the room's busy state changes). */
  update(): void {
    const stop = this.mode() === "stop";
    this.button.textContent = stop ? "Stop" : "Send";
    this.button.dataset.testid = stop ? "stop" : "send";
    this.button.dataset.mode = stop ? "stop" : "send";
    this.button.title = stop ? "Stop the running turns (Esc)" : "Send (Enter)";
    this.button.classList.toggle("primary", !stop);
  }

  private changed(): void {
    const s = this.input.style;
    s.height = "auto";
    s.height = `${Math.min(this.input.scrollHeight + 2, MAX_ROWS_PX)}px`;
    this.update();
    this.suggest();
  }

  /** Puts `@name ` in front of the message (a roster chip was clicked). */
  mention(name: string): void {
    const tag = `@${name} `;
    if (!this.input.value.includes(tag)) this.input.value = tag + this.input.value;
    this.input.focus();
    this.changed();
  }

  private onKey(ev: KeyboardEvent): void {
    if (ev.isComposing) return;
    if (this.open()) {
      if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
        ev.preventDefault();
        const n = this.choices.length;
        this.active = (this.active + (ev.key === "ArrowDown" ? 1 : n - 1)) % n;
        this.draw();
        return;
      }
      if (ev.key === "Enter" || ev.key === "Tab") {
        ev.preventDefault();
        this.accept(this.choices[this.active] ?? "");
        return;
      }
      if (ev.key === "Escape") {
        ev.preventDefault();
        this.close();
        return;
      }
    }
    if (ev.key === "Enter" && !ev.shiftKey) {
      ev.preventDefault();
      this.form.requestSubmit();
    } else if (ev.key === "Escape" && this.deps.busy()) {
      ev.preventDefault();
      this.deps.stop();
    }
  }

  private open(): boolean {
    return !this.menu.hidden && this.choices.length > 0;
  }

  private suggest(): void {
    const caret = this.input.selectionStart ?? this.input.value.length;
    this.at = this.input.selectionEnd === caret && document.activeElement === this.input ? mentionAt(this.input.value, caret) : null;
    const choices = this.at ? mentionChoices(this.at.query, this.deps.names()) : [];
    // Nothing to offer, or the word is already a whole name: stay out of the way.
    if (choices.length === 0 || (choices.length === 1 && choices[0]?.toLowerCase() === this.at?.query.toLowerCase())) {
      this.close();
      return;
    }
    if (choices.join("\n") !== this.choices.join("\n")) this.active = 0;
    this.choices = choices;
    this.draw();
  }

  private draw(): void {
    this.menu.replaceChildren(
      ...this.choices.map((name, i) => {
        const li = document.createElement("li");
        li.id = `mention-${i}`;
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", String(i === this.active));
        li.dataset.name = name;
        li.dataset.testid = "mention-option";
        const at = document.createElement("span");
        at.className = "at";
        at.textContent = "@";
        li.append(at, name === "all" ? "all — every agent in the room" : name);
        return li;
      }),
    );
    this.menu.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.input.setAttribute("aria-activedescendant", `mention-${this.active}`);
  }

  private close(): void {
    this.menu.hidden = true;
    this.choices = [];
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  private accept(name: string): void {
    const at = this.at;
    if (!name || !at) return this.close();
    const v = this.input.value;
    const end = at.start + 1 + at.query.length;
    const insert = `@${name} `;
    this.input.value = v.slice(0, at.start) + insert + v.slice(end).replace(/^ /, "");
    const caret = at.start + insert.length;
    this.input.setSelectionRange(caret, caret);
    this.close();
    this.changed();
  }
}
