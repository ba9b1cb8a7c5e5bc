import { describe, expect, it } from "vitest";
import { fromB64url, toB64url, toHex } from "../src/shared/b64.js";
import { sign, verify } from "../src/shared/ecdsa.js";
import { authTranscript, enc, otpProof, pairingCode, pairTranscript, sha256 } from "../src/shared/transcript.js";
import { importSigningKey, vectors } from "./vectors.js";

describe("enc", () => {
  it("length-prefixes each field big-endian", () => {
    expect(toHex(enc("ab", new Uint8Array([1, 2, 3]), ""))).toBe("00000002616200000003010203" + "00000000");
  });
  it("counts UTF-8 bytes, not UTF-16 units", () => {
    expect(toHex(enc("é"))).toBe("00000002c3a9");
  });
});

describe("pairing vectors", () => {
  expect(vectors.pairing.length).toBeGreaterThan(0);
  for (const v of vectors.pairing) {
    it(`${v.name}: transcript, hash, code and OTP proof`, async () => {
      const t = pairTranscript({
        requestId: v.requestId,
        origin: v.origin,
        deviceKey: fromB64url(v.deviceKeyB64),
        daemonKey: fromB64url(v.daemonKeyB64),
        clientNonce: fromB64url(v.clientNonceB64),
        serverNonce: fromB64url(v.serverNonceB64),
      });
      expect(toHex(t)).toBe(v.transcriptHex);
      expect(toHex(await sha256(t))).toBe(v.sha256Hex);
      expect(await pairingCode(t)).toBe(v.code);
      expect(v.code).toMatch(/^\d{6}$/);
      expect(toB64url(await otpProof(v.otp, t))).toBe(v.otpProofB64);
      // A different secret must give a different proof.
      expect(toB64url(await otpProof(v.otp + "x", t))).not.toBe(v.otpProofB64);
    });
  }
});

describe("auth vectors", () => {
  expect(vectors.auth.map((a) => a.role).sort()).toEqual(["daemon", "device"]);
  for (const v of vectors.auth) {
    const fields = {
      connectionId: v.connectionId,
      deviceId: v.deviceId,
      origin: v.origin,
      deviceKey: fromB64url(v.deviceKeyB64),
      daemonKey: fromB64url(v.daemonKeyB64),
      clientNonce: fromB64url(v.clientNonceB64),
      serverNonce: fromB64url(v.serverNonceB64),
    };
    it(`${v.name}: transcript byte for byte`, () => {
      expect(toHex(authTranscript(v.role, fields))).toBe(v.transcriptHex);
    });
    it(`${v.name}: the fixed signature verifies, the bad one does not`, async () => {
      const t = authTranscript(v.role, fields);
      const key = fromB64url(v.signerPublicKeyB64);
      expect(await verify(key, fromB64url(v.signatureB64), t)).toBe(true);
      expect(await verify(key, fromB64url(v.badSignatureB64), t)).toBe(false);
      // The other role's transcript must not accept this signature (no reflection).
      const other = authTranscript(v.role === "daemon" ? "device" : "daemon", fields);
      expect(await verify(key, fromB64url(v.signatureB64), other)).toBe(false);
    });
  }
});

describe("keys", () => {
  it("a signature made with the device JWK verifies against its raw key", async () => {
    const v = vectors.auth.find((a) => a.role === "device")!;
    const fields = {
      connectionId: v.connectionId,
      deviceId: v.deviceId,
      origin: v.origin,
      deviceKey: fromB64url(v.deviceKeyB64),
      daemonKey: fromB64url(v.daemonKeyB64),
      clientNonce: fromB64url(v.clientNonceB64),
      serverNonce: fromB64url(v.serverNonceB64),
    };
    const t = authTranscript("device", fields);
    const sig = await sign(await importSigningKey(vectors.keys.device), t);
    expect(sig.length).toBe(64);
    const raw = fromB64url(vectors.keys.device.rawB64);
    expect(toB64url(raw)).toBe(v.deviceKeyB64);
    expect(await verify(raw, sig, t)).toBe(true);
    expect(await verify(fromB64url(vectors.keys.daemon.rawB64), sig, t)).toBe(false);
  });
  it("rejects malformed keys and signatures without throwing", async () => {
    const t = enc("x");
    expect(await verify(new Uint8Array(65), new Uint8Array(64), t)).toBe(false);
    expect(await verify(fromB64url(vectors.keys.device.rawB64), new Uint8Array(10), t)).toBe(false);
  });
});
