// Byte-exact transcripts of docs/protocol.md, shared by pairing and the signed challenge.
// testdata/vectors.json pins every function here; the Go daemon computes the same bytes.

export type Bytes = Uint8Array<ArrayBuffer>;

const utf8 = new TextEncoder();

/** enc(f1, f2, …): each field as a 4-byte big-endian length followed by its bytes. */
export function enc(...fields: ReadonlyArray<string | Uint8Array>): Bytes {
  const parts = fields.map((f) => (typeof f === "string" ? utf8.encode(f) : f));
  const total = parts.reduce((n, p) => n + 4 + p.length, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let off = 0;
  for (const p of parts) {
    view.setUint32(off, p.length, false);
    out.set(p, off + 4);
    off += 4 + p.length;
  }
  return out;
}

export interface PairFields {
  requestId: string;
  origin: string;
  deviceKey: Uint8Array;
  daemonKey: Uint8Array;
  clientNonce: Uint8Array;
  serverNonce: Uint8Array;
}

export function pairTranscript(f: PairFields): Bytes {
  return enc("torii-pair-v1", f.requestId, f.origin, f.deviceKey, f.daemonKey, f.clientNonce, f.serverNonce);
}

export type AuthRole = "daemon" | "device";

export interface AuthFields {
  connectionId: string;
  deviceId: string;
  origin: string;
  deviceKey: Uint8Array;
  daemonKey: Uint8Array;
  clientNonce: Uint8Array;
  serverNonce: Uint8Array;
}

// Distinct roles keep a daemon signature from being reflected back as a device signature.
export function authTranscript(role: AuthRole, f: AuthFields): Bytes {
  return enc(
    "torii-auth-v1",
    role,
    f.connectionId,
    f.deviceId,
    f.origin,
    f.deviceKey,
    f.daemonKey,
    f.clientNonce,
    f.serverNonce,
  );
}

export async function sha256(data: Bytes): Promise<Bytes> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", data));
}

/** The 6-digit code both sides show: uint32_be(SHA-256(transcript)[0:4]) mod 1e6, zero-padded. */
export async function pairingCode(transcript: Bytes): Promise<string> {
  const h = await sha256(transcript);
  const n = new DataView(h.buffer).getUint32(0, false) % 1_000_000;
  return n.toString().padStart(6, "0");
}

/** otpProof = HMAC-SHA256(key = UTF-8 of the one-time secret, msg = pairTranscript). */
export async function otpProof(otp: string, transcript: Bytes): Promise<Bytes> {
  const key = await crypto.subtle.importKey("raw", utf8.encode(otp), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, transcript));
}
