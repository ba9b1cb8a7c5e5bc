import { describe, expect, it } from "vitest";
import { BACKOFF_CAP_MS, backoffDelay } from "../src/shared/backoff.js";

describe("backoffDelay", () => {
  it("doubles from 250 ms and caps at 3 s at full jitter draw", () => {
    const max = (n: number) => backoffDelay(n, () => 0.999999999);
    expect([0, 1, 2, 3, 4, 5, 50, 10_000].map(max)).toEqual([250, 500, 1000, 2000, 3000, 3000, 3000, 3000]);
  });
  it("jitter keeps each delay within [half, full] of the capped step", () => {
    expect(backoffDelay(0, () => 0)).toBe(125);
    expect(backoffDelay(3, () => 0)).toBe(1000);
    expect(backoffDelay(9, () => 0)).toBe(BACKOFF_CAP_MS / 2);
    for (let n = 0; n < 40; n++) {
      const d = backoffDelay(n);
      const step = Math.min(BACKOFF_CAP_MS, 250 * 2 ** n);
      expect(d).toBeGreaterThanOrEqual(step / 2);
      expect(d).toBeLessThanOrEqual(step);
    }
  });
  it("treats negative or fractional attempts as sane values", () => {
    expect(backoffDelay(-3, () => 0.999999)).toBe(250);
    expect(backoffDelay(1.7, () => 0.999999)).toBe(500);
  });
});
