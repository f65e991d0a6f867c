/**
 * The resource every span and metric of startTelemetry carries, built as the OpenTelemetry SDK's
 * own NodeSDK builds it: the default resource (`telemetry.sdk.*`), then what the resource detectors
 * find (`OTEL_RESOURCE_ATTRIBUTES` and `OTEL_SERVICE_NAME`, host, OS, process), chosen by
 * `OTEL_NODE_RESOURCE_DETECTORS` as NodeSDK reads it, then the service name.
 *
 * One departure: the process detector's command line (`process.command`, `process.command_args`,
 * `process.command_line`) is left out, since keys are passed on command lines and a resource goes
 * to every backend that receives a span.
 */
import { getStringFromEnv } from '@opentelemetry/core';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  osDetector,
  processDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
  type DetectedResource,
  type Resource,
  type ResourceDetector,
} from '@opentelemetry/resources';
import type { Logger } from '../observability/logger.js';

const COMMAND_LINE = ['process.command', 'process.command_args', 'process.command_line'];

const processWithoutCommandLine: ResourceDetector = {
  detect(config): DetectedResource {
    const detected = processDetector.detect(config);
    const attributes = { ...detected.attributes };
    for (const key of COMMAND_LINE) delete attributes[key];
    return { ...detected, attributes };
  },
};

const DETECTORS: Readonly<Record<string, ResourceDetector>> = {
  env: envDetector,
  host: hostDetector,
  os: osDetector,
  process: processWithoutCommandLine,
  serviceinstance: serviceInstanceIdDetector,
};

/** NodeSDK's default set: every detector but the service instance id, which is random per start. */
const DEFAULT_DETECTORS = ['env', 'host', 'os', 'process'];

export function telemetryResource(serviceName: string | undefined, logger: Logger): Resource {
  const detected = detectResources({ detectors: chosenDetectors(logger) });
  // The env detector read alone for the name: it is synchronous, unlike host and process.
  const fromEnv = detectResources({ detectors: [envDetector] }).attributes['service.name'];
  const name = serviceName ?? getStringFromEnv('OTEL_SERVICE_NAME') ?? (typeof fromEnv === 'string' ? fromEnv : 'symfonic');
  return defaultResource().merge(detected).merge(resourceFromAttributes({ 'service.name': name }));
}

/** OTEL_NODE_RESOURCE_DETECTORS: a comma-separated list of names, `all`, or `none`. */
function chosenDetectors(logger: Logger): ResourceDetector[] {
  const setting = getStringFromEnv('OTEL_NODE_RESOURCE_DETECTORS');
  if (setting === undefined) return DEFAULT_DETECTORS.map((n) => DETECTORS[n]!);
  const names = setting.split(',').map((n) => n.trim().toLowerCase()).filter((n) => n !== '');
  if (names.includes('none')) return [];
  if (names.includes('all')) return Object.values(DETECTORS);
  const unknown = names.filter((n) => DETECTORS[n] === undefined);
  if (unknown.length > 0) {
    logger.warn(
      { unknown, known: Object.keys(DETECTORS) },
      `OTEL_NODE_RESOURCE_DETECTORS names detectors startTelemetry does not have (${unknown.join(', ')}); they are skipped`,
    );
  }
  return names.flatMap((n) => (DETECTORS[n] === undefined ? [] : [DETECTORS[n]]));
}
