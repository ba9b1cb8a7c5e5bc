// A refused entry on the options page: the message sits next to the field, the text stays in the
// box, and the field is marked for assistive technology (aria-invalid, aria-describedby naming the
// message). Editing the field again clears the mark.

/** Marks `field` refused with `message` shown in `errorEl` (which must have an id). */
export function markInvalid(field: HTMLElement, errorEl: HTMLElement, message: string): void {
  field.setAttribute("aria-invalid", "true");
  const ids = new Set((field.getAttribute("aria-describedby") ?? "").split(/\s+/).filter(Boolean));
  ids.add(errorEl.id);
  field.setAttribute("aria-describedby", [...ids].join(" "));
  errorEl.textContent = message;
}

/** Clears the marks `errorEl` put on the fields, and its message. */
export function clearInvalid(fields: HTMLElement[], errorEl: HTMLElement): void {
  for (const f of fields) {
    if (!(f.getAttribute("aria-describedby") ?? "").split(/\s+/).includes(errorEl.id)) continue;
    f.removeAttribute("aria-invalid");
    const rest = (f.getAttribute("aria-describedby") ?? "").split(/\s+/).filter((id) => id && id !== errorEl.id);
    if (rest.length) f.setAttribute("aria-describedby", rest.join(" "));
    else f.removeAttribute("aria-describedby");
  }
  errorEl.textContent = "";
}

/** Editing any of the fields clears the form's refusal. */
export function clearOnEdit(fields: HTMLElement[], errorEl: HTMLElement): void {
  for (const f of fields) {
    const clear = () => {
      if (f.getAttribute("aria-invalid") === "true" || errorEl.textContent) clearInvalid(fields, errorEl);
    };
    f.addEventListener("input", clear);
    f.addEventListener("change", clear);
  }
}
