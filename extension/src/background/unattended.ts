// Whether a person can answer an approval in this browser (SECURITY I-80), decided from facts the
// extension holds, never guessed from how the browser looks:
// - `torii launch` started this browser run headless: it says so in the connect page's fragment,
//   taken only with the first managed connect of the run (background/managed.ts), and kept in
//   chrome.storage.session, which ends with the browser;
// - and no Torii page that can answer is open: the popup (which lists pending approvals) or an
//   approval window someone already has in front of them (a headless browser driven over remote
//   debugging can show one).
// The fact can only refuse approvals at once; it never lets one through.

const KEY = "torii_headless_run";

/** Pages that list pending approvals and can answer them. */
const ANSWERING_PAGES = ["/popup.html", "/approval.html"];

/** Records that this browser run was started headless by `torii launch`. */
export async function markHeadlessRun(): Promise<void> {
  await chrome.storage.session.set({ [KEY]: true });
}

export async function headlessRun(): Promise<boolean> {
  const r = await chrome.storage.session.get(KEY);
  return r[KEY] === true;
}

/** True when an approval asked now could be seen by no one. */
export async function noOneCanAnswer(): Promise<boolean> {
  if (!(await headlessRun())) return false;
  const open = await chrome.runtime.getContexts({ contextTypes: [chrome.runtime.ContextType.POPUP, chrome.runtime.ContextType.TAB] });
  return !open.some((c) => {
    try {
      return ANSWERING_PAGES.includes(new URL(c.documentUrl ?? "").pathname);
    } catch {
      return false;
    }
  });
}
