// What the action modules (actions, find, form, reveal, wait, type-secret) use of the engine. The
// engine passes itself as this context, so those modules depend on this type, never on engine.ts.
import type { RefTable } from "./refs";
import type { Item } from "./tree";
import type { Target } from "./types";

export interface EngineContext {
  /** This document's identity: a reply names it so that a ref from another document is refused. */
  readonly docId: string;
  readonly refs: RefTable;
  /** ref or selector → element; stale_ref / not_found otherwise. */
  target(a: Target, what?: string): Element;
  /** `root` option: "b12" is a ref, anything else a CSS selector; absent is the whole page. */
  rootOf(root: unknown): Element;
  /** The outline tree of `root` (assigning refs to its interactive elements). */
  tree(root: Element): { items: Item[] };
}
