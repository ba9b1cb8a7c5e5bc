// A chrome.* event for tests that need to see what was asked of the browser: each listener is kept
// with the filter and extra options it was added with (webRequest's tabId, ["requestBody"], …).
// Like the browser, it hands an event only to listeners whose filter's tabId (if any) matches.
type Fn = (...a: never[]) => unknown;

export class Ev {
  readonly ls: { f: Fn; tabId?: number; opts?: string[] }[] = [];
  addListener(f: Fn, filter?: { tabId?: number }, opts?: string[]) {
    this.ls.push({ f, ...(filter?.tabId !== undefined ? { tabId: filter.tabId } : {}), ...(opts ? { opts } : {}) });
  }
  removeListener(f: Fn) {
    const i = this.ls.findIndex((l) => l.f === f);
    if (i >= 0) this.ls.splice(i, 1);
  }
  fire(...a: unknown[]) {
    const tabId = (a[0] as { tabId?: number } | undefined)?.tabId;
    for (const l of [...this.ls]) if (l.tabId === undefined || l.tabId === tabId) (l.f as (...x: unknown[]) => unknown)(...a);
  }
}
