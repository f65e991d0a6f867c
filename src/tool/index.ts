export { defineTool, type Tool, type ToolSpec } from './define-tool.js';
export type { ToolContext } from "./tool-context.js";
export type { Capability } from "./capability.js";
