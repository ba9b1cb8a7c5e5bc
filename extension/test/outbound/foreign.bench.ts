// What withholding foreign URLs (SECURITY I-79) costs a result, measured, not asserted:
//   npx vitest bench --run test/outbound/foreign.bench.ts
// The texts have the snapshot's shape (table.html's outline: one row per line, refs) with what
// real pages add: dates and fractions with slashes, a header naming the page's URL, and links.
import { bench, describe } from "vitest";
import { withholdInResult } from "../../src/outbound/foreign.js";
import { defaultPolicy, type Policy } from "../../src/policy/policy.js";

const P: Policy = { ...defaultPolicy(), rules: [{ pattern: "shop.example" }, { pattern: "*.cdn.example" }] };
const NAMES = ["Alice", "Bruno", "Chloé", "Dmitri", "Eve", "Fatima", "Gustav", "Hana", "Ivan", "Jules"];

/** A snapshot-like outline of `rows` rows; every `linkEvery`-th row shows a URL (half of them foreign). */
function outline(rows: number, linkEvery = 0): string {
  const lines = ['[tab 7] https://shop.example/orders?page=1 "Orders"', 'heading "Orders" [level=1]', 'table "Customers":', "  row: Name | Date | Share | City | Edit | Profile"];
  for (let i = 0; i < rows; i++) {
    const url = linkEvery && i % linkEvery === 0 ? (i % (2 * linkEvery) === 0 ? ` https://shop.example/u/${i}` : ` https://tracker.example/p?id=${i}&ref=x`) : "";
    lines.push(`  row: ${NAMES[i % 10]} | ${1 + (i % 28)}/${1 + (i % 12)}/2026 | ${i % 7}/8 | Paris | button "Edit" [a${2 * i + 1}] | link "Profile${url}" [a${2 * i + 2}]`);
  }
  return lines.join("\n");
}

function result(text: string) {
  return { content: [{ type: "text" as const, text }], structuredContent: { tabId: 7, url: "https://shop.example/orders?page=1", title: "Orders", text } };
}

const cases: [string, ReturnType<typeof result>][] = [
  ["100 rows, no links", result(outline(100))],
  ["1,000 rows, no links", result(outline(1_000))],
  ["1,000 rows, a URL every 10th row (100 URLs, 50 foreign)", result(outline(1_000, 10))],
  ["1,000 rows, a URL on every row (1,000 URLs, 500 foreign)", result(outline(1_000, 1))],
  ["10,000 rows, no links", result(outline(10_000))],
];

describe("withholdInResult on a snapshot-sized result (text + structuredContent.text)", () => {
  for (const [name, r] of cases) {
    bench(`${name}: ${r.content[0]?.text.length} chars`, () => {
      withholdInResult(r, P);
    });
  }
});
