export { startTelemetry, type TelemetryHandle, type TelemetryOptions } from './start-telemetry.js';
