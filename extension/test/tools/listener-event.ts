// A chrome.* event for tests that need to see what was asked of the browser: each listener is kept
// with the extra options it was added with (webRequest's ["requestBody"], ["responseHeaders"], …).
type Fn = (...a: never[]) => unknown;

export class Ev {
  readonly ls: { f: Fn; opts?: string[] }[] = [];
  addListener(f: Fn, _filter?: unknown, opts?: string[]) {
    this.ls.push({ f, ...(opts ? { opts } : {}) });
  }
  removeListener(f: Fn) {
    const i = this.ls.findIndex((l) => l.f === f);
    if (i >= 0) this.ls.splice(i, 1);
  }
  fire(...a: unknown[]) {
    for (const l of [...this.ls]) (l.f as (...x: unknown[]) => unknown)(...a);
  }
}
