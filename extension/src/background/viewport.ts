// The agent tabs' viewport a managed launch asked for (`torii launch --window-size W,H`, 1280×720
// by default headless). It comes in the connect page's fragment and is taken like the launch's
// other settings (managed.ts: the first managed connect of the browser run, in a profile torii
// made), kept in chrome.storage.session (it ends with the browser). Each window the extension opens
// for an agent is then sized so that its page area is exactly that: Chromium sizes a window with
// its toolbars (and any infobar), which differ by mode and version, so the window is measured once
// it exists and corrected by the difference.

export interface Viewport {
  width: number;
  height: number;
}

const KEY = "torii_launch_viewport";

/** The bounds `torii launch` checks too: below 200 no page lays out, above 8K UHD is no screen. */
const MIN = 200;
const MAX_W = 7680;
const MAX_H = 4320;

export function isViewport(v: unknown): v is Viewport {
  if (typeof v !== "object" || v === null) return false;
  const { width, height } = v as Record<string, unknown>;
  return Number.isInteger(width) && Number.isInteger(height) && (width as number) >= MIN && (width as number) <= MAX_W && (height as number) >= MIN && (height as number) <= MAX_H;
}

/** "1280x720" → the viewport; anything else (or out of bounds) → undefined. */
export function parseViewport(s: string | null): Viewport | undefined {
  const m = /^(\d{1,5})x(\d{1,5})$/.exec(s ?? "");
  const v = m ? { width: Number(m[1]), height: Number(m[2]) } : undefined;
  return isViewport(v) ? v : undefined;
}

export async function markLaunchViewport(v: Viewport): Promise<void> {
  await chrome.storage.session.set({ [KEY]: v });
}

/** The viewport this browser run's launch asked for, if any. */
async function launchViewport(): Promise<Viewport | undefined> {
  const r = await chrome.storage.session.get(KEY);
  const v: unknown = r[KEY];
  return isViewport(v) ? v : undefined;
}

/** Tries to correct a window this often: a toolbar or infobar may appear just after it opened. */
const FIT_TRIES = 3;

/**
 * Sizes a window the extension just opened for an agent so that its active tab's page area is the
 * launch's viewport; does nothing without one. Best effort: a window that cannot be sized (a
 * person's screen smaller than asked) keeps the size Chromium gave it.
 */
export async function fitAgentWindow(windowId: number | undefined): Promise<void> {
  if (windowId === undefined) return;
  const v = await launchViewport();
  if (!v) return;
  for (let i = 0; i < FIT_TRIES; i++) {
    const w = await chrome.windows.get(windowId, { populate: true }).catch(() => undefined);
    const t = w?.tabs?.find((x) => x.active) ?? w?.tabs?.[0];
    if (!w || !t || w.width === undefined || w.height === undefined || !t.width || !t.height) return;
    const dw = v.width - t.width;
    const dh = v.height - t.height;
    if (dw === 0 && dh === 0) return;
    const ok = await chrome.windows.update(windowId, { width: w.width + dw, height: w.height + dh }).then(
      () => true,
      () => false,
    );
    if (!ok) return;
  }
}
