/**
 * The A2A SDK and the W3C propagators, loaded on first use: `import 'symfonic'` must not pay for
 * a protocol stack a user never serves or calls.
 */
import type { TextMapPropagator } from '@opentelemetry/api';

type ServerModule = typeof import('@a2a-js/sdk/server');
type ClientModule = typeof import('@a2a-js/sdk/client');
type CoreModule = typeof import('@a2a-js/sdk');
type LegacyServerModule = typeof import('@a2a-js/sdk/compat/v0_3/server');
type LegacyModule = typeof import('@a2a-js/sdk/compat/v0_3');
type ErrorsModule = typeof import('@a2a-js/sdk/errors');

export type CoreSdk = CoreModule;

export interface ServerSdk {
  core: CoreModule;
  server: ServerModule;
  legacy: LegacyModule;
  legacyServer: LegacyServerModule;
  errors: ErrorsModule;
}

let server: Promise<ServerSdk> | undefined;
let client: Promise<ClientModule> | undefined;
let core: Promise<CoreModule> | undefined;
let propagator: Promise<TextMapPropagator> | undefined;

export function loadServerSdk(): Promise<ServerSdk> {
  return (server ??= Promise.all([
    import('@a2a-js/sdk'),
    import('@a2a-js/sdk/server'),
    import('@a2a-js/sdk/compat/v0_3'),
    import('@a2a-js/sdk/compat/v0_3/server'),
    import('@a2a-js/sdk/errors'),
  ]).then(([core, srv, legacy, legacyServer, errors]) => ({ core, server: srv, legacy, legacyServer, errors })));
}

export function loadClientSdk(): Promise<ClientModule> {
  return (client ??= import('@a2a-js/sdk/client'));
}

export function loadCoreSdk(): Promise<CoreModule> {
  return (core ??= import('@a2a-js/sdk'));
}

/**
 * traceparent/tracestate and baggage, explicitly: the global propagator is a no-op until an SDK
 * registers one, and a remote hop must carry lineage whether or not the process traces.
 */
export function loadPropagator(): Promise<TextMapPropagator> {
  return (propagator ??= import('@opentelemetry/core').then(
    (core) => new core.CompositePropagator({ propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()] }),
  ));
}
