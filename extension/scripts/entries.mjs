// The extension's bundles: esbuild's entry points (build.mjs), and knip's (knip.config.ts), so a
// module no bundle reaches shows as dead code.
export const entryPoints = {
  background: "src/background/index.ts",
  popup: "src/popup/popup.ts",
  "popup-policy": "src/popup/policy.ts",
  "popup-sessions": "src/popup/sessions.ts",
  connect: "src/connect/connect.ts",
  page: "src/page/index.ts",
  guard: "src/guard/index.ts",
  sidepanel: "src/sidepanel/main.ts",
  options: "src/options/options.ts",
  "options-proxy": "src/options/proxy.ts",
  "popup-proxy": "src/popup/proxy.ts",
  approval: "src/approval/approval.ts",
};
