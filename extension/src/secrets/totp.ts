// One-time codes from a seed (TOTP, RFC 6238 over HOTP, RFC 4226): HMAC-SHA-1, 6 digits, 30 s
// steps, the seed in base32 as sites show it. The code is what a secret of kind "totp"
// substitutes; the seed never leaves the worker (SECURITY I-69).

const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 base32 (spaces, dashes and padding ignored, any case); throws on anything else. */
export function base32Decode(s: string): Uint8Array {
  const clean = s.replace(/[\s-]/g, "").replace(/=+$/, "").toUpperCase();
  if (clean.length === 0) throw new Error("the seed is empty");
  const out: number[] = [];
  let bits = 0;
  let acc = 0;
  for (const ch of clean) {
    const v = B32.indexOf(ch);
    if (v < 0) throw new Error("the seed is not base32 (letters A–Z and digits 2–7)");
    acc = (acc << 5) | v;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >>> bits) & 0xff);
    }
  }
  return new Uint8Array(out);
}

/** HOTP(key, counter): the truncated HMAC-SHA-1 as a zero-padded decimal string. */
export async function hotp(key: Uint8Array, counter: number, digits = 6): Promise<string> {
  const msg = new Uint8Array(8);
  let c = counter;
  for (let i = 7; i >= 0; i--) {
    msg[i] = c & 0xff;
    c = Math.floor(c / 256);
  }
  const k = await crypto.subtle.importKey("raw", key as BufferSource, { name: "HMAC", hash: "SHA-1" }, false, ["sign"]);
  const h = new Uint8Array(await crypto.subtle.sign("HMAC", k, msg));
  const off = (h[h.length - 1] as number) & 0x0f;
  const bin = (((h[off] as number) & 0x7f) << 24) | ((h[off + 1] as number) << 16) | ((h[off + 2] as number) << 8) | (h[off + 3] as number);
  return String(bin % 10 ** digits).padStart(digits, "0");
}

/** The code for time `nowMs` (default now). */
export function totp(key: Uint8Array, nowMs = Date.now(), digits = 6, stepS = 30): Promise<string> {
  return hotp(key, Math.floor(nowMs / 1000 / stepS), digits);
}
