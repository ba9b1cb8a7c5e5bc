import type { PageError, PageErrorCode } from "./types";

/** Thrown inside the engine; call() turns it into a typed error reply. */
export class EngineError extends Error {
  constructor(
    readonly code: PageErrorCode,
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
  toJSON(): PageError {
    return { code: this.code, message: this.message, hint: this.hint };
  }
}

const HINTS: Record<PageErrorCode, string> = {
  password_field: "The target or focused field is a password field; pass allowPassword only if the person allowed passwords for this origin.",
  stale_ref: "The element is gone or the page changed; take a new snapshot and use its refs.",
  not_found: "Nothing matched; take a snapshot or use find to see what the page offers.",
  not_visible: "The element is not visible; scroll to it or wait for it to appear.",
  covered: "Another element covers it; act on the covering element first (e.g. close the overlay).",
  not_editable: "The element does not accept text; pick a textbox, textarea or contenteditable.",
  disabled: "The element is disabled; wait for it to become enabled or change the form first.",
  invalid_argument: "Check the arguments against the tool's schema.",
  unknown_method: "The extension and page engine disagree; reload the tab.",
  origin_not_allowed: "This document's origin is not on the person's allowlist; only the person can add it. Nothing was read or done.",
  secret_not_found: "No secret has that name; call secrets for the names the person keeps.",
  secret_origin_mismatch: "The secret is not bound to this document's origin; nothing was filled. Only the person can add the origin to the secret.",
};

export function fail(code: PageErrorCode, message: string, hint?: string): never {
  throw new EngineError(code, message, hint ?? HINTS[code]);
}
