// Every route of the attack site, looked up by path (anything under /api/ is the API).
import type { Route } from "./html.ts";
import { FRAME_ROUTES } from "./pages-frames.ts";
import { INVOKE_ROUTES } from "./pages-invoke.ts";
import { NAV_ROUTES } from "./pages-nav.ts";
import { SECRET_ROUTES } from "./pages-secrets.ts";
import { URL_ROUTES } from "./pages-urls.ts";

const ROUTES: Record<string, Route> = { ...FRAME_ROUTES, ...NAV_ROUTES, ...INVOKE_ROUTES, ...URL_ROUTES, ...SECRET_ROUTES };

export function routeFor(path: string): Route | undefined {
  return ROUTES[path] ?? (path.startsWith("/api/") ? ROUTES["/api/"] : undefined);
}
