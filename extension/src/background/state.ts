// Durable link settings in chrome.storage.local, so a restarted service worker resumes the link.
// Only public material is stored here; the device private key lives in IndexedDB (identity.ts).

const DEFAULT_DAEMON_URL = "ws://127.0.0.1:7317/acp";

export interface Settings {
  daemonUrl: string;
  deviceName: string;
  paused: boolean;
  /** The MCP server id declared in session/new; stable for this browser profile. */
  serverId: string;
  /** Set once paired. */
  deviceId?: string;
  /** The daemon's public key pinned at pairing, base64url. */
  daemonKey?: string;
  daemonId?: string;
}

/** The subset of chrome.storage.StorageArea the link needs; injected so tests run without Chrome. */
export interface KV {
  get(keys: string[]): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
  remove(keys: string[]): Promise<void>;
}

const KEYS = ["daemonUrl", "deviceName", "paused", "serverId", "deviceId", "daemonKey", "daemonId"] as const;

/** "Chrome on Linux" from a platform string such as navigator.userAgentData.platform. */
export function defaultDeviceName(platform: string | undefined): string {
  const p = (platform ?? "").toLowerCase();
  const os = p.includes("mac")
    ? "macOS"
    : p.includes("win")
      ? "Windows"
      : p.includes("cros") || p.includes("chrome os")
        ? "ChromeOS"
        : p.includes("android")
          ? "Android"
          : p.includes("linux")
            ? "Linux"
            : "";
  return os ? `Chrome on ${os}` : "Chrome";
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

export class SettingsStore {
  constructor(
    private readonly kv: KV,
    private readonly platform: string | undefined,
    private readonly newId: () => string = () => crypto.randomUUID(),
  ) {}

  async load(): Promise<Settings> {
    const raw = await this.kv.get([...KEYS]);
    const s: Settings = {
      daemonUrl: str(raw.daemonUrl) ?? DEFAULT_DAEMON_URL,
      deviceName: str(raw.deviceName) ?? defaultDeviceName(this.platform),
      paused: raw.paused === true,
      serverId: str(raw.serverId) ?? "",
    };
    const deviceId = str(raw.deviceId);
    const daemonKey = str(raw.daemonKey);
    const daemonId = str(raw.daemonId);
    if (deviceId) s.deviceId = deviceId;
    if (daemonKey) s.daemonKey = daemonKey;
    if (daemonId) s.daemonId = daemonId;
    if (!s.serverId) {
      // Minted once and kept: the daemon and later issues key tunnels by this id.
      s.serverId = this.newId();
      await this.kv.set({ serverId: s.serverId });
    }
    return s;
  }

  async update(patch: Partial<Omit<Settings, "deviceId" | "daemonKey" | "daemonId">>): Promise<void> {
    await this.kv.set(patch);
  }

  async savePairing(p: { deviceId: string; daemonKey: string; daemonId: string }): Promise<void> {
    await this.kv.set(p);
  }

  async clearPairing(): Promise<void> {
    await this.kv.remove(["deviceId", "daemonKey", "daemonId"]);
  }
}

const TICKET_KEY = "linkTicket";

/**
 * The daemon's reconnect ticket (SECURITY I-57) in chrome.storage.session: it outlives a service
 * worker Chrome stopped, so the restarted worker still has its reserved way in, and it ends with
 * the browser. Session storage is not exposed to content scripts unless the extension widens its
 * access level, which it never does. Kept with the device it was issued to: offered as another
 * device, the daemon would refuse the connection.
 */
export class TicketStore {
  constructor(private readonly kv: KV) {}

  /** The ticket issued to deviceId, or "". */
  async load(deviceId: string | undefined): Promise<string> {
    const v = (await this.kv.get([TICKET_KEY]))[TICKET_KEY] as { deviceId?: unknown; ticket?: unknown } | undefined;
    if (!deviceId || !v || v.deviceId !== deviceId || typeof v.ticket !== "string") return "";
    return v.ticket;
  }

  async save(deviceId: string, ticket: string): Promise<void> {
    await this.kv.set({ [TICKET_KEY]: { deviceId, ticket } });
  }

  async clear(): Promise<void> {
    await this.kv.remove([TICKET_KEY]);
  }
}
