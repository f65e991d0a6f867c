export { scriptedModel, ScriptError, type ScriptedModel, type ScriptedResponder, type ScriptedTurn } from './scripted-model.js';
export { recordTelemetry, type TelemetryRecording } from './record-telemetry.js';
export { assertLineage, delegationTree, LineageError } from './lineage.js';
export { TestKitError } from './test-kit-error.js';
export { checkLineage, type LineageProblem, type OtlpTraceDocument, type RunNode, type SpanRecord, type SpanSource } from '../trace/run-tree.js';
