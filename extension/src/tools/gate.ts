// The one gate every tool call passes before its handler (brief decision 2: the extension is the
// last line of defence). Today it refuses everything while the person has paused Torii; issue 4
// adds origin policy, act mode and approvals here.

import { toolError } from "./errors.js";
import type { AnyTool } from "./define.js";

export interface GateCall {
  tool: AnyTool;
  args: Record<string, unknown>;
}

export interface GateState {
  paused(): boolean | Promise<boolean>;
}

let state: GateState = { paused: () => false };

/** Wired by the service worker to the link's settings; tests inject their own. */
export function setGateState(s: GateState): void {
  state = s;
}

/** Throws a ToolError when the call must not run. */
export async function gate(call: GateCall): Promise<void> {
  if (await state.paused()) {
    throw toolError("paused", `${call.tool.name} refused: Torii is paused`);
  }
}
