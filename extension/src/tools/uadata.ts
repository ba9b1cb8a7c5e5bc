// What a user-agent string implies for the rest of the tab's identity: navigator.platform and the
// client hints (Sec-CH-UA*, navigator.userAgentData) a browser of that kind would send, so an
// override does not contradict itself. Pure; tools/useragent.ts sends it through CDP.

export const MAX_UA_BYTES = 1024;

/** Why the string cannot be a User-Agent header, or null. */
export function userAgentProblem(ua: string): string | null {
  if (ua.trim() === "") return "userAgent is empty; pass reset:true to restore the browser's own";
  if (/[\r\n]/.test(ua)) return "userAgent contains a line break; a header value is one line";
  // Printable ASCII only: a header value with control or non-ASCII characters is not sent as typed.
  if (/[^\x20-\x7e]/.test(ua)) return "userAgent must be printable ASCII (no control or non-ASCII characters)";
  const bytes = new TextEncoder().encode(ua).length;
  if (bytes > MAX_UA_BYTES) return `userAgent is ${bytes} bytes; at most ${MAX_UA_BYTES}`;
  return null;
}

interface Brand {
  brand: string;
  version: string;
}

/** CDP Emulation.UserAgentMetadata. */
interface UserAgentMetadata {
  brands: Brand[];
  fullVersionList: Brand[];
  fullVersion: string;
  platform: string;
  platformVersion: string;
  architecture: string;
  model: string;
  mobile: boolean;
  bitness: string;
  wow64: boolean;
}

export interface Identity {
  /** navigator.platform as that browser reports it ("" leaves the tab's own). */
  platform: string;
  /** Absent for a browser that sends no client hints (Firefox, Safari, Chrome on iOS): the tab then sends none. */
  metadata?: UserAgentMetadata;
}

/** The platform, client hints and navigator.platform a browser sending this UA string would show. */
export function identityOf(ua: string): Identity {
  let platform = "";
  let uaPlatform = "";
  let platformVersion = "";
  let model = "";
  const arm = /\b(arm|aarch64)/i.test(ua);
  const mobile = /\bMobile\b/.test(ua);
  let m: RegExpExecArray | null;
  if ((m = /Windows NT (\d+\.\d+)/.exec(ua))) {
    uaPlatform = "Windows";
    platform = "Win32";
    platformVersion = m[1] === "10.0" ? "10.0.0" : `${m[1]}.0`;
  } else if (/\b(iPhone|iPad|iPod)\b/.test(ua)) {
    uaPlatform = "iOS";
    platform = /iPad/.test(ua) ? "iPad" : "iPhone";
  } else if ((m = /Mac OS X (\d+(?:[._]\d+)*)/.exec(ua))) {
    uaPlatform = "macOS";
    platform = "MacIntel";
    platformVersion = m[1]!.replace(/_/g, ".");
  } else if ((m = /Android(?: (\d+(?:\.\d+)*))?(?:; ([^;)]+))?/.exec(ua))) {
    uaPlatform = "Android";
    platform = arm || !/x86/.test(ua) ? "Linux armv8l" : "Linux x86_64";
    platformVersion = m[1] ?? "";
    model = (m[2] ?? "").replace(/\s*Build\/.*$/, "").trim();
  } else if (/\bCrOS\b/.test(ua)) {
    uaPlatform = "Chrome OS";
    platform = arm ? "Linux aarch64" : "Linux x86_64";
  } else if (/\bLinux\b|\bX11\b/.test(ua)) {
    uaPlatform = "Linux";
    platform = arm ? "Linux aarch64" : "Linux x86_64";
  }
  // Only Chromium-based browsers send client hints, and not on iOS (WebKit underneath).
  const chromium = /\b(?:Chrome|Chromium|HeadlessChrome)\/(\d+)((?:\.\d+){0,3})/.exec(ua);
  if (!chromium || /\bFirefox\//.test(ua) || uaPlatform === "iOS") return { platform };
  const major = chromium[1]!;
  const full = `${major}${chromium[2] || ".0.0.0"}`;
  const edge = /\bEdg\/(\d+)((?:\.\d+){0,3})/.exec(ua);
  const brand = edge ? "Microsoft Edge" : /HeadlessChrome|Chromium\//.test(ua) ? undefined : "Google Chrome";
  const brandMajor = edge ? edge[1]! : major;
  const brandFull = edge ? `${edge[1]}${edge[2] || ".0.0.0"}` : full;
  const grease = { brand: "Not_A Brand", version: "24" };
  const brands: Brand[] = [grease, { brand: "Chromium", version: major }, ...(brand ? [{ brand, version: brandMajor }] : [])];
  const fullVersionList: Brand[] = [{ ...grease, version: "24.0.0.0" }, { brand: "Chromium", version: full }, ...(brand ? [{ brand, version: brandFull }] : [])];
  const desktop = uaPlatform !== "Android";
  return {
    platform,
    metadata: {
      brands,
      fullVersionList,
      fullVersion: brandFull,
      platform: uaPlatform,
      platformVersion,
      architecture: desktop ? (arm ? "arm" : "x86") : "",
      model,
      mobile,
      bitness: desktop ? (/\b(Win64|x64|x86_64|WOW64|aarch64|Intel Mac)/.test(ua) || uaPlatform === "macOS" ? "64" : "32") : "",
      wow64: /\bWOW64\b/.test(ua),
    },
  };
}
